//===- DeviceTest.cpp - Kernarg packing and the HIP device ----------------===//

#include "tessel/Runtime/Device.h"
#include "tessel/Runtime/Compiler.h"

#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace tessel;

namespace {

uint64_t readU64(const std::vector<char> &segment, uint64_t offset) {
  uint64_t value = 0;
  std::memcpy(&value, &segment[offset], 8);
  return value;
}

/// The metadata of a real compiled matmul kernel (100x70x50, f16).
const KernelMetadata &matmulMetadata() {
  static const std::shared_ptr<const CompiledModule> module = [] {
    Compiler compiler(CacheOptions{true, ""});
    auto compiled = compiler.compile(
        "func.func @matmul(%a: memref<100x50xf16>, %b: memref<50x70xf16>, "
        "%c: memref<100x70xf16>) {\n"
        "  tessel.matmul ins(%a, %b : memref<100x50xf16>, memref<50x70xf16>) "
        "outs(%c : memref<100x70xf16>)\n  return\n}\n");
    EXPECT_TRUE(bool(compiled));
    return compiled ? *compiled : nullptr;
  }();
  return module->lookup("matmul")->metadata;
}

TEST(DeviceTest, PacksMemrefsAsTheMetadataSays) {
  const KernelMetadata &kernel = matmulMetadata();
  alignas(8) char a[8], b[8], c[8];
  auto segment = packKernelArguments(
      kernel, {KernelArgumentValue::memref(a, 8, {100, 50}),
               KernelArgumentValue::memref(b, 8, {50, 70}),
               KernelArgumentValue::memref(c, 8, {100, 70})});
  ASSERT_TRUE(bool(segment)) << llvm::toString(segment.takeError());
  ASSERT_EQ(segment->size(), kernel.kernargSegmentSize);
  // Each rank-2 memref: allocated, aligned, offset, 2 sizes, 2 strides.
  const std::vector<KernelArgument> &args = kernel.args;
  auto at = [&](unsigned piece) {
    return readU64(*segment, args[piece].offset);
  };
  EXPECT_EQ(at(0), uint64_t(reinterpret_cast<uintptr_t>(a)));
  EXPECT_EQ(at(1), uint64_t(reinterpret_cast<uintptr_t>(a)));
  EXPECT_EQ(at(2), 0u);
  EXPECT_EQ(at(3), 100u);
  EXPECT_EQ(at(4), 50u);
  EXPECT_EQ(at(5), 50u);
  EXPECT_EQ(at(6), 1u);
  EXPECT_EQ(at(7), uint64_t(reinterpret_cast<uintptr_t>(b)));
  EXPECT_EQ(at(10), 50u);
  EXPECT_EQ(at(12), 70u);
  EXPECT_EQ(at(14), uint64_t(reinterpret_cast<uintptr_t>(c)));
  EXPECT_EQ(at(20), 1u);
}

TEST(DeviceTest, RejectsArgumentsThatDoNotMatch) {
  const KernelMetadata &kernel = matmulMetadata();
  alignas(8) char a[8];
  auto missing = packKernelArguments(
      kernel, {KernelArgumentValue::memref(a, 8, {100, 50}),
               KernelArgumentValue::memref(a, 8, {50, 70})});
  ASSERT_FALSE(bool(missing));
  EXPECT_NE(llvm::toString(missing.takeError()).find("expand to 14"),
            std::string::npos);
  // A scalar where the metadata has a pointer (same piece count: 21).
  std::vector<KernelArgumentValue> wrong(21, KernelArgumentValue::scalar64(0));
  auto scalar = packKernelArguments(kernel, wrong);
  ASSERT_FALSE(bool(scalar));
  EXPECT_NE(llvm::toString(scalar.takeError()).find("argument 0"),
            std::string::npos);
}

TEST(DeviceTest, OpenSaysInOneLineWhyThereIsNoGpu) {
  auto device = HipDevice::open();
  if (device)
    GTEST_SKIP() << "a HIP device is present";
  std::string message = llvm::toString(device.takeError());
  EXPECT_FALSE(message.empty());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

} // namespace

namespace {

TEST(EmulatorDeviceTest, RunsACompiledMatmulAgainstTheHostReference) {
  const int64_t m = 37, n = 29, k = 19;
  std::string ir = llvm::formatv(
      "func.func @mm(%a: memref<{0}x{2}xf32>, %b: memref<{2}x{1}xf32>, "
      "%c: memref<{0}x{1}xf32>) {{\n  tessel.matmul ins(%a, %b : "
      "memref<{0}x{2}xf32>, memref<{2}x{1}xf32>) outs(%c : "
      "memref<{0}x{1}xf32>)\n  return\n}\n",
      m, n, k);
  Compiler compiler(CacheOptions{true, ""});
  auto compiled = compiler.compile(ir);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  auto device = EmulatorDevice::create(**compiled);
  ASSERT_TRUE(bool(device)) << llvm::toString(device.takeError());

  std::vector<float> a(m * k), b(k * n), c(m * n, -1.0f);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float((i * 7) % 13) / 8 - 0.75f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float((i * 5) % 11) / 4 - 1.25f;
  llvm::Error error = runProblemOnEmulator(
      **device, **compiled, "mm", ProblemSizes{m, n, 0, 0, 0},
      {KernelArgumentValue::memref(a.data(), a.size() * 4, {m, k}),
       KernelArgumentValue::memref(b.data(), b.size() * 4, {k, n}),
       KernelArgumentValue::memref(c.data(), c.size() * 4, {m, n})});
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double expected = 0;
      for (int64_t p = 0; p < k; ++p)
        expected += double(a[i * k + p]) * b[p * n + j];
      // Inputs are exact in f32 and small: the sum is exact too.
      ASSERT_EQ(c[i * n + j], float(expected)) << "at " << i << ", " << j;
    }

