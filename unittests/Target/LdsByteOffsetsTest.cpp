//===- LdsByteOffsetsTest.cpp - swizzled LDS offsets XORed as bytes -------===//
//
// xorLdsOffsetsInBytes on hand-written LLVM IR: which accesses it rewrites,
// and that every rewritten address equals the original one for offsets
// over the whole 32-bit range (evaluated on constants by LLVM's folder).
//
//===----------------------------------------------------------------------===//

#include "LlvmIrText.h"
#include "tessel/Target/Hsaco.h"

#include "llvm/Analysis/ConstantFolding.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace llvm;

namespace {

constexpr const char *kLayout =
    "target datalayout = \"e-p:64:64-p1:64:64-p3:32:32-i64:64-n32:64\"\n";

std::unique_ptr<Module> parse(LLVMContext &context, StringRef body) {
  return tessel::testing::parseLlvmIr(context, (Twine(kLayout) + body).str(),
                                      "LdsByteOffsetsTest");
}

std::string print(const Module &module) {
  return tessel::testing::printLlvmIr(module);
}

// Three f16 reads from one offset, two of them swizzled: each becomes a
// byte GEP off one shifted offset, the XOR masks doubled.
constexpr const char *kThreeReads = R"(
@lds = internal addrspace(3) global [8192 x half] undef
define void @f(i32 %x, ptr %out) {
  %p0 = getelementptr half, ptr addrspace(3) @lds, i32 %x
  %a = load <8 x half>, ptr addrspace(3) %p0, align 16
  %x16 = xor i32 %x, 16
  %p1 = getelementptr half, ptr addrspace(3) @lds, i32 %x16
  %b = load <8 x half>, ptr addrspace(3) %p1, align 16
  %x48 = xor i32 %x, 48
  %p2 = getelementptr half, ptr addrspace(3) @lds, i32 %x48
  %c = load <8 x half>, ptr addrspace(3) %p2, align 16
  %ab = fadd <8 x half> %a, %b
  %abc = fadd <8 x half> %ab, %c
  store <8 x half> %abc, ptr %out
  ret void
}
)";

TEST(LdsByteOffsets, SharesOneShiftedOffset) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, kThreeReads);
  ASSERT_TRUE(module);
  tessel::xorLdsOffsetsInBytes(*module);
  std::string text = print(*module);
  EXPECT_NE(text.find("%x.bytes = shl i32 %x, 1"), std::string::npos) << text;
  EXPECT_NE(text.find("xor i32 %x.bytes, 32"), std::string::npos) << text;
  EXPECT_NE(text.find("xor i32 %x.bytes, 96"), std::string::npos) << text;
  EXPECT_EQ(text.find("getelementptr half"), std::string::npos) << text;
  EXPECT_EQ(StringRef(text).count("getelementptr i8, ptr addrspace(3) @lds"),
            3u)
      << text;
}

// A lone access, accesses without a swizzle, byte elements and global
// memory are left as they are.
TEST(LdsByteOffsets, LeavesOtherAccesses) {
  LLVMContext context;
  std::unique_ptr<Module> module = parse(context, R"(
@lds = internal addrspace(3) global [8192 x half] undef
@bytes = internal addrspace(3) global [8192 x i8] undef
define void @f(i32 %x, i32 %y, ptr addrspace(1) %g, ptr %out) {
  %y16 = xor i32 %y, 16
  %p0 = getelementptr half, ptr addrspace(3) @lds, i32 %y16
  %a = load half, ptr addrspace(3) %p0
  %p1 = getelementptr half, ptr addrspace(3) @lds, i32 %x
  %b = load half, ptr addrspace(3) %p1
  %p2 = getelementptr half, ptr addrspace(3) @lds, i32 %x
  %c = load half, ptr addrspace(3) %p2
  %x16 = xor i32 %x, 16
  %p3 = getelementptr i8, ptr addrspace(3) @bytes, i32 %x16
  %d = load i8, ptr addrspace(3) %p3
  %p4 = getelementptr i8, ptr addrspace(3) @bytes, i32 %x
  %e = load i8, ptr addrspace(3) %p4
  %x64 = zext i32 %x16 to i64
  %p5 = getelementptr half, ptr addrspace(1) %g, i64 %x64
  %f = load half, ptr addrspace(1) %p5
  %p6 = getelementptr half, ptr addrspace(1) %g, i64 0
  %h = load half, ptr addrspace(1) %p6
  store half %a, ptr %out
  store half %b, ptr %out
  store half %c, ptr %out
  store i8 %d, ptr %out
  store i8 %e, ptr %out
  store half %f, ptr %out
  store half %h, ptr %out
  ret void
}
)");
  ASSERT_TRUE(module);
  std::string before = print(*module);
  tessel::xorLdsOffsetsInBytes(*module);
  EXPECT_EQ(print(*module), before);
}

// The rewrite is exact for any offset: (x ^ c) * 2 == (x * 2) ^ (c * 2)
// modulo 2^32, offsets past 2^31 included. Each rewritten GEP, with %x a
// constant, folds to the same byte offset as the original.
TEST(LdsByteOffsets, SameAddresses) {
  for (uint32_t x : {0u, 5u, 0x7fu, 0x1234u, 0x7fffffffu, 0x80000001u,
                     0xfffffff0u, 0xffffffffu}) {
    LLVMContext context;
    std::unique_ptr<Module> module = parse(context, kThreeReads);
    ASSERT_TRUE(module);
    tessel::xorLdsOffsetsInBytes(*module);
    Function *f = module->getFunction("f");
    Argument *offset = f->getArg(0);
    offset->replaceAllUsesWith(ConstantInt::get(Type::getInt32Ty(context), x));
    const DataLayout &layout = module->getDataLayout();
    for (Instruction &instruction :
         llvm::make_early_inc_range(f->getEntryBlock()))
      if (Constant *folded = ConstantFoldInstruction(&instruction, layout)) {
        instruction.replaceAllUsesWith(folded);
        instruction.eraseFromParent();
      }
    std::vector<uint32_t> bytes;
    for (Instruction &instruction : f->getEntryBlock()) {
      auto *load = dyn_cast<LoadInst>(&instruction);
      if (!load)
        continue;
      Value *pointer = load->getPointerOperand();
      if (pointer == module->getNamedGlobal("lds")) { // offset 0 folded away
        bytes.push_back(0);
        continue;
      }
      auto *gep = dyn_cast<GEPOperator>(pointer);
      ASSERT_TRUE(gep) << print(*module);
      auto *index = dyn_cast<ConstantInt>(gep->getOperand(1));
      ASSERT_TRUE(index) << print(*module);
      EXPECT_EQ(gep->getSourceElementType(), Type::getInt8Ty(context));
      bytes.push_back(uint32_t(index->getZExtValue()));
    }
    EXPECT_EQ(bytes,
              (std::vector<uint32_t>{x * 2, (x ^ 16u) * 2, (x ^ 48u) * 2}));
  }
}

} // namespace
