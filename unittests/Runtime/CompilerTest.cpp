//===- CompilerTest.cpp - tessel::Compiler and its kernel cache -----------===//

#include "tessel/Runtime/Compiler.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Support/Version.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <thread>

#include <sys/stat.h>
#include <sys/time.h>

using namespace tessel;

namespace {

std::string matmulIR(int64_t m, int64_t n, int64_t k) {
  return llvm::formatv(
      "func.func @matmul(%a: memref<{0}x{2}xf16>, %b: memref<{2}x{1}xf16>, "
      "%c: memref<{0}x{1}xf16>) {{\n"
      "  tessel.matmul ins(%a, %b : memref<{0}x{2}xf16>, "
      "memref<{2}x{1}xf16>) outs(%c : memref<{0}x{1}xf16>)\n"
      "  return\n}\n",
      m, n, k);
}

/// A fresh, empty cache directory removed at the end of the test.
class CacheDirectory {
public:
  CacheDirectory() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("tessel-cache", path));
  }
  ~CacheDirectory() { llvm::sys::fs::remove_directories(path); }
  CacheOptions options(bool inMemory = true) const {
    return CacheOptions{inMemory, std::string(path)};
  }
  llvm::SmallString<128> path;
};

TEST(CompilerTest, CompilesMatmulWithLaunchFacts) {
  Compiler compiler(CacheOptions{true, ""});
  auto compiled = compiler.compile(matmulIR(100, 70, 50));
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  const CompiledModule &module = **compiled;
  EXPECT_EQ(module.chip, "gfx942");
  ASSERT_GT(module.hsaco.size(), 4u);
  EXPECT_EQ(llvm::StringRef(module.hsaco.data() + 1, 3), "ELF");
  const CompiledKernel *kernel = module.lookup("matmul");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->grid.kind, GridRule::Kind::Matmul);
  EXPECT_EQ(kernel->blockSize, kernel->metadata.workgroupLanes());
  // Three memref arguments (pointer-sized pieces) in the kernarg segment.
  EXPECT_GT(kernel->metadata.kernargSegmentSize, 3 * 8u);
  auto launch = kernel->gridFor({100, 70, 0});
  ASSERT_TRUE(bool(launch)) << llvm::toString(launch.takeError());
  std::array<unsigned, 3> grid = *launch;
  EXPECT_EQ(grid[0], (70 + kernel->grid.tile[1] - 1) / kernel->grid.tile[1]);
  EXPECT_EQ(grid[1], (100 + kernel->grid.tile[0] - 1) / kernel->grid.tile[0]);
  EXPECT_EQ(grid[2], 1u);
  // A grid past the dispatch packet's 32-bit lane count is an error, not a
  // wrapped-around small grid.
  auto huge = kernel->gridFor({int64_t(1) << 40, int64_t(1) << 40, 0});
  ASSERT_FALSE(bool(huge));
  EXPECT_NE(llvm::toString(huge.takeError()).find("2^32"), std::string::npos);
  // The arguments describe themselves: C is written, A and B are not.
  ASSERT_EQ(kernel->arguments.size(), 3u);
  EXPECT_FALSE(kernel->arguments[0].written);
  EXPECT_TRUE(kernel->arguments[2].written);
  EXPECT_EQ(kernel->arguments[0].elementType, "f16");
  EXPECT_EQ(kernel->arguments[1].dimensions,
            (std::vector<std::string>{"k", "n"}));
  EXPECT_NE(module.reportJSON.find("\"vgpr_count\""), std::string::npos)
      << module.reportJSON;
}

