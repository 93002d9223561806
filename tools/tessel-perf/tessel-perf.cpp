//===- tessel-perf.cpp - Predict and explain an AMDGPU kernel's speed -----===//
//
// tessel-perf k.hsaco --kernel NAME --grid X,Y,Z [--block X,Y,Z]
//     [--dynamic-lds N] [--chip gfx942] [--flops F --bytes B]
//     [--clock-mhz C] [--trip-count N] [--format=text|json]
//
// Works on any AMDGPU code object: Tessel's, or one built by hipcc/clang
// from HIP or assembly. Every figure it prints is a prediction of the model
// in lib/Perf (docs/performance-model.md).
//
//===----------------------------------------------------------------------===//

#include "tessel/Perf/Model.h"
#include "tessel/Support/Version.h"
#include "tessel/Target/KernelMetadata.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"

using namespace tessel;
namespace cl = llvm::cl;

static cl::OptionCategory category("tessel-perf options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<code object>"),
                                      cl::cat(category));
static cl::opt<std::string>
    kernelName("kernel", cl::desc("Kernel to analyze (default: the only one)"),
               cl::cat(category));
static cl::opt<std::string>
    gridOption("grid", cl::desc("Workgroups X,Y,Z (default 1,1,1)"),
               cl::init("1,1,1"), cl::cat(category));
static cl::opt<std::string> blockOption(
    "block",
    cl::desc("Lanes per workgroup X,Y,Z (default: the kernel's fixed size)"),
    cl::cat(category));
static cl::opt<uint64_t> dynamicLds("dynamic-lds",
                                    cl::desc("Dynamic LDS bytes per workgroup"),
                                    cl::init(0), cl::cat(category));
static cl::opt<std::string>
    chipName("chip", cl::desc("Chip (default: the code object's processor)"),
             cl::cat(category));
static cl::opt<double> flops("flops", cl::desc("The problem's useful FLOPs"),
                             cl::init(0), cl::cat(category));
static cl::opt<double>
    uniqueBytes("bytes", cl::desc("Bytes that must cross HBM at least once"),
                cl::init(0), cl::cat(category));
static cl::opt<double>
    clockMHz("clock-mhz",
             cl::desc("Engine clock in MHz (default: the chip's peak)"),
             cl::init(0), cl::cat(category));
static cl::opt<uint64_t>
    tripCount("trip-count",
              cl::desc("Iterations of every loop (default: from --flops)"),
              cl::init(0), cl::cat(category));
static cl::opt<unsigned> globalLatency(
    "global-latency",
    cl::desc("Assumed vector memory load latency in clocks (default 500)"),
    cl::init(0), cl::cat(category));
static cl::opt<unsigned> transcendentalPasses(
    "transcendental-passes",
    cl::desc("Assumed VALU passes of a transcendental instruction (default 4: "
             "a quarter of the VALU rate)"),
    cl::init(4), cl::cat(category));
static cl::opt<bool> holdBehindOwnProducts(
    "hold-behind-products",
    cl::desc("Whether packed, dot-product and (gfx942) transcendental "
             "instructions wait for their own wave's matrix instruction "
             "(default true)"),
    cl::init(true), cl::cat(category));
static cl::opt<std::string>
    plotFile("plot",
             cl::desc("Also draw the report as SVG (roofline and cycle "
                      "sources) into this file"),
             cl::value_desc("file.svg"), cl::cat(category));
enum class Format { Text, JSON };
static cl::opt<Format>
    format("format", cl::desc("Output format"), cl::init(Format::Text),
           cl::values(clEnumValN(Format::Text, "text", "readable report"),
                      clEnumValN(Format::JSON, "json", "JSON")),
           cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tessel-perf") << message << "\n";
  return 1;
}

