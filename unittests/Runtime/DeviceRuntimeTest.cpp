//===- DeviceRuntimeTest.cpp - Device memory, streams, events -------------===//
//
// The emulated device runtime: the same program a GPU runs, with device
// memory that is checked and streams that really run asynchronously.
//
//===----------------------------------------------------------------------===//

#include "tessel/Runtime/DeviceRuntime.h"
#include "tessel/Problems/Problems.h"
#include "tessel/Runtime/Compiler.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace tessel;

namespace {

std::shared_ptr<DeviceRuntime> makeEmulated() {
  auto runtime = DeviceRuntime::createEmulated();
  EXPECT_TRUE(bool(runtime));
  return runtime ? *runtime : nullptr;
}

std::string errorText(llvm::Error error) {
  return error ? llvm::toString(std::move(error)) : "";
}

TEST(EmulatedRuntimeTest, MemoryRoundTripAndFill) {
  std::shared_ptr<DeviceRuntime> runtime = makeEmulated();
  ASSERT_EQ(runtime->getKind(), DeviceKind::Emulator);
  EXPECT_EQ(getDeviceKindName(runtime->getKind()), "emulator");
  auto buffer = runtime->allocate(100);
  ASSERT_TRUE(bool(buffer));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*buffer) % 256, 0u);
  // Fresh memory is 0xff (NaN in every float type), not zeros.
  std::vector<uint8_t> host(100, 0);
  ASSERT_EQ(errorText(runtime->copy(host.data(), *buffer, 100,
                                    CopyDirection::DeviceToHost)),
            "");
  EXPECT_EQ(host[0], 0xff);
  EXPECT_EQ(host[99], 0xff);
  std::vector<uint8_t> pattern(100);
  for (size_t i = 0; i < pattern.size(); ++i)
    pattern[i] = uint8_t(i * 3);
  ASSERT_EQ(errorText(runtime->copy(*buffer, pattern.data(), 100,
                                    CopyDirection::HostToDevice)),
            "");
  ASSERT_EQ(errorText(runtime->fill(static_cast<char *>(*buffer) + 90, 7, 10)),
            "");
  ASSERT_EQ(errorText(runtime->copy(host.data(), *buffer, 100,
                                    CopyDirection::DeviceToHost)),
            "");
  EXPECT_EQ(host[10], 30);
  EXPECT_EQ(host[89], uint8_t(89 * 3));
  EXPECT_EQ(host[90], 7);
  EXPECT_EQ(host[99], 7);
  EXPECT_EQ(errorText(runtime->release(*buffer)), "");
}

TEST(EmulatedRuntimeTest, MisusedMemoryIsAnError) {
  std::shared_ptr<DeviceRuntime> runtime = makeEmulated();
  auto buffer = runtime->allocate(64);
  ASSERT_TRUE(bool(buffer));
  std::vector<char> host(128);
  // A host pointer where device memory belongs.
  EXPECT_NE(errorText(runtime->copy(host.data(), host.data(), 8,
                                    CopyDirection::DeviceToHost))
                .find("copy source: 8 bytes at"),
            std::string::npos);
  // Past the end of the allocation.
  EXPECT_NE(errorText(runtime->copy(*buffer, host.data(), 65,
                                    CopyDirection::HostToDevice))
                .find("not device memory"),
            std::string::npos);
  EXPECT_NE(errorText(runtime->fill(static_cast<char *>(*buffer) + 60, 0, 8))
                .find("fill destination"),
            std::string::npos);
  EXPECT_EQ(errorText(runtime->release(*buffer)), "");
  // Released twice; used after release.
  EXPECT_NE(errorText(runtime->release(*buffer)).find("not an allocation"),
            std::string::npos);
  EXPECT_NE(errorText(runtime->copy(host.data(), *buffer, 8,
                                    CopyDirection::DeviceToHost))
                .find("not device memory"),
            std::string::npos);
  EXPECT_EQ(errorText(runtime->release(nullptr)), "");
  auto wrapped = runtime->wrapStream(nullptr);
  EXPECT_FALSE(bool(wrapped));
  EXPECT_NE(errorText(wrapped.takeError()).find("no native streams"),
            std::string::npos);
}

/// An f32 64x32x128 matmul "mm" on 32x32x32 tiles; `partition` ends the
/// config (", splits = 2", ", stream_k = 3": each launch then also needs
/// zeroed workspaces from the stream).
std::shared_ptr<const CompiledModule>
compilePartitionedMatmul(llvm::StringRef partition) {
  Compiler compiler(CacheOptions{true, ""});
  MatmulProblem problem;
  problem.name = "mm";
  problem.m = 64;
  problem.n = 32;
  problem.k = 128;
  problem.aType = "f32";
  problem.config = ("#tessel.config<tile = [32, 32, 32], waves = [1, 1], "
                    "stages = 1, instr = \"v_mfma_f32_32x32x2_f32\"" +
                    partition + ">")
                       .str();
  auto compiled = compiler.compile(problem);
  EXPECT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  return compiled ? *compiled : nullptr;
}