TEST(CompilerTest, ProblemDescriptions) {
  Compiler compiler(CacheOptions{true, ""});
  MatmulProblem matmul;
  matmul.name = "gemm";
  matmul.m = 100;
  matmul.n = 60;
  matmul.k = 40;
  matmul.aType = "bf16";
  matmul.transposeB = true;
  matmul.bias = "n";
  matmul.activation = "gelu";
  auto compiledMatmul = compiler.compile(matmul, {"gfx950", 3});
  ASSERT_TRUE(bool(compiledMatmul))
      << llvm::toString(compiledMatmul.takeError());
  const CompiledKernel *gemm = (*compiledMatmul)->lookup("gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->problemArguments, 4u); // A, B, C, bias
  EXPECT_EQ(gemm->arguments[3].shape, std::vector<int64_t>{60});
  EXPECT_EQ(gemm->arguments[3].dimensions, std::vector<std::string>{"n"});
  // B is stored column-major: its layout's strides say so.
  EXPECT_EQ(gemm->arguments[1].strides, (std::vector<int64_t>{1, 40}));

  // A decode-shaped attention becomes one split-KV kernel (its last split
  // per query block merges the partials).
  AttentionProblem attention;
  attention.heads = 4;
  attention.kvHeads = 1;
  attention.seqQ = 1;
  attention.seqKV = 2048;
  attention.headDim = 64;
  attention.causal = true;
  auto compiledAttention = compiler.compile(attention);
  ASSERT_TRUE(bool(compiledAttention))
      << llvm::toString(compiledAttention.takeError());
  auto sequence = (*compiledAttention)->launchSequence("attention");
  ASSERT_EQ(sequence.size(), 1u);
  EXPECT_EQ(sequence[0]->name, "attention");
  EXPECT_GT(sequence[0]->grid.splits, 1);
  EXPECT_EQ(sequence[0]->grid.packedHeads, 4);
  auto splitGrid = sequence[0]->gridFor({0, 0, 1, 1, 4});
  ASSERT_TRUE(bool(splitGrid));
  EXPECT_EQ((*splitGrid)[2], unsigned(sequence[0]->grid.splits));

  // A module built in the caller's own context compiles to the same code.
  mlir::MLIRContext context;
  context.loadDialect<TesselDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect, mlir::math::MathDialect,
                      mlir::memref::MemRefDialect>();
  mlir::Location loc = mlir::UnknownLoc::get(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  mlir::OpBuilder builder = mlir::OpBuilder::atBlockBegin(module->getBody());
  ASSERT_TRUE(succeeded(buildProblem(builder, loc, matmul)));
  auto fromModule = compiler.compile(*module, {"gfx950", 3});
  ASSERT_TRUE(bool(fromModule)) << llvm::toString(fromModule.takeError());
  EXPECT_EQ((*fromModule)->hsaco, (*compiledMatmul)->hsaco);

  // Bad descriptions are errors that say what is wrong.
  MatmulProblem bad = matmul;
  bad.aType = "f64";
  auto error = compiler.compile(bad);
  ASSERT_FALSE(bool(error));
  EXPECT_NE(llvm::toString(error.takeError()).find("unknown element type"),
            std::string::npos);
}

TEST(CompilerTest, AssemblyOnRequest) {
  Compiler compiler(CacheOptions{true, ""});
  auto compiled = compiler.compile(matmulIR(64, 64, 64));
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  auto isa = generateAssembly(**compiled);
  ASSERT_TRUE(bool(isa)) << llvm::toString(isa.takeError());
  EXPECT_NE(isa->find(".amdgcn_target \"amdgcn-amd-amdhsa--gfx942"),
            std::string::npos);
  EXPECT_NE(isa->find("v_mfma_"), std::string::npos);
  EXPECT_NE(isa->find("matmul:"), std::string::npos);
}

TEST(CompilerTest, ErrorsCarryLocations) {
  Compiler compiler(CacheOptions{true, ""});
  auto bad = compiler.compile("func.func @f() {\n  tessel.bogus\n}\n");
  ASSERT_FALSE(bool(bad));
  std::string message = llvm::toString(bad.takeError());
  EXPECT_NE(message.find("<tessel input>:2:"), std::string::npos) << message;
  auto chip = compiler.compile(matmulIR(16, 16, 16), {"gfx000", 3});
  ASSERT_FALSE(bool(chip));
  EXPECT_NE(llvm::toString(chip.takeError()).find("unknown chip 'gfx000'"),
            std::string::npos);
}

TEST(CompilerTest, MemoryCacheServesTheSameEntry) {
  Compiler compiler(CacheOptions{true, ""});
  auto first = compiler.compile(matmulIR(64, 64, 64));
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  auto second = compiler.compile(matmulIR(64, 64, 64));
  ASSERT_TRUE(bool(second));
  EXPECT_EQ(first->get(), second->get());
  CacheStats stats = compiler.getCache().getStats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.memoryHits, 1u);
  // Another chip is another entry.
  auto other = compiler.compile(matmulIR(64, 64, 64), {"gfx90a", 3});
  ASSERT_TRUE(bool(other)) << llvm::toString(other.takeError());
  EXPECT_EQ((*other)->chip, "gfx90a");
  EXPECT_EQ(compiler.getCache().getStats().misses, 2u);
}

TEST(CompilerTest, DiskCacheSurvivesTheCompilerAndRejectsDamage) {
  CacheDirectory directory;
  std::string ir = matmulIR(96, 80, 40);
  std::string key = computeCacheKey(ir, {});
  std::shared_ptr<const CompiledModule> original;
  {
    Compiler compiler(directory.options());
    auto compiled = compiler.compile(ir);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    original = *compiled;
  }
  std::string path = Compiler(directory.options()).getCache().pathFor(key);
  ASSERT_TRUE(llvm::sys::fs::exists(path));

  // A new compiler (a new process, in effect) loads it from disk.
  Compiler reader(directory.options());
  auto loaded = reader.compile(ir);
  ASSERT_TRUE(bool(loaded));
  EXPECT_EQ(reader.getCache().getStats().diskHits, 1u);
  EXPECT_EQ((*loaded)->hsaco, original->hsaco);
  ASSERT_EQ((*loaded)->kernels.size(), original->kernels.size());
  EXPECT_EQ((*loaded)->kernels[0].grid.tile, original->kernels[0].grid.tile);
  EXPECT_EQ((*loaded)->kernels[0].metadata.kernargSegmentSize,
            original->kernels[0].metadata.kernargSegmentSize);

  // Truncate the entry: detected, removed, recompiled, rewritten.
  auto bytes = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(bytes));
  std::string whole = (*bytes)->getBuffer().str();
  {
    std::error_code error;
    llvm::raw_fd_ostream os(path, error);
    ASSERT_FALSE(error);
    os << llvm::StringRef(whole).take_front(whole.size() / 2);
  }
  Compiler afterTruncation(directory.options());
  auto recompiled = afterTruncation.compile(ir);
  ASSERT_TRUE(bool(recompiled)) << llvm::toString(recompiled.takeError());
  CacheStats stats = afterTruncation.getCache().getStats();
  EXPECT_EQ(stats.corruptEntries, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ((*recompiled)->hsaco, original->hsaco);

  // Flip one payload byte (length intact): the checksum catches it.
  whole[whole.size() - 10] ^= 0x20;
  EXPECT_FALSE(deserializeCompiledModule(whole, key).has_value());
  std::string intact = serializeCompiledModule(*original, key);
  EXPECT_TRUE(deserializeCompiledModule(intact, key).has_value());
  // An intact entry answers only its own key.
  EXPECT_FALSE(deserializeCompiledModule(intact, "0123").has_value());
}

TEST(CompilerTest, EntryOfAnotherKernelOrChipIsNotServed) {
  CacheDirectory directory;
  std::string ir = matmulIR(64, 64, 32), other = matmulIR(96, 64, 32);
  Compiler writer(directory.options());
  ASSERT_TRUE(bool(writer.compile(ir, {"gfx942", 3})));
  ASSERT_TRUE(bool(writer.compile(other, {"gfx942", 3})));
  KernelCache &cache = writer.getCache();
  std::string path = cache.pathFor(computeCacheKey(ir, {"gfx942", 3}));
  std::string otherPath = cache.pathFor(computeCacheKey(other, {"gfx942", 3}));
  std::string gfx90aPath = cache.pathFor(computeCacheKey(ir, {"gfx90a", 3}));
  // Another kernel's valid entry copied under this key, and the gfx942
  // entry copied under the gfx90a key: both are rejected and recompiled.
  ASSERT_FALSE(llvm::sys::fs::copy_file(otherPath, path));
  ASSERT_FALSE(llvm::sys::fs::copy_file(otherPath, gfx90aPath));
  Compiler reader(directory.options());
  auto compiled = reader.compile(ir, {"gfx942", 3});
  ASSERT_TRUE(bool(compiled));
  EXPECT_EQ((*compiled)->kernels[0].grid.kind, GridRule::Kind::Matmul);
  EXPECT_EQ((*compiled)->kernels[0].arguments[0].shape,
            (std::vector<int64_t>{64, 32}));
  auto forGfx90a = reader.compile(ir, {"gfx90a", 3});
  ASSERT_TRUE(bool(forGfx90a));
  EXPECT_EQ((*forGfx90a)->chip, "gfx90a");
  EXPECT_EQ(reader.getCache().getStats().corruptEntries, 2u);
  EXPECT_EQ(reader.getCache().getStats().diskHits, 0u);
}

TEST(CompilerTest, SpecialFilesAtAnEntryPathDoNotHang) {
  CacheDirectory directory;
  std::string ir = matmulIR(32, 32, 32);
  Compiler compiler(directory.options());
  std::string path =
      compiler.getCache().pathFor(computeCacheKey(ir, {"gfx942", 3}));
  // A FIFO blocks whoever opens it; a link to /dev/zero never ends.
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  auto first = compiler.compile(ir);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  compiler.getCache().clearMemory();
  llvm::sys::fs::remove(path);
  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/zero", path));
  auto second = compiler.compile(ir);
  ASSERT_TRUE(bool(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(compiler.getCache().getStats().corruptEntries, 2u);
  // The recompile replaced the link with a real entry.
  llvm::sys::fs::file_status status;
  ASSERT_FALSE(llvm::sys::fs::status(path, status, /*Follow=*/false));
  EXPECT_EQ(status.type(), llvm::sys::fs::file_type::regular_file);
}

// The launch facts a grid depends on survive the disk cache: a decode's
// split count and packed query heads (a kernel read back with one head per
// workgroup would launch four times the workgroups its y axis indexes),
// and a causal kernel's longest-first order of its query blocks (which the
// performance model follows).
TEST(CompilerTest, DiskCacheKeepsTheGridRule) {
  CacheDirectory directory;
  AttentionProblem decode;
  decode.heads = 8;
  decode.kvHeads = 2;
  decode.seqQ = 1;
  decode.seqKV = 1024;
  decode.headDim = 64;
  llvm::Expected<std::string> ir = printProblem(decode);
  ASSERT_TRUE(bool(ir)) << llvm::toString(ir.takeError());
  std::shared_ptr<const CompiledModule> original;
  {
    Compiler compiler(directory.options());
    auto compiled = compiler.compile(*ir);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    original = *compiled;
  }
  ASSERT_EQ(original->kernels.size(), 1u);
  EXPECT_EQ(original->kernels[0].grid.packedHeads, 4);
  Compiler reader(directory.options());
  auto loaded = reader.compile(*ir);
  ASSERT_TRUE(bool(loaded));
  EXPECT_EQ(reader.getCache().getStats().diskHits, 1u);
  const GridRule &grid = (*loaded)->kernels[0].grid;
  EXPECT_EQ(grid.packedHeads, 4);
  EXPECT_EQ(grid.splits, original->kernels[0].grid.splits);
  EXPECT_FALSE(grid.longestFirst);
  // Partial O, partial log-sum-exp, arrivals: only the arrivals are zeroed.
  const std::vector<ArgumentType> &arguments = (*loaded)->kernels[0].arguments;
  ASSERT_GE(arguments.size(), 3u);
  EXPECT_FALSE(arguments[arguments.size() - 3].zeroed);
  EXPECT_FALSE(arguments[arguments.size() - 2].zeroed);
  EXPECT_TRUE(arguments.back().zeroed);
  ProblemSizes sizes;
  sizes.seqQ = 1;
  sizes.heads = 8;
  sizes.batch = 1;
  sizes.batched = true;
  auto gridNow = (*loaded)->kernels[0].gridFor(sizes);
  ASSERT_TRUE(bool(gridNow));
  EXPECT_EQ((*gridNow)[1], 2u); // the key/value heads
  AttentionProblem prefill;
  prefill.heads = 2;
  prefill.seqQ = prefill.seqKV = 512;
  prefill.headDim = 64;
  prefill.causal = true;
  llvm::Expected<std::string> causalIR = printProblem(prefill);
  ASSERT_TRUE(bool(causalIR)) << llvm::toString(causalIR.takeError());
  {
    Compiler compiler(directory.options());
    auto compiled = compiler.compile(*causalIR);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    EXPECT_TRUE((*compiled)->kernels[0].grid.longestFirst);
  }
  auto causal = reader.compile(*causalIR);
  ASSERT_TRUE(bool(causal));
  EXPECT_EQ(reader.getCache().getStats().diskHits, 2u);
  EXPECT_TRUE((*causal)->kernels[0].grid.longestFirst);
}

// A ping-pong attention kernel on gfx950 unrolls its key loop by its three
// LDS slots; the performance model needs the factor, from the compiler and
// from a disk cache entry alike.
TEST(CompilerTest, KeyLoopUnrollSurvivesTheDiskCache) {
  CacheDirectory directory;
  AttentionProblem problem;
  problem.heads = 1;
  problem.seqQ = problem.seqKV = 512;
  problem.config = "#tessel.config<tile = [256, 32], waves = [8, 1], "
                   "stages = 4, instr = \"v_mfma_f32_32x32x16_f16\", "
                   "scores_ahead, ping_pong>";
  for (unsigned hits : {0u, 1u}) {
    Compiler compiler(directory.options());
    auto compiled = compiler.compile(problem, {"gfx950", 3});
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    EXPECT_EQ(compiler.getCache().getStats().diskHits, hits);
    ASSERT_EQ((*compiled)->kernels.size(), 1u);
    EXPECT_EQ((*compiled)->kernels[0].grid.keyLoopUnroll, 3);
  }
  // gfx942's loop stays rolled.
  problem.config = "#tessel.config<tile = [256, 64], waves = [8, 1], "
                   "stages = 3, instr = \"v_mfma_f32_32x32x8_f16\", "
                   "scores_ahead, ping_pong>";
  problem.headDim = 64;
  Compiler compiler(directory.options());
  auto rolled = compiler.compile(problem, {"gfx942", 3});
  ASSERT_TRUE(bool(rolled)) << llvm::toString(rolled.takeError());
  EXPECT_EQ((*rolled)->kernels[0].grid.keyLoopUnroll, 1);
}

TEST(CompilerTest, StreamKGridSurvivesTheDiskCache) {
  CacheDirectory directory;
  MatmulProblem problem;
  problem.name = "mm";
  problem.m = 256;
  problem.n = 192;
  problem.k = 320;
  problem.config = "#tessel.config<tile = [64, 64, 32], waves = [2, 2], "
                   "stages = 2, instr = \"v_mfma_f32_32x32x8_f16\", "
                   "stream_k = 7>";
  for (unsigned hits : {0u, 1u}) {
    Compiler compiler(directory.options());
    auto compiled = compiler.compile(problem);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    EXPECT_EQ(compiler.getCache().getStats().diskHits, hits);
    const CompiledKernel *kernel = (*compiled)->lookup("mm");
    ASSERT_NE(kernel, nullptr);
    EXPECT_EQ(kernel->grid.streamK, 7);
    // The problem's own three arrays, then the partials and the arrivals.
    ASSERT_EQ(kernel->arguments.size(), 5u);
    EXPECT_EQ(kernel->arguments[3].shape, (std::vector<int64_t>{7, 2, 64, 64}));
    EXPECT_EQ(kernel->arguments[4].shape, (std::vector<int64_t>{4, 3}));
    // Only the arrivals need zeros before the first launch.
    EXPECT_FALSE(kernel->arguments[3].zeroed);
    EXPECT_TRUE(kernel->arguments[4].zeroed);
    EXPECT_FALSE(kernel->arguments[0].zeroed);
    ProblemSizes sizes;
    sizes.m = 256;
    sizes.n = 192;
    auto grid = kernel->gridFor(sizes);
    ASSERT_TRUE(bool(grid)) << llvm::toString(grid.takeError());
    EXPECT_EQ(*grid, (std::array<unsigned, 3>{7, 1, 1}));
  }
}

TEST(CompilerTest, EmptyDirectoryDisablesTheDiskCache) {
  Compiler compiler(CacheOptions{false, ""});
  auto first = compiler.compile(matmulIR(32, 32, 32));
  ASSERT_TRUE(bool(first));
  auto second = compiler.compile(matmulIR(32, 32, 32));
  ASSERT_TRUE(bool(second));
  EXPECT_EQ(compiler.getCache().getStats().misses, 2u);
  EXPECT_TRUE(compiler.getCache().pathFor("x").empty());
}

TEST(CompilerTest, UnwritableCacheStillCompiles) {
  CacheDirectory directory;
  // The cache "directory" is a regular file: writing an entry fails.
  llvm::SmallString<128> file(directory.path);
  llvm::sys::path::append(file, "not-a-directory");
  {
    std::error_code error;
    llvm::raw_fd_ostream os(file, error);
    ASSERT_FALSE(error);
  }
  Compiler compiler(CacheOptions{true, std::string(file)});
  auto compiled = compiler.compile(matmulIR(32, 32, 32));
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  EXPECT_EQ(compiler.getCache().getStats().writeFailures, 1u);
  // The memory cache still serves the next call.
  ASSERT_TRUE(bool(compiler.compile(matmulIR(32, 32, 32))));
  EXPECT_EQ(compiler.getCache().getStats().memoryHits, 1u);
}

TEST(CompilerTest, ConcurrentCompiles) {
  CacheDirectory directory;
  Compiler compiler(directory.options());
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const CompiledModule>> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      // Four distinct shapes, each compiled by two threads at once.
      auto compiled = compiler.compile(matmulIR(64 + 16 * (i % 4), 48, 32));
      if (compiled)
        results[i] = *compiled;
      else
        errors[i] = llvm::toString(compiled.takeError());
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(errors[i].empty()) << errors[i];
    ASSERT_NE(results[i], nullptr);
    // Same input, same code object, whichever thread compiled it.
    EXPECT_EQ(results[i]->hsaco, results[i % 4]->hsaco);
  }
  EXPECT_NE(results[0]->hsaco, results[1]->hsaco);
}

} // namespace

TEST(CompilerTest, DiskCachePrunesTheLeastRecentlyUsedEntries) {
  CacheDirectory directory;
  // One real entry (a disk hit re-reads the code object's metadata), stored
  // under several keys.
  Compiler compiler(CacheOptions{false, ""});
  auto compiled = compiler.compile(matmulIR(64, 64, 32), {"gfx942", 3});
  ASSERT_TRUE(bool(compiled));
  const CompiledModule &module = **compiled;
  CacheOptions options = directory.options(/*inMemory=*/false);
  KernelCache probe(options);
  probe.insert("size", std::make_shared<const CompiledModule>(module));
  uint64_t entryBytes = 0;
  ASSERT_FALSE(llvm::sys::fs::file_size(probe.pathFor("size"), entryBytes));
  ASSERT_FALSE(llvm::sys::fs::remove(probe.pathFor("size")));

  // Room for three entries.
  options.maxDiskBytes = 3 * entryBytes + entryBytes / 2;
  KernelCache cache(options);
  auto setUsed = [&](llvm::StringRef key, int secondsAgo) {
    struct timeval times[2];
    gettimeofday(&times[0], nullptr);
    times[0].tv_sec -= secondsAgo;
    times[1] = times[0];
    ASSERT_EQ(utimes(cache.pathFor(key).c_str(), times), 0);
  };
  for (llvm::StringRef key : {"a", "b", "c"})
    cache.insert(key, std::make_shared<const CompiledModule>(module));
  setUsed("a", 300);
  setUsed("b", 200);
  setUsed("c", 100);
  // A hit makes "a" the most recently used; a fourth entry then pushes out
  // "b", the least recently used, and nothing else.
  ASSERT_NE(cache.lookup("a"), nullptr);
  cache.insert("d", std::make_shared<const CompiledModule>(module));
  EXPECT_TRUE(llvm::sys::fs::exists(cache.pathFor("a")));
  EXPECT_FALSE(llvm::sys::fs::exists(cache.pathFor("b")));
  EXPECT_TRUE(llvm::sys::fs::exists(cache.pathFor("c")));
  EXPECT_TRUE(llvm::sys::fs::exists(cache.pathFor("d")));
  EXPECT_EQ(cache.getStats().prunedEntries, 1u);

  // An entry larger than the whole bound still lands (it is about to be
  // used); everything older goes.
  options.maxDiskBytes = entryBytes / 2;
  KernelCache tiny(options);
  tiny.insert("e", std::make_shared<const CompiledModule>(module));
  EXPECT_TRUE(llvm::sys::fs::exists(tiny.pathFor("e")));
  for (llvm::StringRef key : {"a", "c", "d"})
    EXPECT_FALSE(llvm::sys::fs::exists(tiny.pathFor(key)));
  EXPECT_EQ(tiny.getStats().prunedEntries, 3u);
}

TEST(CompilerTest, CacheBoundFromTheEnvironment) {
  ASSERT_EQ(setenv("TESSEL_CACHE_MAX_MB", "64", 1), 0);
  EXPECT_EQ(CacheOptions::fromEnvironment().maxDiskBytes, uint64_t(64) << 20);
  ASSERT_EQ(setenv("TESSEL_CACHE_MAX_MB", "0", 1), 0);
  EXPECT_EQ(CacheOptions::fromEnvironment().maxDiskBytes, 0u);
  ASSERT_EQ(setenv("TESSEL_CACHE_MAX_MB", "lots", 1), 0);
  EXPECT_EQ(CacheOptions::fromEnvironment().maxDiskBytes,
            CacheOptions::kDefaultMaxDiskBytes);
  ASSERT_EQ(unsetenv("TESSEL_CACHE_MAX_MB"), 0);
}

TEST(CompilerTest, CacheKeyNamesTheVersionAndTheBuild) {
  // Same input, same key; the key is a SHA-256 in hex.
  std::string ir = matmulIR(64, 64, 32);
  std::string key = computeCacheKey(ir, {"gfx942", 3});
  EXPECT_EQ(key, computeCacheKey(ir, {"gfx942", 3}));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_NE(key, computeCacheKey(ir, {"gfx950", 3}));
  // The build is named by version, revision and the linker's build id,
  // not by where the binary lives.
  llvm::StringRef identity = getCompilerBuildIdentity();
  EXPECT_TRUE(identity.contains(getFullVersion())) << identity.str();
  size_t build = identity.find(" build ");
  ASSERT_NE(build, llvm::StringRef::npos) << identity.str();
  EXPECT_GE(identity.size() - build - 7, 32u);
  EXPECT_FALSE(identity.contains("/")) << identity.str();
}
