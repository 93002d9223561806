//===- tessel-layout.cpp - Print and analyse layouts ------------*- C++ -*-===//
//
//   tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>'
//       --shape 32x32 [--format=text|csv] [--inverse]
//   tessel-layout '<register layout>' --shape 64x64 --bank-conflicts
//       --lds '#tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>'
//       --access-bytes 16 --type f16 --chip gfx942 [--write]
//   tessel-layout '<register layout>' --shape 128x64 --choose-swizzle
//       --type bf16 --access-bytes 8 --store-bytes 16
//
// Shows which tile element every (wave, lane, register) of a layout holds,
// or which lanes hold each element, and counts the LDS bank conflicts of
// reading or writing a tile through a memory layout.
//
//===----------------------------------------------------------------------===//

#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Layout/Layouts.h"
#include "tessel/Support/InputLimits.h"
#include "tessel/Support/Version.h"
#include "tessel/Target/Chip.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace tessel;
namespace cl = llvm::cl;

static cl::OptionCategory category("tessel-layout options");
static cl::opt<std::string> layoutText(cl::Positional, cl::Required,
                                       cl::desc("<layout attribute>"),
                                       cl::cat(category));
static cl::opt<std::string>
    shapeText("shape", cl::desc("Tile shape, e.g. 32x8"), cl::cat(category));
enum class Format { Text, Csv };
static cl::opt<Format> format(
    "format", cl::desc("Output format"), cl::init(Format::Text),
    cl::values(clEnumValN(Format::Text, "text", "readable lines"),
               clEnumValN(Format::Csv, "csv", "one row per held element")),
    cl::cat(category));
static cl::opt<bool> inverse("inverse",
                             cl::desc("Per element, the lanes and registers "
                                      "holding it"),
                             cl::cat(category));
static cl::opt<bool> bankConflicts(
    "bank-conflicts",
    cl::desc("Count the LDS bank conflicts of accessing the tile through "
             "--lds"),
    cl::cat(category));
static cl::opt<bool> chooseSwizzleFlag(
    "choose-swizzle",
    cl::desc("Choose the LDS swizzle with the fewest bank conflicts for a "
             "coalesced --store-bytes write and this layout's read"),
    cl::cat(category));
static cl::opt<std::string> ldsText(
    "lds",
    cl::desc("Memory layout of the tile in LDS (default: unswizzled, dim1 "
             "contiguous)"),
    cl::init("#tessel.swizzle<vec = 1, perPhase = 1, maxPhase = 1>"),
    cl::cat(category));
static cl::opt<unsigned> accessBytes("access-bytes",
                                     cl::desc("Bytes per lane per LDS access"),
                                     cl::init(16), cl::cat(category));
static cl::opt<unsigned>
    storeBytes("store-bytes",
               cl::desc("Bytes per lane of the LDS write (--choose-swizzle)"),
               cl::init(16), cl::cat(category));
static cl::opt<unsigned>
    writeWaves("waves", cl::desc("Waves writing the tile (--choose-swizzle)"),
               cl::init(4), cl::cat(category));
static cl::opt<std::string>
    elementType("type", cl::desc("Element type: f32, f16, bf16, fp8, bf8, i8"),
                cl::init("f16"), cl::cat(category));
static cl::opt<std::string> chipName("chip", cl::desc("Chip (LDS banking)"),
                                     cl::init("gfx942"), cl::cat(category));
static cl::opt<bool> isWrite("write",
                             cl::desc("Analyse LDS writes (default: reads)"),
                             cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "tessel-layout: error: " << message << "\n";
  return 1;
}

static std::optional<SmallVector<int64_t, 4>> parseShape(StringRef text) {
  SmallVector<StringRef, 4> parts;
  text.split(parts, 'x');
  SmallVector<int64_t, 4> shape;
  for (StringRef part : parts) {
    int64_t size;
    if (part.getAsInteger(10, size) || size <= 0)
      return std::nullopt;
    shape.push_back(size);
  }
  return shape;
}

static std::optional<unsigned> elementBytes(StringRef type) {
  return llvm::StringSwitch<std::optional<unsigned>>(type)
      .Cases({"f32", "i32"}, 4u)
      .Cases({"f16", "bf16"}, 2u)
      .Cases({"fp8", "bf8", "i8"}, 1u)
      .Default(std::nullopt);
}

/// Parses `text` as an attribute; diagnostics point into the text.
static Attribute parseLayoutAttr(MLIRContext &context, StringRef text,
                                 StringRef what) {
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(text, what);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  if (!checkInputLimits(sourceMgr, llvm::errs()))
    return {};
  size_t consumed = 0;
  Attribute attr = parseAttribute(text, &context, Type(), &consumed);
  if (attr && consumed != text.size()) {
    emitError(UnknownLoc::get(&context))
        << what << ": unexpected text after the attribute: '"
        << text.drop_front(consumed) << "'";
    return {};
  }
  return attr;
}

static bool isDistributed(const LinearLayout &layout) {
  return !layout.hasInDim(dims::kOffset);
}