/// The matmul split along K in two.
std::shared_ptr<const CompiledModule> compileSplitMatmul() {
  return compilePartitionedMatmul(", splits = 2");
}

/// Device arrays of one matmul and its host reference.
struct MatmulArrays {
  int64_t m, n = 32, k = 128;
  std::vector<float> a, b, expected;
  void *deviceA = nullptr, *deviceB = nullptr, *deviceC = nullptr;

  MatmulArrays(DeviceRuntime &runtime, int64_t m, int seed) : m(m) {
    a.resize(m * k);
    b.resize(k * n);
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = float((i * 7 + seed) % 13) / 8 - 0.75f;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = float((i * 5 + seed) % 11) / 4 - 1.25f;
    expected.assign(m * n, 0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(a[i * k + p]) * b[p * n + j];
        expected[i * n + j] = float(sum);
      }
    deviceA = *runtime.allocate(a.size() * 4);
    deviceB = *runtime.allocate(b.size() * 4);
    deviceC = *runtime.allocate(expected.size() * 4);
  }
  /// Copies A and B to the device (on `stream`, or synchronously).
  std::string upload(DeviceRuntime &runtime, Stream *stream = nullptr) const {
    std::string error = errorText(runtime.copy(
        deviceA, a.data(), a.size() * 4, CopyDirection::HostToDevice, stream));
    if (error.empty())
      error = errorText(runtime.copy(deviceB, b.data(), b.size() * 4,
                                     CopyDirection::HostToDevice, stream));
    return error;
  }
  std::vector<KernelArgumentValue> arguments() const {
    return {KernelArgumentValue::memref(deviceA, a.size() * 4, {m, k}),
            KernelArgumentValue::memref(deviceB, b.size() * 4, {k, n}),
            KernelArgumentValue::memref(deviceC, expected.size() * 4, {m, n})};
  }
};

void expectNear(const std::vector<float> &actual,
                const std::vector<float> &expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], 1e-3 * (1 + std::abs(expected[i])))
        << "at " << i;
}

/// Two problems on two streams, the second stream's read-back ordered after
/// the first stream's launch by an event; nothing waits on the host until
/// the end.
TEST(EmulatedRuntimeTest, LaunchesOnStreamsOrderedByEvents) {
  std::shared_ptr<const CompiledModule> module = compileSplitMatmul();
  ASSERT_TRUE(module);
  std::shared_ptr<DeviceRuntime> runtime = makeEmulated();
  MatmulArrays first(*runtime, 64, 1), second(*runtime, 64, 2);
  auto producer = runtime->createStream();
  auto consumer = runtime->createStream();
  auto done = runtime->createEvent();
  auto start = runtime->createEvent();
  ASSERT_TRUE(producer && consumer && done && start);
  Stream &p = **producer, &c = **consumer;
  for (MatmulArrays *arrays : {&first, &second}) {
    ASSERT_EQ(errorText(runtime->copy(arrays->deviceA, arrays->a.data(),
                                      arrays->a.size() * 4,
                                      CopyDirection::HostToDevice, &p)),
              "");
    ASSERT_EQ(errorText(runtime->copy(arrays->deviceB, arrays->b.data(),
                                      arrays->b.size() * 4,
                                      CopyDirection::HostToDevice, &p)),
              "");
  }
  ASSERT_EQ(errorText((*start)->record(p)), "");
  ASSERT_EQ(errorText(runtime->launch(module, "mm", ProblemSizes{},
                                      first.arguments(), &p)),
            "");
  ASSERT_EQ(errorText(runtime->launch(module, "mm", ProblemSizes{},
                                      second.arguments(), &p)),
            "");
  ASSERT_EQ(errorText((*done)->record(p)), "");
  ASSERT_EQ(errorText(c.waitFor(**done)), "");
  std::vector<float> firstC(first.expected.size()),
      secondC(second.expected.size());
  ASSERT_EQ(
      errorText(runtime->copy(firstC.data(), first.deviceC, firstC.size() * 4,
                              CopyDirection::DeviceToHost, &c)),
      "");
  ASSERT_EQ(errorText(runtime->copy(secondC.data(), second.deviceC,
                                    secondC.size() * 4,
                                    CopyDirection::DeviceToHost, &c)),
            "");
  ASSERT_EQ(errorText(c.synchronize()), "");
  expectNear(firstC, first.expected);
  expectNear(secondC, second.expected);
  auto complete = (*done)->isComplete();
  ASSERT_TRUE(bool(complete));
  EXPECT_TRUE(*complete);
  auto milliseconds = (*done)->millisecondsSince(**start);
  ASSERT_TRUE(bool(milliseconds));
  EXPECT_GT(*milliseconds, 0.0f); // two emulated launches take time
}

