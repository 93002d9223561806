//===- SplatPhisTest.cpp - phis of splats as splats of phis ---------------===//
//
// scalarizeSplatPhis on hand-written LLVM IR in the shape GVN leaves an
// attention key loop's bias in: which vector phis it rewrites (all incoming
// values splats of one-element vectors, also through a chain of joins) and
// which it leaves (any incoming value not such a splat).
//
//===----------------------------------------------------------------------===//

#include "LlvmIrText.h"
#include "tessel/Target/Hsaco.h"

#include "llvm/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace llvm;

namespace {

std::unique_ptr<Module> parse(LLVMContext &context, StringRef text) {
  return tessel::testing::parseLlvmIr(context, text, "SplatPhisTest");
}

std::string print(const Module &module) {
  return tessel::testing::printLlvmIr(module);
}

// Two joins after two rarely taken branches: the first phi takes a splat
// from each side, the second a splat and the first phi.
constexpr const char *kChain = R"(
define void @f(<1 x float> %m, <1 x float> %n, <1 x float> %o, i1 %c1, i1 %c2, <16 x float> %s, ptr %out) {
entry:
  %a = shufflevector <1 x float> %m, <1 x float> poison, <16 x i32> zeroinitializer
  br i1 %c1, label %rare1, label %join1
rare1:
  %b = shufflevector <1 x float> %n, <1 x float> poison, <16 x i32> zeroinitializer
  br label %join1
join1:
  %p = phi <16 x float> [ %b, %rare1 ], [ %a, %entry ]
  %x = fadd <16 x float> %s, %p
  br i1 %c2, label %rare2, label %join2
rare2:
  %d = shufflevector <1 x float> %o, <1 x float> poison, <16 x i32> zeroinitializer
  br label %join2
join2:
  %q = phi <16 x float> [ %d, %rare2 ], [ %p, %join1 ]
  %y = fadd <16 x float> %x, %q
  store <16 x float> %y, ptr %out
  ret void
}
)";

TEST(SplatPhis, RewritesAChainOfJoins) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, kChain);
  ASSERT_TRUE(module);
  tessel::scalarizeSplatPhis(*module);
  ASSERT_FALSE(verifyModule(*module, &errs()));
  std::string text = print(*module);
  // No vector phi is left; each join holds a phi of the one-element
  // sources and splats it, and the splats the phis took are gone.
  EXPECT_EQ(text.find("phi <16 x float>"), std::string::npos) << text;
  EXPECT_EQ(StringRef(text).count("phi <1 x float>"), 2u) << text;
  EXPECT_NE(text.find("phi <1 x float> [ %n, %rare1 ], [ %m, %entry ]"),
            std::string::npos)
      << text;
  EXPECT_EQ(StringRef(text).count("shufflevector <1 x float>"), 2u) << text;
}

// A phi with an incoming value that is no splat (or a splat of a lane of a
// wider vector) stays a vector phi.
constexpr const char *kMixed = R"(
define void @f(<1 x float> %m, <4 x float> %w, <16 x float> %v, i1 %c, ptr %out) {
entry:
  %a = shufflevector <1 x float> %m, <1 x float> poison, <16 x i32> zeroinitializer
  %b = shufflevector <4 x float> %w, <4 x float> poison, <16 x i32> zeroinitializer
  br i1 %c, label %other, label %join
other:
  br label %join
join:
  %p = phi <16 x float> [ %v, %other ], [ %a, %entry ]
  %q = phi <16 x float> [ %b, %other ], [ %a, %entry ]
  %y = fadd <16 x float> %p, %q
  store <16 x float> %y, ptr %out
  ret void
}
)";

TEST(SplatPhis, KeepsPhisOfOtherVectors) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, kMixed);
  ASSERT_TRUE(module);
  std::string before = print(*module);
  tessel::scalarizeSplatPhis(*module);
  EXPECT_EQ(print(*module), before);
}

} // namespace
