//===- tessel-tune.cpp - Rank matmul configs on their compiled code -------===//
//
// tessel-tune in.mlir --chip=gfx942 [--top=N] [--db=tuning.json]
//     [-o tuned.mlir] [--format=text|json] [--measure=R]
//
// For every tessel.matmul without a config: takes the N best candidates of
// the analytical model (tessel-select-config's ranking), compiles each, and
// ranks them again with the ISA-level performance model over their code
// objects. The winner goes into the tuning database (merged with what the
// file holds) that tessel-select-config{tuning-db=...} reads, and into the
// tuned module written with -o. No GPU is needed: every time is a
// prediction (docs/performance-model.md). With --measure, each candidate
// also runs R times on the GPU through HIP, and the measured times rank
// them; without a GPU the tool says so and ranks by the model.
//
//===----------------------------------------------------------------------===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"
#include "tessel/Dialect/Tessel/Transforms/TuningDatabase.h"
#include "tessel/InitAllDialects.h"
#include "tessel/Runtime/Device.h"
#include "tessel/Runtime/Perf.h"
#include "tessel/Support/InputLimits.h"
#include "tessel/Support/Version.h"
#include "tessel/Target/Chip.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
using namespace tessel;

namespace {
enum class OutputFormat { Text, JSON };
} // namespace