  // A buffer smaller than its shape is an out-of-bounds error, not a crash.
  llvm::Error bounds = runProblemOnEmulator(
      **device, **compiled, "mm", ProblemSizes{m, n, 0, 0, 0},
      {KernelArgumentValue::memref(a.data(), a.size() * 4, {m, k}),
       KernelArgumentValue::memref(b.data(), b.size() * 4, {k, n}),
       KernelArgumentValue::memref(c.data(), 64, {m, n})});
  ASSERT_TRUE(bool(bounds));
  EXPECT_NE(llvm::toString(std::move(bounds)).find("argument 2"),
            std::string::npos);
}

/// A dynamic-K f32 matmul with B stored column-major (`strided<[1, ?]>`):
/// the stride the layout leaves dynamic must come from K, not from N.
TEST(EmulatorDeviceTest, TransposedOperandWithDynamicLeadingStride) {
  const int64_t m = 33, n = 24, k = 21;
  Compiler compiler(CacheOptions{true, ""});
  MatmulProblem problem;
  problem.name = "mm";
  problem.m = m;
  problem.n = n;
  problem.k = 64;
  problem.aType = "f32";
  problem.transposeB = true;
  problem.dynamic = {"k"};
  auto compiled = compiler.compile(problem);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  auto device = EmulatorDevice::create(**compiled);
  ASSERT_TRUE(bool(device)) << llvm::toString(device.takeError());
  std::vector<float> a(m * k), bColumnMajor(k * n), c(m * n, -1.0f);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float((i * 7) % 13) / 8 - 0.75f;
  for (size_t i = 0; i < bColumnMajor.size(); ++i)
    bColumnMajor[i] = float((i * 5) % 11) / 4 - 1.25f;
  llvm::Error error = runProblemOnEmulator(
      **device, **compiled, "mm", ProblemSizes{},
      {KernelArgumentValue::memref(a.data(), a.size() * 4, {m, k}),
       KernelArgumentValue::memref(bColumnMajor.data(), bColumnMajor.size() * 4,
                                   {k, n}),
       KernelArgumentValue::memref(c.data(), c.size() * 4, {m, n})});
  ASSERT_FALSE(bool(error)) << llvm::toString(std::move(error));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double expected = 0;
      for (int64_t p = 0; p < k; ++p)
        expected += double(a[i * k + p]) * bColumnMajor[p + j * k];
      ASSERT_EQ(c[i * n + j], float(expected)) << "at " << i << ", " << j;
    }
}