/// A stream-K matmul (8 K steps of 2 tiles over 3 workgroups: every tile
/// cut) launched twice on one stream: each launch takes its workspaces
/// from the stream, and the second counts from the arrival counters the
/// first left at zero.
TEST(EmulatedRuntimeTest, StreamKLaunchesAgainOnItsWorkspaces) {
  std::shared_ptr<const CompiledModule> compiled =
      compilePartitionedMatmul(", stream_k = 3");
  ASSERT_TRUE(compiled);
  const CompiledKernel *kernel = compiled->lookup("mm");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->grid.streamK, 3);
  std::shared_ptr<DeviceRuntime> runtime = makeEmulated();
  for (int seed : {1, 2}) {
    MatmulArrays arrays(*runtime, 64, seed);
    ASSERT_EQ(arrays.upload(*runtime), "");
    ASSERT_EQ(errorText(runtime->launch(compiled, "mm", ProblemSizes{},
                                        arrays.arguments())),
              "");
    std::vector<float> c(arrays.expected.size());
    ASSERT_EQ(errorText(runtime->copy(c.data(), arrays.deviceC, c.size() * 4,
                                      CopyDirection::DeviceToHost)),
              "");
    expectNear(c, arrays.expected);
  }
}

/// Launch arguments must be device memory of this runtime, checked before
/// anything is queued; the default stream serves launches without one.
TEST(EmulatedRuntimeTest, LaunchArgumentsAreCheckedDeviceMemory) {
  std::shared_ptr<const CompiledModule> module = compileSplitMatmul();
  ASSERT_TRUE(module);
  std::shared_ptr<DeviceRuntime> runtime = makeEmulated();
  MatmulArrays arrays(*runtime, 64, 3);
  std::vector<KernelArgumentValue> arguments = arrays.arguments();
  std::vector<float> hostC(arrays.expected.size());
  arguments[2] =
      KernelArgumentValue::memref(hostC.data(), hostC.size() * 4, {64, 32});
  EXPECT_NE(errorText(runtime->launch(module, "mm", ProblemSizes{}, arguments))
                .find("problem 'mm', argument 2: 8192 bytes at"),
            std::string::npos);
  // The kernel's own checks come first: a wrong N.
  arguments = arrays.arguments();
  arguments[1].shape[1] = 31;
  EXPECT_NE(errorText(runtime->launch(module, "mm", ProblemSizes{}, arguments))
                .find("argument 1"),
            std::string::npos);
  ASSERT_EQ(arrays.upload(*runtime), "");
  ASSERT_EQ(errorText(runtime->launch(module, "mm", ProblemSizes{},
                                      arrays.arguments())),
            "");
  // A synchronous copy on the default stream waits for the launch.
  ASSERT_EQ(
      errorText(runtime->copy(hostC.data(), arrays.deviceC, hostC.size() * 4,
                              CopyDirection::DeviceToHost)),
      "");
  expectNear(hostC, arrays.expected);
  EXPECT_EQ(errorText(runtime->synchronize()), "");
}

/// An event never recorded is complete; waiting on it does not block, and
/// timing it is an error.
TEST(EmulatedRuntimeTest, UnrecordedEvents) {
  std::shared_ptr<DeviceRuntime> runtime = makeEmulated();
  auto stream = runtime->createStream();
  auto event = runtime->createEvent();
  auto other = runtime->createEvent();
  ASSERT_TRUE(stream && event && other);
  EXPECT_EQ(errorText((*stream)->waitFor(**event)), "");
  EXPECT_EQ(errorText((*stream)->synchronize()), "");
  EXPECT_EQ(errorText((*event)->synchronize()), "");
  auto complete = (*event)->isComplete();
  ASSERT_TRUE(bool(complete));
  EXPECT_TRUE(*complete);
  auto milliseconds = (*event)->millisecondsSince(**other);
  ASSERT_FALSE(bool(milliseconds));
  EXPECT_NE(errorText(milliseconds.takeError()).find("never recorded"),
            std::string::npos);
}

/// bf16 bits of `value` (exact for the multiples of 1/16 the test uses).
uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return uint16_t(bits >> 16);
}