/// Input dimensions shown, in column order.
static SmallVector<StringRef> inputColumns(const LinearLayout &layout) {
  if (!isDistributed(layout))
    return {dims::kOffset};
  SmallVector<StringRef> columns;
  if (layout.hasInDim(dims::kBlock))
    columns.push_back(dims::kBlock);
  columns.append({dims::kWave, dims::kLane, dims::kRegister});
  return columns;
}

/// Calls `fn(inputs, outputs)` for every input in column order (the last
/// column fastest).
static void forEachInput(
    const LinearLayout &layout, ArrayRef<StringRef> columns,
    llvm::function_ref<void(ArrayRef<int32_t>, ArrayRef<int32_t>)> fn) {
  SmallVector<int32_t> sizes;
  int64_t total = 1;
  for (StringRef column : columns) {
    sizes.push_back(layout.getInDimSize(column));
    total *= sizes.back();
  }
  SmallVector<int32_t> values(columns.size(), 0);
  SmallVector<int32_t> byDim(layout.getInDims().size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (int i = columns.size() - 1; i >= 0; --i) {
      values[i] = rest % sizes[i];
      rest /= sizes[i];
    }
    for (auto [index, in] : llvm::enumerate(layout.getInDims()))
      for (auto [column, value] : llvm::zip(columns, values))
        if (in.name == column)
          byDim[index] = value;
    fn(values, layout.apply(byDim));
  }
}

static std::string formatCoords(ArrayRef<int32_t> coords) {
  return "(" +
         llvm::join(llvm::map_range(
                        coords, [](int32_t v) { return std::to_string(v); }),
                    ", ") +
         ")";
}

static void printForward(const LinearLayout &layout, llvm::raw_ostream &os) {
  SmallVector<StringRef> columns = inputColumns(layout);
  unsigned rank = layout.getOutDims().size();
  if (format == Format::Csv) {
    SmallVector<std::string> header(columns.begin(), columns.end());
    for (unsigned d = 0; d < rank; ++d)
      header.push_back(dims::tileDim(d));
    os << llvm::join(header, ",") << "\n";
    forEachInput(layout, columns, [&](auto inputs, auto outputs) {
      SmallVector<std::string> row;
      for (int32_t v : inputs)
        row.push_back(std::to_string(v));
      for (int32_t v : outputs)
        row.push_back(std::to_string(v));
      os << llvm::join(row, ",") << "\n";
    });
    return;
  }
  if (!isDistributed(layout)) {
    forEachInput(layout, columns, [&](auto inputs, auto outputs) {
      os << "offset " << inputs[0] << ": " << formatCoords(outputs) << "\n";
    });
    return;
  }
  // One line per lane: the element of each register in order.
  std::string line;
  int32_t lastLane = -1;
  forEachInput(layout, columns, [&](auto inputs, auto outputs) {
    int32_t registerValue = inputs.back();
    if (registerValue == 0) {
      if (lastLane >= 0)
        os << line << "\n";
      line.clear();
      for (size_t i = 0; i + 1 < columns.size(); ++i)
        line +=
            (i ? " " : "") + columns[i].str() + " " + std::to_string(inputs[i]);
      line += ":";
      lastLane = inputs[columns.size() - 2];
    }
    line += " " + formatCoords(outputs);
  });
  os << line << "\n";
}

static void printInverse(const LinearLayout &layout, llvm::raw_ostream &os) {
  SmallVector<StringRef> columns = inputColumns(layout);
  std::map<SmallVector<int32_t>, SmallVector<SmallVector<int32_t>>> holders;
  forEachInput(layout, columns, [&](auto inputs, auto outputs) {
    holders[SmallVector<int32_t>(outputs.begin(), outputs.end())].push_back(
        SmallVector<int32_t>(inputs.begin(), inputs.end()));
  });
  unsigned rank = layout.getOutDims().size();
  if (format == Format::Csv) {
    SmallVector<std::string> header;
    for (unsigned d = 0; d < rank; ++d)
      header.push_back(dims::tileDim(d));
    header.append(columns.begin(), columns.end());
    os << llvm::join(header, ",") << "\n";
  }
  // std::map orders the elements row-major.
  for (const auto &[element, inputs] : holders) {
    if (format == Format::Csv) {
      for (const auto &input : inputs) {
        SmallVector<std::string> row;
        for (int32_t v : element)
          row.push_back(std::to_string(v));
        for (int32_t v : input)
          row.push_back(std::to_string(v));
        os << llvm::join(row, ",") << "\n";
      }
      continue;
    }
    os << formatCoords(element) << ":";
    for (auto [index, input] : llvm::enumerate(inputs)) {
      os << (index ? ";" : "");
      for (auto [column, value] : llvm::zip(columns, input))
        os << " " << column << " " << value;
    }
    os << "\n";
  }
  // Elements nobody holds are worth saying.
  int64_t total = 1;
  for (const LinearLayout::OutDim &out : layout.getOutDims())
    total *= out.size;
  if (int64_t(holders.size()) != total)
    os << "# " << total - int64_t(holders.size()) << " of " << total
       << " elements are held by no lane\n";
}