static llvm::cl::OptionCategory category("tessel-tune options");
static llvm::cl::opt<std::string> inputFilename(llvm::cl::Positional,
                                                llvm::cl::desc("<input.mlir>"),
                                                llvm::cl::init("-"),
                                                llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    chipName("chip", llvm::cl::desc("Target chip (gfx90a, gfx942, gfx950)"),
             llvm::cl::init("gfx942"), llvm::cl::cat(category));
// 16 by default: on the problems of bench/chooser_check.py the best compiled
// config stood as low as 16th in the analytical ranking (gfx942 bf16
// 2048^3); 8 would miss two of the twelve better configs found.
static llvm::cl::opt<unsigned>
    topCount("top",
             llvm::cl::desc("Candidates of the analytical ranking to compile "
                            "(default 16)"),
             llvm::cl::init(16), llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    databasePath("db",
                 llvm::cl::desc("Tuning database to update (created if "
                                "missing)"),
                 llvm::cl::value_desc("file"), llvm::cl::cat(category));
static llvm::cl::opt<std::string>
    outputFilename("o",
                   llvm::cl::desc("Write the module with the winners' "
                                  "configs here"),
                   llvm::cl::value_desc("file"), llvm::cl::cat(category));
static llvm::cl::opt<OutputFormat> outputFormat(
    "format", llvm::cl::desc("Format of the ranking"),
    llvm::cl::init(OutputFormat::Text),
    llvm::cl::values(clEnumValN(OutputFormat::Text, "text", "a table"),
                     clEnumValN(OutputFormat::JSON, "json", "JSON")),
    llvm::cl::cat(category));

static llvm::cl::opt<unsigned> measureRepetitions(
    "measure",
    llvm::cl::desc("Also time every candidate on the GPU (HIP) over this "
                   "many runs and rank by the measured time (default 0: "
                   "predictions only)"),
    llvm::cl::init(0), llvm::cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tessel-tune") << message << "\n";
  return 1;
}

namespace {
/// One compiled candidate as the ISA-level model sees it.
struct Trial {
  ConfigAttr config;
  unsigned analyticalRank = 0;
  double analyticalSeconds = 0;
  double modelSeconds = 0; ///< ISA-level model; 0 when it failed
  double structuralEfficiency = 0;
  unsigned vgprs = 0, agprs = 0;
  std::string limit, error;
  double measuredSeconds = 0; ///< on the GPU; 0 when not measured
  std::string measureError;   ///< why a measurement failed
};

/// The GPU the candidates are timed on, if any.
struct Measurement {
  HipDevice *device = nullptr;
  unsigned repetitions = 0;
};
} // namespace

/// Compiles `module` (with one candidate set), predicts the kernels of
/// function `function` with the ISA-level model and, given a GPU, times
/// them there.
static void compileAndPredict(ModuleOp module, StringRef function,
                              const Chip &chip, const Measurement &measure,
                              Trial &trial) {
  std::string text;
  llvm::raw_string_ostream textStream(text);
  module.print(textStream);
  CacheOptions noCache;
  noCache.inMemory = false;
  Compiler compiler(noCache);
  CompileOptions options;
  options.chip = chip.name.str();
  auto compiled = compiler.compile(text, options);
  if (!compiled) {
    trial.error = llvm::toString(compiled.takeError());
    return;
  }
  for (const CompiledKernel &kernel : (*compiled)->kernels) {
    if (kernel.name != function && kernel.grid.planOf != function)
      continue;
    auto report = predictPerformance(**compiled, kernel,
                                     getStaticDimensions(kernel), KeyWindow());
    if (!report) {
      trial.error = llvm::toString(report.takeError());
      return;
    }
    trial.modelSeconds += report->predictedSeconds;
    trial.structuralEfficiency = report->structuralEfficiency;
    trial.vgprs = std::max(trial.vgprs, report->usage.archVgprs);
    trial.agprs = std::max(trial.agprs, report->usage.accVgprs);
    trial.limit = report->bindingLimit;
  }
  if (trial.modelSeconds == 0 && trial.error.empty())
    trial.error = "no kernel of '" + function.str() + "' was compiled";
  if (!trial.error.empty() || !measure.device)
    return;
  llvm::Expected<double> seconds = timeProblemOnHip(
      *measure.device, **compiled, function, measure.repetitions);
  if (seconds)
    trial.measuredSeconds = *seconds;
  else
    trial.measureError = llvm::toString(seconds.takeError());
}

static bool hasDynamicSize(MatmulOp matmul) {
  return !matmul.getA().getType().hasStaticShape() ||
         !matmul.getB().getType().hasStaticShape();
}

/// Tunes one matmul over the `top` best candidates of the analytical model:
/// returns its trials, fastest by the ISA-level model first (failed
/// compiles last).
static std::vector<Trial> tuneMatmul(ModuleOp module, MatmulOp matmul,
                                     const Chip &chip, unsigned top,
                                     const Measurement &measure) {
  std::vector<RankedMatmulConfig> ranked = rankMatmulConfigs(
      module.getContext(), chip, matmul.getA().getType().getElementType(),
      matmul.getB().getType().getElementType(),
      matmul.getC().getType().getElementType(), getMatmulProblemSizes(matmul));
  StringRef function = matmul->getParentOfType<func::FuncOp>().getName();
  std::vector<Trial> trials;
  for (auto [index, candidate] :
       llvm::enumerate(llvm::ArrayRef(ranked).take_front(top))) {
    Trial trial;
    trial.config = candidate.config;
    trial.analyticalRank = index + 1;
    trial.analyticalSeconds = candidate.estimate.seconds;
    matmul.setConfigAttr(candidate.config);
    compileAndPredict(module, function, chip, measure, trial);
    trials.push_back(std::move(trial));
  }
  matmul->removeAttr("config");
  // Compiled before failed; measured (when measuring) before unmeasured;
  // then by measured time, else by predicted time.
  llvm::stable_sort(trials, [](const Trial &x, const Trial &y) {
    if (x.error.empty() != y.error.empty())
      return x.error.empty();
    if ((x.measuredSeconds > 0) != (y.measuredSeconds > 0))
      return x.measuredSeconds > 0;
    if (x.measuredSeconds > 0)
      return x.measuredSeconds < y.measuredSeconds;
    return x.modelSeconds < y.modelSeconds;
  });
  return trials;
}

static std::string configText(ConfigAttr config) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << config;
  return text;
}

/// The measured time of a trial as the table shows it.
static std::string measuredText(const Trial &trial) {
  if (trial.measuredSeconds > 0)
    return llvm::formatv("{0:F1} us", trial.measuredSeconds * 1e6);
  return "-";
}

static void printTrials(llvm::raw_ostream &os, StringRef problem,
                        ArrayRef<Trial> trials, bool measured) {
  os << problem
     << (measured ? " (predictions, and times measured on the GPU):\n"
                  : " (predictions):\n");
  os << llvm::formatv("  {0,-4} {1,-9} {2,-11} {3,-11} ", "rank", "analytic",
                      "analytic", "ISA model");
  if (measured)
    os << llvm::formatv("{0,-11} ", "measured");
  os << llvm::formatv("{0,-6} {1,-10} {2}\n", "eff.", "VGPR+AGPR",
                      "config / binding limit");
  for (auto [index, trial] : llvm::enumerate(trials)) {
    if (!trial.error.empty()) {
      os << llvm::formatv(
          "  {0,-4} #{1,-8} {2,-11} failed: {3}\n", "-", trial.analyticalRank,
          llvm::formatv("{0:F1} us", trial.analyticalSeconds * 1e6),
          trial.error);
      continue;
    }
    os << llvm::formatv(
        "  {0,-4} #{1,-8} {2,-11} {3,-11} ", index + 1, trial.analyticalRank,
        llvm::formatv("{0:F1} us", trial.analyticalSeconds * 1e6),
        llvm::formatv("{0:F1} us", trial.modelSeconds * 1e6));
    if (measured)
      os << llvm::formatv("{0,-11} ", measuredText(trial));
    os << llvm::formatv(
        "{0,-6} {1,-10} {2}; {3}\n",
        llvm::formatv("{0:F1}%", 100 * trial.structuralEfficiency),
        llvm::formatv("{0}+{1}", trial.vgprs, trial.agprs),
        configText(trial.config), trial.limit);
    if (!trial.measureError.empty())
      os << "       not measured: " << trial.measureError << "\n";
  }
}

static llvm::json::Value trialsToJSON(StringRef problem, ArrayRef<Trial> trials,
                                      bool measured) {
  llvm::json::Array list;
  for (const Trial &trial : trials) {
    llvm::json::Object object{{"config", configText(trial.config)},
                              {"analytical_rank", trial.analyticalRank},
                              {"analytical_us", trial.analyticalSeconds * 1e6}};
    if (trial.error.empty()) {
      object["model_us"] = trial.modelSeconds * 1e6;
      object["structural_efficiency"] = trial.structuralEfficiency;
      object["vgprs"] = trial.vgprs;
      object["agprs"] = trial.agprs;
      object["binding_limit"] = trial.limit;
      if (trial.measuredSeconds > 0)
        object["measured_us"] = trial.measuredSeconds * 1e6;
      if (!trial.measureError.empty())
        object["measure_error"] = trial.measureError;
    } else {
      object["error"] = trial.error;
    }
    list.push_back(std::move(object));
  }
  return llvm::json::Object{{"problem", problem.str()},
                            {"prediction", true},
                            {"measured", measured},
                            {"trials", std::move(list)}};
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  tessel::registerVersionPrinter();
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "Tessel tuner: rank matmul configs on their compiled code\n");
  // The in-process lld resets every cl::opt of the process when it links:
  // read ours once, before the first compile.
  const std::string inputPath = inputFilename, dbPath = databasePath,
                    outputPath = outputFilename;
  const unsigned top = topCount;
  const OutputFormat format = outputFormat;
  const unsigned repetitions = measureRepetitions;
  const Chip *chip = lookupChip(chipName);
  if (!chip)
    return fail("unknown chip '" + chipName +
                "'; known chips: " + knownChipNames());
  if (top == 0 || top > 64)
    return fail("--top must be between 1 and 64");
  if (repetitions > 10000)
    return fail("--measure must be at most 10000 runs");

  // Without a GPU the ranking is the model's, and the tool says why.
  std::unique_ptr<HipDevice> gpu;
  Measurement measure;
  if (repetitions > 0) {
    llvm::Expected<std::unique_ptr<HipDevice>> opened = HipDevice::open();
    if (opened) {
      gpu = std::move(*opened);
      measure = {gpu.get(), repetitions};
    } else {
      llvm::WithColor::warning(llvm::errs(), "tessel-tune")
          << "not measuring: " << llvm::toString(opened.takeError())
          << "; the ISA-level model ranks the candidates\n";
    }
  }

  std::optional<TuningDatabase> database;
  if (!dbPath.empty()) {
    if (llvm::sys::fs::exists(dbPath)) {
      auto loaded = TuningDatabase::load(dbPath);
      if (!loaded)
        return fail(llvm::toString(loaded.takeError()));
      database = std::move(*loaded);
    } else {
      database.emplace();
    }
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputPath, &errorMessage);
  if (!input)
    return fail(errorMessage);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  if (!checkInputLimits(sourceMgr, llvm::errs()))
    return 1;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  SmallVector<MatmulOp> matmuls;
  module->walk([&](MatmulOp matmul) {
    if (!matmul.getConfigAttr())
      matmuls.push_back(matmul);
  });
  if (matmuls.empty())
    return fail("the input has no tessel.matmul without a config to tune");
  for (MatmulOp matmul : matmuls)
    if (hasDynamicSize(matmul)) {
      matmul.emitError() << "tessel-tune needs static sizes: the model "
                            "predicts a kernel for one problem";
      return 1;
    }

  llvm::json::Array results;
  for (MatmulOp matmul : matmuls) {
    std::string problem = getMatmulProblemKey(matmul);
    std::vector<Trial> trials =
        tuneMatmul(*module, matmul, *chip, top, measure);
    bool measured = measure.device != nullptr;
    if (format == OutputFormat::JSON)
      results.push_back(trialsToJSON(problem, trials, measured));
    else
      printTrials(llvm::outs(), problem, trials, measured);
    if (trials.empty() || !trials.front().error.empty()) {
      matmul.emitError() << "no candidate config compiled";
      return 1;
    }
    const Trial &winner = trials.front();
    matmul.setConfigAttr(winner.config);
    if (!database)
      continue;
    TuningEntry entry;
    entry.config = configText(winner.config);
    entry.predictedMicroseconds = winner.modelSeconds * 1e6;
    entry.source = llvm::formatv("tessel-tune: ISA-level model, best of {0} "
                                 "(analytical rank #{1})",
                                 trials.size(), winner.analyticalRank)
                       .str();
    if (winner.measuredSeconds > 0) {
      entry.measuredMicroseconds = winner.measuredSeconds * 1e6;
      entry.source =
          llvm::formatv("tessel-tune: measured on the GPU, mean "
                        "of {0} runs, best of {1} (analytical "
                        "rank #{2})",
                        repetitions, trials.size(), winner.analyticalRank)
              .str();
    }
    database->insert(chip->name, problem, entry);
  }
  if (format == OutputFormat::JSON)
    llvm::outs() << llvm::formatv("{0:2}",
                                  llvm::json::Value(std::move(results)))
                 << "\n";
  if (database)
    if (llvm::Error error = database->save(dbPath))
      return fail(llvm::toString(std::move(error)));
  if (!outputPath.empty()) {
    auto output = openOutputFile(outputPath, &errorMessage);
    if (!output)
      return fail(errorMessage);
    module->print(output->os());
    output->os() << "\n";
    output->keep();
  }
  return 0;
}