/// Parses "X", "X,Y" or "X,Y,Z" of positive integers.
static llvm::Expected<std::array<uint64_t, 3>>
parseTriple(llvm::StringRef text, llvm::StringRef what) {
  std::array<uint64_t, 3> values = {1, 1, 1};
  llvm::SmallVector<llvm::StringRef, 3> parts;
  text.split(parts, ',');
  if (parts.empty() || parts.size() > 3)
    return llvm::createStringError("--" + what + " takes X[,Y[,Z]]");
  for (auto [i, part] : llvm::enumerate(parts))
    if (part.trim().getAsInteger(10, values[i]) || values[i] == 0 ||
        values[i] > (uint64_t(1) << 32))
      return llvm::createStringError("--" + what + ": '" + part +
                                     "' is not a size from 1 to 2^32");
  return values;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  tessel::registerVersionPrinter();
  cl::ParseCommandLineOptions(argc, argv,
                              "Predict and explain an AMDGPU kernel's speed\n");

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (!buffer)
    return fail("cannot read '" + inputFile +
                "': " + buffer.getError().message());
  llvm::ArrayRef<char> bytes((*buffer)->getBufferStart(),
                             (*buffer)->getBufferSize());
  if (!llvm::StringRef(bytes.data(), bytes.size())
           .starts_with("\x7f"
                        "ELF"))
    return fail(inputFile + ": not an ELF code object");
  llvm::Expected<CodeObjectMetadata> metadata = readCodeObjectMetadata(bytes);
  if (!metadata)
    return fail(inputFile + ": " + llvm::toString(metadata.takeError()));

  std::string chipText = chipName.empty() ? metadata->processor() : chipName;
  const Chip *chip = lookupChip(chipText);
  if (!chip)
    return fail("unknown chip '" + chipText +
                "'; known chips: " + knownChipNames());
  std::string kernel = kernelName;
  if (kernel.empty()) {
    if (metadata->kernels.size() != 1)
      return fail(llvm::formatv("the code object has {0} kernels: name one "
                                "with --kernel",
                                metadata->kernels.size()));
    kernel = metadata->kernels.front().name;
  }

  Launch launch;
  llvm::Expected<std::array<uint64_t, 3>> grid =
      parseTriple(gridOption, "grid");
  if (!grid)
    return fail(llvm::toString(grid.takeError()));
  launch.grid = *grid;
  if (!blockOption.empty()) {
    llvm::Expected<std::array<uint64_t, 3>> block =
        parseTriple(blockOption, "block");
    if (!block)
      return fail(llvm::toString(block.takeError()));
    launch.block = *block;
  }
  launch.dynamicLdsBytes = dynamicLds;
  if (flops < 0 || uniqueBytes < 0 || clockMHz < 0)
    return fail("--flops, --bytes and --clock-mhz must not be negative");

  ProblemWork work;
  work.flops = flops;
  work.uniqueBytes = uniqueBytes;
  ModelParameters parameters;
  parameters.clockMHz = clockMHz;
  if (tripCount)
    parameters.tripCount = uint64_t(tripCount);
  if (globalLatency)
    parameters.globalLoadLatency = globalLatency;
  if (transcendentalPasses == 0)
    return fail("--transcendental-passes must be at least 1");
  parameters.transcendentalPasses = transcendentalPasses;
  parameters.holdBehindOwnProducts = holdBehindOwnProducts;

  llvm::Expected<PerfReport> report =
      analyzeCodeObject(bytes, kernel, *chip, launch, work, parameters);
  if (!report)
    return fail(inputFile + ": " + llvm::toString(report.takeError()));
  if (!plotFile.empty()) {
    std::error_code error;
    llvm::raw_fd_ostream plot(plotFile, error, llvm::sys::fs::OF_Text);
    if (error)
      return fail("cannot write '" + plotFile + "': " + error.message());
    writePerfPlot(plot, *report, *chip, parameters);
    plot.close();
    if (plot.has_error())
      return fail("cannot write '" + plotFile + "': " + plot.error().message());
  }
  if (format == Format::JSON)
    llvm::outs() << llvm::formatv("{0:2}", perfReportToJSON(*report)) << "\n";
  else
    printPerfReport(llvm::outs(), *report);
  return 0;
}