/// A stream-K attention (2 heads x 2 query blocks x 8 key blocks over 5
/// workgroups: cut query blocks merged by the last piece to arrive) through
/// the runtime: the grid is the config's workgroup count, the workspaces
/// come from the stream, and a second launch counts from the arrival
/// counters the first left at zero. O (f32) against a double-precision
/// softmax on the host.
TEST(EmulatedRuntimeTest, StreamKAttentionLaunchesThroughTheRuntime) {
  constexpr int64_t heads = 2, seq = 256, dim = 64;
  AttentionProblem problem;
  problem.heads = heads;
  problem.seqQ = problem.seqKV = seq;
  problem.headDim = dim;
  problem.type = "bf16";
  problem.outType = "f32";
  problem.config = "#tessel.config<tile = [128, 32], waves = [4, 1], "
                   "stages = 1, instr = \"v_mfma_f32_32x32x8_bf16\", "
                   "stream_k = 5>";
  Compiler compiler(CacheOptions{true, ""});
  auto compiled = compiler.compile(problem);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  const CompiledKernel *kernel = (*compiled)->lookup("attention");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->grid.streamK, 5);
  auto grid = kernel->gridFor(ProblemSizes{});
  ASSERT_TRUE(bool(grid));
  EXPECT_EQ((*grid)[0], 5u);
  EXPECT_EQ((*grid)[1], 1u);

  std::shared_ptr<DeviceRuntime> runtime = makeEmulated();
  int64_t elements = heads * seq * dim;
  for (int seed : {1, 2}) {
    std::vector<float> q(elements), k(elements), v(elements);
    std::vector<uint16_t> q16(elements), k16(elements), v16(elements);
    for (int64_t i = 0; i < elements; ++i) {
      q[i] = float((i * 7 + seed) % 17) / 16 - 0.5f;
      k[i] = float((i * 5 + 3 * seed) % 13) / 16 - 0.375f;
      v[i] = float((i * 3 + seed) % 11) / 8 - 0.625f;
      q16[i] = toBf16(q[i]);
      k16[i] = toBf16(k[i]);
      v16[i] = toBf16(v[i]);
    }
    std::vector<float> expected(elements);
    double scale = 1.0 / std::sqrt(double(dim));
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < seq; ++i) {
        const float *qi = &q[(h * seq + i) * dim];
        std::vector<double> scores(seq);
        double max = -1e300;
        for (int64_t j = 0; j < seq; ++j) {
          const float *kj = &k[(h * seq + j) * dim];
          double dot = 0;
          for (int64_t d = 0; d < dim; ++d)
            dot += double(qi[d]) * kj[d];
          scores[j] = dot * scale;
          max = std::max(max, scores[j]);
        }
        double sum = 0;
        for (double &score : scores)
          sum += score = std::exp(score - max);
        for (int64_t d = 0; d < dim; ++d) {
          double out = 0;
          for (int64_t j = 0; j < seq; ++j)
            out += scores[j] * v[(h * seq + j) * dim + d];
          expected[(h * seq + i) * dim + d] = float(out / sum);
        }
      }
    void *deviceQ = *runtime->allocate(elements * 2);
    void *deviceK = *runtime->allocate(elements * 2);
    void *deviceV = *runtime->allocate(elements * 2);
    void *deviceO = *runtime->allocate(elements * 4);
    for (auto [device, host] :
         {std::pair{deviceQ, &q16}, {deviceK, &k16}, {deviceV, &v16}})
      ASSERT_EQ(errorText(runtime->copy(device, host->data(), elements * 2,
                                        CopyDirection::HostToDevice)),
                "");
    std::vector<int64_t> shape = {1, heads, seq, dim};
    std::vector<KernelArgumentValue> arguments = {
        KernelArgumentValue::memref(deviceQ, elements * 2, shape),
        KernelArgumentValue::memref(deviceK, elements * 2, shape),
        KernelArgumentValue::memref(deviceV, elements * 2, shape),
        KernelArgumentValue::memref(deviceO, elements * 4, shape)};
    ASSERT_EQ(errorText(runtime->launch(*compiled, "attention", ProblemSizes{},
                                        arguments)),
              "");
    std::vector<float> o(elements);
    ASSERT_EQ(errorText(runtime->copy(o.data(), deviceO, elements * 4,
                                      CopyDirection::DeviceToHost)),
              "");
    // P reaches the second product in bf16: about 2^-8 relative.
    for (int64_t i = 0; i < elements; ++i)
      ASSERT_NEAR(o[i], expected[i], 1e-2 * (1 + std::abs(expected[i])))
          << "at " << i << " (launch " << seed << ")";
    for (void *buffer : {deviceQ, deviceK, deviceV, deviceO})
      ASSERT_EQ(errorText(runtime->release(buffer)), "");
  }
}

} // namespace
