//===- tesselc.cpp - Compile Tessel IR to HSACO -----------------*- C++ -*-===//
//
// tesselc in.mlir --chip=gfx942 [-o out]
//     [--emit=mlir|llvm|isa|hsaco|report|perf]
//
// Lowers the input with the tessel-to-rocdl pipeline and compiles each
// gpu.module with the AMDGPU backend and in-process lld. Output is written
// only when the whole compile succeeded.
//
//===----------------------------------------------------------------------===//

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/InitAllDialects.h"
#include "tessel/Pipelines/Pipelines.h"
#include "tessel/Runtime/Perf.h"
#include "tessel/Support/InputLimits.h"
#include "tessel/Support/Version.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Hsaco.h"
#include "tessel/Target/KernelMetadata.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tessel;

namespace {
enum class EmitKind { MLIR, LLVM, ISA, HSACO, Report, Perf };
enum class ReportFormat { Text, JSON };
} // namespace

static llvm::cl::OptionCategory category("tesselc options");

static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<input.mlir>"),
                                                llvm::cl::init("-"),
                                                llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    outputFilename("o", llvm::cl::desc("Output file ('-' for stdout)"),
                   llvm::cl::value_desc("filename"), llvm::cl::init("-"),
                   llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    chipName("chip",
             llvm::cl::desc("Target chip (gfx90a, gfx942, gfx950, "
                            "gfx1100, gfx1201)"),
             llvm::cl::init("gfx942"), llvm::cl::cat(category));
static llvm::cl::opt<EmitKind> emitKind(
    "emit", llvm::cl::desc("What to produce"), llvm::cl::init(EmitKind::HSACO),
    llvm::cl::values(
        clEnumValN(EmitKind::MLIR, "mlir", "MLIR after the lowering pipeline"),
        clEnumValN(EmitKind::LLVM, "llvm", "optimized LLVM IR"),
        clEnumValN(EmitKind::ISA, "isa", "AMDGPU assembly"),
        clEnumValN(EmitKind::HSACO, "hsaco", "the HSACO code object"),
        clEnumValN(EmitKind::Report, "report",
                   "the kernel resource report of the code object"),
        clEnumValN(EmitKind::Perf, "perf",
                   "the performance model's prediction for each kernel over "
                   "the input's static problem sizes")),
    llvm::cl::cat(category));
static llvm::cl::opt<ReportFormat> reportFormat(
    "report-format", llvm::cl::desc("Format of --emit=report and =perf"),
    llvm::cl::init(ReportFormat::Text),
    llvm::cl::values(clEnumValN(ReportFormat::Text, "text", "readable table"),
                     clEnumValN(ReportFormat::JSON, "json", "JSON")),
    llvm::cl::cat(category));
static llvm::cl::opt<unsigned>
    optLevel("opt-level",
             llvm::cl::desc("LLVM -O level (0-3; 2 and 3 are the same: "
                            "LLVM's -O2 pipeline and code generation)"),
             llvm::cl::init(3), llvm::cl::cat(category));
static llvm::cl::opt<unsigned> codeObjectVersion(
    "code-object-version",
    llvm::cl::desc("AMDHSA code object version: 5 loads on every ROCm 6 "
                   "runtime, 6 needs ROCm 6.3 or later, 4 is for ROCm 5"),
    llvm::cl::init(kDefaultCodeObjectVersion), llvm::cl::cat(category));
static llvm::cl::opt<std::string> deviceLibsDir(
    "rocm-device-libs",
    llvm::cl::desc("Directory of ocml.bc/ockl.bc (default: "
                   "$TESSEL_ROCM_DEVICE_LIBS or the Debian path)"),
    llvm::cl::init(""), llvm::cl::cat(category));
static llvm::cl::opt<unsigned> transcendentalPasses(
    "transcendental-passes",
    llvm::cl::desc("--emit=perf: assumed VALU passes of a transcendental "
                   "instruction (default 4: a quarter of the VALU rate)"),
    llvm::cl::init(4), llvm::cl::cat(category));
static llvm::cl::opt<bool> holdBehindProducts(
    "hold-behind-products",
    llvm::cl::desc("--emit=perf: whether packed, dot-product and (gfx942) "
                   "transcendental instructions wait for their own wave's "
                   "matrix instruction (default true)"),
    llvm::cl::init(true), llvm::cl::cat(category));
static llvm::cl::opt<std::string> gpuModuleName(
    "gpu-module",
    llvm::cl::desc("Compile only the gpu.module with this name (required for "
                   "--emit=hsaco when the input has several)"),
    llvm::cl::init(""), llvm::cl::cat(category));

/// The command line, copied out of the cl::opt globals right after parsing:
/// the in-process lld resets every cl::opt of the process when it links.
struct Settings {
  std::string input, output, chip, deviceLibsDir, gpuModule;
  EmitKind emit;
  ReportFormat format;
  unsigned optLevel;
  unsigned codeObjectVersion;
  /// The performance model's stated assumptions (--emit=perf).
  ModelParameters model;
};

static Settings snapshotCommandLine() {
  Settings settings{inputFilename, outputFilename, chipName,
                    deviceLibsDir, gpuModuleName,  emitKind,
                    reportFormat,  optLevel,       codeObjectVersion};
  settings.model.transcendentalPasses = transcendentalPasses;
  settings.model.holdBehindOwnProducts = holdBehindProducts;
  return settings;
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tesselc: error: " << message << "\n";
  return 1;
}

static SmallVector<gpu::GPUModuleOp> selectGpuModules(ModuleOp module,
                                                      StringRef name) {
  SmallVector<gpu::GPUModuleOp> modules;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
    if (name.empty() || gpuModule.getName() == name)
      modules.push_back(gpuModule);
  return modules;
}

static HsacoStage stageFor(EmitKind kind) {
  switch (kind) {
  case EmitKind::LLVM:
    return HsacoStage::LLVMIR;
  case EmitKind::ISA:
    return HsacoStage::ISA;
  default:
    return HsacoStage::HSACO;
  }
}

/// Renders what one compiled gpu.module contributes to the output.
static LogicalResult renderBinary(const Settings &settings,
                                  gpu::GPUModuleOp gpuModule,
                                  const GpuModuleBinary &binary,
                                  const Chip &chip, llvm::raw_ostream &os,
                                  llvm::json::Array &jsonReports) {
  switch (settings.emit) {
  case EmitKind::LLVM:
    os << binary.llvmIR;
    return success();
  case EmitKind::ISA:
    os << binary.isa;
    return success();
  case EmitKind::HSACO:
    os.write(binary.hsaco.data(), binary.hsaco.size());
    return success();
  case EmitKind::Report: {
    llvm::Expected<CodeObjectMetadata> metadata =
        readCodeObjectMetadata(binary.hsaco);
    if (!metadata)
      return gpuModule.emitError() << llvm::toString(metadata.takeError());
    if (settings.format == ReportFormat::JSON)
      jsonReports.push_back(kernelReportToJSON(*metadata, chip));
    else
      printKernelReport(os, *metadata, chip);
    return success();
  }
  case EmitKind::MLIR:
  case EmitKind::Perf: // rendered per problem kernel, not per gpu.module
    break;
  }
  return failure();
}

/// Writes the rendered output, or nothing when the file cannot be written.
static int writeOutput(const Settings &settings, StringRef outputBuffer) {
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(settings.output, &errorMessage);
  if (!output)
    return fail(errorMessage);
  output->os() << outputBuffer;
  output->os().flush();
  if (output->os().has_error()) {
    output->os().clear_error();
    return fail("cannot write '" + settings.output + "'");
  }
  output->keep();
  return 0;
}

/// The key window of the problem function `name` of `module` (full for a
/// matmul).
static KeyWindow getProblemKeyWindow(ModuleOp module, StringRef name) {
  KeyWindow window;
  auto fromOp = [&](auto op) {
    auto function = op->template getParentOfType<func::FuncOp>();
    if (function && function.getName() == name)
      window = op.getKeyWindow();
  };
  module.walk([&](AttentionOp op) { fromOp(op); });
  module.walk([&](AttentionGradOp op) { fromOp(op); });
  return window;
}

/// --emit=perf: compiles the module as the JIT does (its launch facts give
/// each kernel's grid) and runs the performance model on every kernel over
/// the problem sizes the input's static shapes fix.
static LogicalResult emitPerf(const Settings &settings, ModuleOp module,
                              llvm::raw_ostream &os) {
  std::string text;
  llvm::raw_string_ostream textStream(text);
  module.print(textStream);
  CacheOptions noCache;
  noCache.inMemory = false;
  Compiler compiler(noCache);
  CompileOptions options;
  options.chip = settings.chip;
  options.optLevel = settings.optLevel;
  options.codeObjectVersion = settings.codeObjectVersion;
  auto compiled = compiler.compile(text, options);
  if (!compiled) {
    llvm::errs() << llvm::toString(compiled.takeError()) << "\n";
    return failure();
  }
  if ((*compiled)->kernels.empty()) {
    fail("--emit=perf needs a tessel.matmul or tessel.attention problem; "
         "use tessel-perf on other code objects");
    return failure();
  }
  llvm::json::Array reports;
  for (const CompiledKernel &kernel : (*compiled)->kernels) {
    DimensionSizes sizes = getStaticDimensions(kernel);
    for (const ArgumentType &argument : kernel.arguments)
      for (auto [extent, name] : llvm::zip(argument.shape, argument.dimensions))
        if (extent < 0 && !name.empty() && !sizes.count(name)) {
          fail("kernel '" + kernel.name + "': dimension '" + name +
               "' is dynamic; --emit=perf needs static shapes (or run "
               "tessel-perf with --grid and --flops)");
          return failure();
        }
    std::string problem =
        kernel.grid.planOf.empty() ? kernel.name : kernel.grid.planOf;
    auto report = predictPerformance(**compiled, kernel, sizes,
                                     getProblemKeyWindow(module, problem),
                                     settings.model);
    if (!report) {
      fail("kernel '" + kernel.name +
           "': " + llvm::toString(report.takeError()));
      return failure();
    }
    if (settings.format == ReportFormat::JSON)
      reports.push_back(perfReportToJSON(*report));
    else
      printPerfReport(os, *report);
  }
  if (settings.format == ReportFormat::JSON)
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(reports))) << "\n";
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  installFatalErrorHandlerForTools("tesselc");
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  llvm::cl::HideUnrelatedOptions(category);
  tessel::registerVersionPrinter();
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "Tessel compiler: MLIR to HSACO\n");

  const Settings settings = snapshotCommandLine();
  const Chip *chip = lookupChip(settings.chip);
  if (!chip)
    return fail("unknown chip '" + settings.chip +
                "'; known chips: " + knownChipNames());
  if (settings.optLevel > 3)
    return fail("--opt-level must be 0, 1, 2 or 3");
  if (!isSupportedCodeObjectVersion(settings.codeObjectVersion))
    return fail("--code-object-version must be 4, 5 or 6");
  if (settings.model.transcendentalPasses == 0)
    return fail("--transcendental-passes must be at least 1");

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(settings.input, &errorMessage);
  if (!input)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  context.printOpOnDiagnostic(false);
  // Some conversions report an error yet let the pass succeed; any error
  // stops the compile at the stage that reported it.
  bool sawError = false;
  ScopedDiagnosticHandler errorTracker(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      sawError = true;
    return failure(); // let the SourceMgr handler print it
  });

  if (!checkInputLimits(sourceMgr, llvm::errs()))
    return 1;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  std::string outputBuffer;
  llvm::raw_string_ostream os(outputBuffer);
  if (settings.emit == EmitKind::Perf) {
    if (failed(emitPerf(settings, *module, os)))
      return 1;
    return writeOutput(settings, outputBuffer);
  }

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  TesselToROCDLOptions pipelineOptions;
  pipelineOptions.chip = chip->name.str();
  buildTesselToROCDLPipeline(pm, pipelineOptions);
  if (failed(pm.run(*module)) || sawError)
    return 1;

  // Everything is rendered into memory first so a failure never leaves a
  // half-written output file behind.
  if (settings.emit == EmitKind::MLIR) {
    module->print(os);
  } else {
    SmallVector<gpu::GPUModuleOp> gpuModules =
        selectGpuModules(*module, settings.gpuModule);
    if (gpuModules.empty())
      return fail(settings.gpuModule.empty()
                      ? Twine("the input has no gpu.module to compile")
                      : "the input has no gpu.module named '" +
                            settings.gpuModule + "'");
    if (settings.emit == EmitKind::HSACO && gpuModules.size() > 1)
      return fail("the input has " + Twine(gpuModules.size()) +
                  " gpu.modules but a code object holds one: pick it with "
                  "--gpu-module=NAME");
    HsacoOptions options;
    options.optLevel = settings.optLevel;
    options.codeObjectVersion = settings.codeObjectVersion;
    options.deviceLibsDir = settings.deviceLibsDir;
    llvm::json::Array jsonReports;
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      FailureOr<GpuModuleBinary> binary =
          compileGpuModule(gpuModule, *chip, options, stageFor(settings.emit));
      if (failed(binary) || sawError ||
          failed(renderBinary(settings, gpuModule, *binary, *chip, os,
                              jsonReports)))
        return 1;
    }
    if (settings.emit == EmitKind::Report &&
        settings.format == ReportFormat::JSON)
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(jsonReports)))
         << "\n";
  }

  return writeOutput(settings, outputBuffer);
}