/// Every way arrays can disagree with the kernel or with each other is an
/// error naming the argument, found before anything runs.
TEST(EmulatorDeviceTest, ArgumentsAreCheckedBeforeLaunch) {
  Compiler compiler(CacheOptions{true, ""});
  MatmulProblem problem;
  problem.name = "mm";
  problem.m = 64;
  problem.n = 32;
  problem.k = 16;
  problem.aType = "f32";
  problem.dynamic = {"m", "k"};
  auto compiled = compiler.compile(problem);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  auto device = EmulatorDevice::create(**compiled);
  ASSERT_TRUE(bool(device));
  std::vector<float> a(64 * 16, 1.0f), b(16 * 32, 1.0f), c(64 * 32, -1.0f);
  auto run = [&](std::vector<KernelArgumentValue> arguments,
                 ProblemSizes sizes = {}) {
    return llvm::toString(
        runProblemOnEmulator(**device, **compiled, "mm", sizes, arguments));
  };
  auto A = [&](int64_t rows, int64_t columns, size_t bytes = 0) {
    return KernelArgumentValue::memref(a.data(), bytes ? bytes : a.size() * 4,
                                       {rows, columns});
  };
  auto B = [&](int64_t rows) {
    return KernelArgumentValue::memref(b.data(), b.size() * 4, {rows, 32});
  };
  auto C = [&](int64_t rows) {
    return KernelArgumentValue::memref(c.data(), c.size() * 4, {rows, 32});
  };
  // K differs between A and B.
  EXPECT_NE(run({A(64, 16), B(12), C(64)}).find("argument 1 has k = 12"),
            std::string::npos);
  // M differs between A and C.
  EXPECT_NE(run({A(40, 16), B(16), C(64)}).find("m = 64"), std::string::npos);
  // A static size that is not the compiled one.
  EXPECT_NE(run({A(64, 16), B(16),
                 KernelArgumentValue::memref(c.data(), c.size() * 4, {64, 31})})
                .find("compiled for 32"),
            std::string::npos);
  // A buffer smaller than its shape.
  EXPECT_NE(run({A(64, 16, 100), B(16), C(64)}).find("buffer has 100"),
            std::string::npos);
  // Negative sizes, wrong rank, a scalar for an array.
  EXPECT_NE(run({A(-1, 16), B(16), C(-1)}).find("negative"), std::string::npos);
  EXPECT_NE(run({KernelArgumentValue::memref(a.data(), a.size() * 4, {64}),
                 B(16), C(64)})
                .find("expected rank 2"),
            std::string::npos);
  EXPECT_NE(run({KernelArgumentValue::scalar32(0), B(16), C(64)})
                .find("got a scalar"),
            std::string::npos);
  // Requested sizes must agree with the arrays.
  EXPECT_NE(run({A(64, 16), B(16), C(64)}, ProblemSizes{63, 32, 0, 0, 0})
                .find("requested"),
            std::string::npos);
  EXPECT_EQ(run({A(64, 16), B(16), C(64)}, ProblemSizes{64, 32, 0, 0, 0}), "");
  // Zero rows: nothing to compute, nothing launched, nothing written.
  std::fill(c.begin(), c.end(), -1.0f);
  EXPECT_EQ(run({A(0, 16), B(16), C(0)}), "");
  EXPECT_EQ(c[0], -1.0f);
}

} // namespace
