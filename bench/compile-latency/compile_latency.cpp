//===- compile_latency.cpp - Cold and warm JIT compile latency ------------===//
//
// tessel-bench-compile [--runs N] [--chip gfx942]
//
// Medians over N runs of, for the bf16 4096^3 GEMM and the f16 D=128
// attention forward (without masks and causal):
//   cold:        compile with no cache at all (what a first call costs),
//                split into its stages;
//   warm memory: a hit in the in-memory cache of a live compiler;
//   warm disk:   a hit in the on-disk cache from a fresh compiler (a new
//                process, in effect), including reading the code object's
//                metadata back.
//
//===----------------------------------------------------------------------===//

#include "tessel/Runtime/Compiler.h"
#include "tessel/Support/Version.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace tessel;

static llvm::cl::OptionCategory category("tessel-bench-compile options");
static llvm::cl::opt<unsigned> runs("runs", llvm::cl::desc("Runs per figure"),
                                    llvm::cl::cat(category), llvm::cl::init(7));
static llvm::cl::opt<std::string> chipName("chip", llvm::cl::init("gfx942"),
                                           llvm::cl::desc("Target chip"),
                                           llvm::cl::cat(category));

static const char *kGemm = R"mlir(
func.func @matmul(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16>,
                  %c: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16>)
                outs(%c : memref<4096x4096xbf16>)
  return
}
)mlir";

static const char *kAttention = R"mlir(
func.func @attention(%q: memref<1x16x4096x128xf16>,
                     %k: memref<1x16x4096x128xf16>,
                     %v: memref<1x16x4096x128xf16>,
                     %o: memref<1x16x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x16x4096x128xf16>,
                       memref<1x16x4096x128xf16>, memref<1x16x4096x128xf16>)
                   outs(%o : memref<1x16x4096x128xf16>)
  return
}
)mlir";

// The causal form of the same problem: a second key loop (the masked
// diagonal) continuing the first one's pipeline, and stream-K on gfx942.
static const char *kCausalAttention = R"mlir(
func.func @attention(%q: memref<1x16x4096x128xf16>,
                     %k: memref<1x16x4096x128xf16>,
                     %v: memref<1x16x4096x128xf16>,
                     %o: memref<1x16x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x16x4096x128xf16>,
                       memref<1x16x4096x128xf16>, memref<1x16x4096x128xf16>)
                   outs(%o : memref<1x16x4096x128xf16>) {causal}
  return
}
)mlir";

static double median(std::vector<double> values) {
  llvm::sort(values);
  size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle]
                           : (values[middle - 1] + values[middle]) / 2;
}

template <typename Fn> static double timeMs(Fn &&fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

static bool
check(llvm::Expected<std::shared_ptr<const CompiledModule>> result) {
  if (result)
    return true;
  llvm::errs() << "tessel-bench-compile: error: "
               << llvm::toString(result.takeError()) << "\n";
  return false;
}

static bool benchmark(llvm::StringRef name, llvm::StringRef ir,
                      const CompileOptions &options, unsigned runCount,
                      llvm::StringRef cacheDirectory) {
  std::vector<double> cold, parse, toGPU, toROCDL, codegen, memory, disk;
  for (unsigned run = 0; run < runCount; ++run) {
    CompileTimings timings;
    bool ok = true;
    cold.push_back(
        timeMs([&] { ok = check(compileUncached(ir, options, &timings)); }));
    if (!ok)
      return false;
    parse.push_back(timings.parse);
    toGPU.push_back(timings.tesselToGPU);
    toROCDL.push_back(timings.gpuToROCDL);
    codegen.push_back(timings.codegen);
  }
  // Fill the disk cache once, then time hits.
  Compiler warm(CacheOptions{true, cacheDirectory.str()});
  if (!check(warm.compile(ir, options)))
    return false;
  for (unsigned run = 0; run < runCount; ++run) {
    memory.push_back(timeMs([&] { (void)check(warm.compile(ir, options)); }));
    Compiler fresh(CacheOptions{true, cacheDirectory.str()});
    disk.push_back(timeMs([&] { (void)check(fresh.compile(ir, options)); }));
  }
  llvm::outs() << llvm::formatv(
      "| {0} | {1:f1} | {2:f1} / {3:f1} / {4:f1} / {5:f1} | {6:f3} | "
      "{7:f2} |\n",
      name, median(cold), median(parse), median(toGPU), median(toROCDL),
      median(codegen), median(memory), median(disk));
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  tessel::registerVersionPrinter();
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "Tessel JIT compile latency benchmark\n");
  // Read the options before the first compile: the in-process lld resets
  // the command-line options of the process.
  CompileOptions options;
  options.chip = chipName;
  unsigned runCount = std::max(1u, unsigned(runs));
  llvm::SmallString<128> cacheDirectory;
  if (llvm::sys::fs::createUniqueDirectory("tessel-bench-cache",
                                           cacheDirectory)) {
    llvm::errs() << "tessel-bench-compile: error: cannot create a cache "
                    "directory\n";
    return 1;
  }
  llvm::outs() << llvm::formatv("chip {0}, median of {1} runs, times in ms\n\n",
                                options.chip, runCount);
  llvm::outs() << "| kernel | cold | cold by stage: set-up+parse / "
                  "tessel-to-gpu / gpu-to-rocdl / codegen+lld | warm "
                  "(memory) | warm (disk) |\n|---|---|---|---|---|\n";
  bool ok =
      benchmark("bf16 GEMM 4096^3", kGemm, options, runCount, cacheDirectory) &&
      benchmark("f16 attention D=128", kAttention, options, runCount,
                cacheDirectory) &&
      benchmark("f16 causal attention D=128", kCausalAttention, options,
                runCount, cacheDirectory);
  llvm::sys::fs::remove_directories(cacheDirectory);
  return ok ? 0 : 1;
}