static void printConflicts(const BankConflictReport &report, StringRef what,
                           llvm::raw_ostream &os) {
  os << what << ": " << report.conflictCycles << " extra cycles over "
     << report.accessesPerWave * report.waves << " accesses ("
     << report.accessesPerWave << " per wave, " << report.waves
     << " waves); worst access " << report.worstPerAccess << " extra cycles\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  tessel::registerVersionPrinter();
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tessel layout inspector: which element every (wave, lane, "
      "register) of a layout holds, and its LDS bank conflicts\n");

  if (shapeText.empty())
    return fail("--shape is required (for example --shape 32x8)");
  std::optional<SmallVector<int64_t, 4>> shape = parseShape(shapeText);
  if (!shape)
    return fail("--shape must be sizes separated by 'x', like 32x8; got '" +
                shapeText + "'");
  const Chip *chip = lookupChip(chipName);
  if (!chip)
    return fail("unknown chip '" + chipName +
                "'; known chips: " + knownChipNames());
  std::optional<unsigned> bytes = elementBytes(elementType);
  if (!bytes)
    return fail("unknown element type '" + elementType +
                "'; expected f32, i32, f16, bf16, fp8, bf8 or i8");

  MLIRContext context;
  context.loadDialect<TesselDialect>();
  // Diagnostics without a place in the attribute text (a layout that does
  // not fit the shape) read like the tool's other errors.
  ScopedDiagnosticHandler plainErrors(&context, [](Diagnostic &diag) {
    llvm::errs() << "tessel-layout: error: " << diag << "\n";
    return success();
  });
  Attribute attr = parseLayoutAttr(context, layoutText, "layout");
  if (!attr)
    return 1;
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(&context)); };
  // The tile bounds and, for register layouts, the checks a tensor with this
  // encoding would get: what the tool prints is bounded and meaningful.
  if (failed(verifyTileShape(*shape, emitError)))
    return 1;
  if (auto encoding = dyn_cast<VerifiableTensorEncoding>(attr))
    if (failed(encoding.verifyEncoding(*shape, Float16Type::get(&context),
                                       emitError)))
      return 1;
  FailureOr<LinearLayout> layout = getLinearLayout(attr, *shape, emitError);
  if (failed(layout))
    return 1;

  llvm::raw_ostream &os = llvm::outs();
  LdsBanking banking{chip->ldsBanks, chip->ldsBankBytes};
  if (bankConflicts || chooseSwizzleFlag) {
    if (!isDistributed(*layout))
      return fail("bank conflicts are analysed for a register layout "
                  "(register/lane/wave); pass the LDS layout with --lds");
  }
  if (bankConflicts) {
    Attribute ldsAttr = parseLayoutAttr(context, ldsText, "--lds");
    if (!ldsAttr)
      return 1;
    FailureOr<LinearLayout> memory =
        getLinearLayout(ldsAttr, *shape, emitError);
    if (failed(memory))
      return 1;
    llvm::Expected<BankConflictReport> report =
        analyzeBankConflicts(*layout, *memory, *bytes, accessBytes, isWrite,
                             banking, chip->defaultWaveSize);
    if (!report)
      return fail(llvm::toString(report.takeError()));
    os << "LDS " << (isWrite ? "write" : "read") << " of " << accessBytes
       << " bytes per lane through " << ldsAttr << " on " << chip->name << " ("
       << banking.numBanks << " banks of " << banking.bankBytes << " bytes)\n";
    printConflicts(*report, "bank conflicts", os);
    return 0;
  }
  if (chooseSwizzleFlag) {
    if (shape->size() != 2)
      return fail("--choose-swizzle needs a 2-D tile");
    SwizzleQuery query;
    query.shape = {(*shape)[0], (*shape)[1]};
    query.order = {1, 0};
    query.elementBytes = *bytes;
    query.storeBytes = storeBytes;
    query.numWaves = writeWaves;
    query.readLayout = *layout;
    query.readBytes = accessBytes;
    query.banking = banking;
    query.waveSize = chip->defaultWaveSize;
    llvm::Expected<SwizzleChoice> choice = chooseSwizzle(query);
    if (!choice)
      return fail(llvm::toString(choice.takeError()));
    os << "#tessel.swizzle<vec = " << choice->vec
       << ", perPhase = " << choice->perPhase
       << ", maxPhase = " << choice->maxPhase
       << (choice->fold ? ", fold = true" : "") << ">\n";
    printConflicts(choice->write,
                   "write (" + std::to_string(storeBytes) + " bytes per lane)",
                   os);
    printConflicts(choice->read,
                   "read (" + std::to_string(accessBytes) + " bytes per lane)",
                   os);
    return 0;
  }
  if (inverse)
    printInverse(*layout, os);
  else
    printForward(*layout, os);
  return 0;
}
