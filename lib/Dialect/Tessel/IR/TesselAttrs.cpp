//===- TesselAttrs.cpp - tessel attributes ----------------------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Layout/Layouts.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tessel;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `a` or `b`.
static ParseResult parseOperandIndex(AsmParser &parser, unsigned &index) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  if (keyword != "a" && keyword != "b")
    return parser.emitError(loc)
           << "expected operand 'a' or 'b', got '" << keyword << "'";
  index = keyword == "a" ? 0 : 1;
  return success();
}

static void printOperandIndex(AsmPrinter &printer, unsigned index) {
  printer << (index == 0 ? "a" : "b");
}

/// `waves = [m, n]`, then the optional `, chip = "gfx..."`,
/// `, waveSize = N` and `, transposed` of #tessel.mma, in that order.
static ParseResult parseMmaOptions(AsmParser &parser,
                                   SmallVector<int64_t> &waves,
                                   std::string &chip, unsigned &waveSize,
                                   bool &transposed) {
  if (parser.parseKeyword("waves") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parser.parseInteger(waves.emplace_back());
      }))
    return failure();
  waveSize = 0;
  transposed = false;
  bool sawWaveSize = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return failure();
    if (keyword == "transposed" && !transposed) {
      if (succeeded(parser.parseOptionalEqual()))
        return parser.emitError(loc)
               << "'transposed' is a flag and takes no value";
      transposed = true;
      continue;
    }
    bool named = !transposed && (keyword == "chip" || keyword == "waveSize");
    if (named && failed(parser.parseOptionalEqual()))
      return parser.emitError(parser.getCurrentLocation())
             << "expected '=' after '" << keyword << "'";
    if (named) {
      if (keyword == "chip" && chip.empty() && !sawWaveSize) {
        if (parser.parseString(&chip))
          return failure();
        continue;
      }
      if (keyword == "waveSize" && !sawWaveSize) {
        sawWaveSize = true;
        if (parser.parseInteger(waveSize))
          return failure();
        continue;
      }
    }
    return parser.emitError(loc) << "expected 'chip', then 'waveSize', then "
                                    "'transposed', got '"
                                 << keyword << "'";
  }
  return success();
}

static void printMmaOptions(AsmPrinter &printer, ArrayRef<int64_t> waves,
                            StringRef chip, unsigned waveSize,
                            bool transposed) {
  printer << "waves = [";
  llvm::interleaveComma(waves, printer);
  printer << "]";
  if (!chip.empty())
    printer << ", chip = \"" << chip << "\"";
  if (waveSize)
    printer << ", waveSize = " << waveSize;
  if (transposed)
    printer << ", transposed";
}

/// The optional `, order = [a, b]` and `, fold = true|false` of
/// #tessel.swizzle, in that order.
static ParseResult parseSwizzleOptions(AsmParser &parser,
                                       SmallVector<int64_t> &order,
                                       bool &fold) {
  fold = false;
  bool sawFold = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword) || parser.parseEqual())
      return failure();
    if (keyword == "order" && order.empty() && !sawFold) {
      if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
            return parser.parseInteger(order.emplace_back());
          }))
        return failure();
    } else if (keyword == "fold" && !sawFold) {
      sawFold = true;
      SMLoc valueLoc = parser.getCurrentLocation();
      if (succeeded(parser.parseOptionalKeyword("true")))
        fold = true;
      else if (failed(parser.parseOptionalKeyword("false")))
        return parser.emitError(valueLoc) << "expected 'true' or 'false'";
    } else {
      return parser.emitError(loc)
             << "expected 'order' and then 'fold', got '" << keyword << "'";
    }
  }
  return success();
}

static void printSwizzleOptions(AsmPrinter &printer, ArrayRef<int64_t> order,
                                bool fold) {
  if (!order.empty()) {
    printer << ", order = [";
    llvm::interleaveComma(order, printer);
    printer << "]";
  }
  if (fold)
    printer << ", fold = true";
}

/// A config's optional parts after `stages`: `, instr = "..."`,
/// `, splits = N`, `, stream_k = N` and the flags `, scores_ahead`,
/// `, ping_pong`, `, unrolled` and `, direct_copies`, each at most once,
/// in this order.
static ParseResult parseConfigOptions(AsmParser &parser, StringAttr &instr,
                                      int64_t &splits, int64_t &streamK,
                                      bool &scoresAhead, bool &pingPong,
                                      bool &unrolled, bool &directCopies) {
  splits = 1;
  streamK = 0;
  scoresAhead = false;
  pingPong = false;
  unrolled = false;
  directCopies = false;
  constexpr StringLiteral kOrder[] = {"instr",        "splits",    "stream_k",
                                      "scores_ahead", "ping_pong", "unrolled",
                                      "direct_copies"};
  size_t next = 0;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return failure();
    const StringLiteral *found =
        std::find(std::begin(kOrder) + next, std::end(kOrder), keyword);
    if (found == std::end(kOrder))
      return parser.emitError(loc)
             << "expected 'instr', 'splits', 'stream_k', 'scores_ahead', "
                "'ping_pong', 'unrolled' or 'direct_copies' (each once, in "
                "this order), got '"
             << keyword << "'";
    next = found - std::begin(kOrder) + 1;
    if (keyword == "scores_ahead" || keyword == "ping_pong" ||
        keyword == "unrolled" || keyword == "direct_copies") {
      if (succeeded(parser.parseOptionalEqual()))
        return parser.emitError(loc)
               << "'" << keyword << "' is a flag: it takes no value";
      (keyword == "scores_ahead" ? scoresAhead
       : keyword == "ping_pong"  ? pingPong
       : keyword == "unrolled"   ? unrolled
                                 : directCopies) = true;
      continue;
    }
    if (parser.parseEqual())
      return failure();
    if (keyword == "instr"    ? parser.parseAttribute(instr)
        : keyword == "splits" ? parser.parseInteger(splits)
                              : parser.parseInteger(streamK))
      return failure();
  }
  return success();
}

static void printConfigOptions(AsmPrinter &printer, StringAttr instr,
                               int64_t splits, int64_t streamK,
                               bool scoresAhead, bool pingPong, bool unrolled,
                               bool directCopies) {
  if (instr) {
    printer << ", instr = ";
    printer.printAttribute(instr);
  }
  if (splits != 1)
    printer << ", splits = " << splits;
  if (streamK != 0)
    printer << ", stream_k = " << streamK;
  if (scoresAhead)
    printer << ", scores_ahead";
  if (pingPong)
    printer << ", ping_pong";
  if (unrolled)
    printer << ", unrolled";
  if (directCopies)
    printer << ", direct_copies";
}

#include "tessel/Dialect/Tessel/IR/TesselAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselAttrs.cpp.inc"

void TesselDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tessel/Dialect/Tessel/IR/TesselAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Turns a layout-library error into a diagnostic.
static FailureOr<LinearLayout>
toDiagnostic(llvm::Expected<LinearLayout> layout,
             function_ref<InFlightDiagnostic()> emitError) {
  if (layout)
    return std::move(*layout);
  InFlightDiagnostic diag = emitError();
  diag << llvm::toString(layout.takeError());
  return diag;
}

static bool allPowersOfTwo(ArrayRef<int64_t> values) {
  return llvm::all_of(values, [](int64_t value) {
    return value > 0 && llvm::isPowerOf2_64(value);
  });
}

static bool isPermutation(ArrayRef<int64_t> order) {
  SmallVector<int64_t> sorted(order);
  llvm::sort(sorted);
  for (auto [index, value] : llvm::enumerate(sorted))
    if (value != int64_t(index))
      return false;
  return true;
}

FailureOr<LinearLayout>
tessel::getLinearLayout(Attribute attr, ArrayRef<int64_t> shape,
                        function_ref<InFlightDiagnostic()> emitError) {
  auto layout = dyn_cast<LayoutAttrInterface>(attr);
  if (!layout) {
    InFlightDiagnostic diag = emitError();
    diag << "attribute " << attr << " is not a tessel layout";
    return diag;
  }
  return layout.toLinearLayout(shape, emitError);
}

/// Bounds on a distributed tile: what one workgroup can hold. A lane has at
/// most 512 registers of 4 bytes (256 VGPRs + 256 AGPRs), so more than 2048
/// elements per lane (bytes, at the narrowest) cannot be held; tiles are at
/// most 2^16 along a dimension and 2^20 elements in all.
static constexpr int kMaxRegistersPerLaneLog2 = 11;

LogicalResult
tessel::verifyTileShape(ArrayRef<int64_t> shape,
                        function_ref<InFlightDiagnostic()> emitError) {
  int64_t elements = 1;
  for (int64_t size : shape) {
    if (ShapedType::isDynamic(size))
      return emitError() << "a tile must have static sizes, got a dynamic one";
    if (size <= 0 || size > kMaxTileDim)
      return emitError() << "a tile must have sizes from 1 to " << kMaxTileDim
                         << ", got " << size;
    elements *= size;
    if (elements > kMaxTileElements)
      return emitError() << "a tile may hold at most " << kMaxTileElements
                         << " elements";
  }
  return success();
}

/// The tensor-encoding check shared by the distributed layouts: a static
/// shape within the bounds above that the layout fits.
static LogicalResult
verifyDistributedEncoding(LayoutAttrInterface layout, ArrayRef<int64_t> shape,
                          function_ref<InFlightDiagnostic()> emitError) {
  if (failed(verifyTileShape(shape, [&] {
        return emitError() << "layout " << Attribute(layout) << ": ";
      })))
    return failure();
  FailureOr<LinearLayout> linear = layout.toLinearLayout(shape, emitError);
  if (failed(linear))
    return failure();
  if (linear->getInDimSizeLog2(dims::kRegister) > kMaxRegistersPerLaneLog2)
    return emitError() << "layout " << Attribute(layout) << " puts 2^"
                       << linear->getInDimSizeLog2(dims::kRegister)
                       << " elements of the tile in each lane; at most 2^"
                       << kMaxRegistersPerLaneLog2
                       << " fit a lane's 512 registers";
  return success();
}

LogicalResult BlockedAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  // A thread holding more than the tile along a dimension would only hold
  // copies of the same elements.
  for (auto [d, size] : llvm::enumerate(getSizePerThread()))
    if (d < shape.size() && !ShapedType::isDynamic(shape[d]) && size > shape[d])
      return emitError() << "sizePerThread[" << d << "] = " << size
                         << " exceeds the tile's size " << shape[d]
                         << " in that dimension";
  return verifyDistributedEncoding(*this, shape, emitError);
}

LogicalResult
MmaAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                        function_ref<InFlightDiagnostic()> emitError) const {
  return verifyDistributedEncoding(*this, shape, emitError);
}

LogicalResult MmaOperandAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyDistributedEncoding(*this, shape, emitError);
}

LogicalResult
LinearAttr::verifyEncoding(ArrayRef<int64_t> shape, Type elementType,
                           function_ref<InFlightDiagnostic()> emitError) const {
  return verifyDistributedEncoding(*this, shape, emitError);
}

//===----------------------------------------------------------------------===//
// ConfigAttr
//===----------------------------------------------------------------------===//

/// Stream-K workgroups at most: each stores up to two partial tiles to a
/// workspace sized by this count.
static constexpr int64_t kMaxStreamKWorkgroups = 65536;

LogicalResult ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> tile,
                                 ArrayRef<int64_t> waves, int64_t stages,
                                 StringAttr instr, int64_t splits,
                                 int64_t streamK, bool scoresAhead,
                                 bool pingPong, bool unrolled,
                                 bool directCopies) {
  if (tile.size() != 2 && tile.size() != 3)
    return emitError() << "tile must have 3 sizes [M, N, K] (matmul) or 2 "
                          "sizes [M, N] (attention), got "
                       << tile.size();
  for (int64_t size : tile)
    if (size <= 0 || !llvm::isPowerOf2_64(size))
      return emitError() << "tile sizes must be positive powers of two, got "
                         << size;
  if (waves.size() != 2)
    return emitError() << "waves must have 2 counts [along M, along N], got "
                       << waves.size();
  for (auto [dim, count] : llvm::enumerate(waves)) {
    if (count <= 0 || !llvm::isPowerOf2_64(count))
      return emitError() << "wave counts must be positive powers of two, got "
                         << count;
    if (tile[dim] % count != 0)
      return emitError() << "tile size " << tile[dim] << " along "
                         << (dim == 0 ? "M" : "N")
                         << " is not divisible by its " << count << " waves";
  }
  if (waves[0] * waves[1] > 16)
    return emitError() << "a workgroup has at most 16 waves (1024 lanes of "
                          "wave64), got "
                       << waves[0] * waves[1];
  if (stages < 1 || stages > 4)
    return emitError() << "stages must be between 1 and 4, got " << stages;
  if (splits < 1 || splits > 64)
    return emitError() << "splits must be between 1 and 64, got " << splits;
  if (streamK < 0 || streamK > kMaxStreamKWorkgroups)
    return emitError() << "stream_k must be between 0 and "
                       << kMaxStreamKWorkgroups << " workgroups, got "
                       << streamK;
  if (streamK > 0 && splits > 1)
    return emitError() << "stream_k shares a problem's steps (a matmul's K "
                          "steps, an attention's key blocks) between "
                          "workgroups: it takes no splits";
  if (scoresAhead && tile.size() != 2)
    return emitError() << "scores_ahead computes an attention key loop's "
                          "next S^T ahead: it takes an attention tile of "
                          "[M, N]";
  if (pingPong && (!scoresAhead || stages < 3))
    return emitError() << "ping_pong alternates the phases of an attention "
                          "key loop with the scores ahead and K and V^T "
                          "double-buffered: it takes scores_ahead and stages "
                          ">= 3";
  if (pingPong && (waves[1] != 1 || waves[0] % 2 != 0))
    return emitError() << "ping_pong runs two halves of the waves a phase "
                          "apart: it takes waves = [W, 1] with W even, got ["
                       << waves[0] << ", " << waves[1] << "]";
  if (unrolled && (!scoresAhead || stages < 3 || pingPong))
    return emitError() << "unrolled unrolls an attention key loop with the "
                          "scores ahead and K and V^T double-buffered by "
                          "two: it takes scores_ahead and stages >= 3, and "
                          "no ping_pong (whose loop is unrolled by its slots "
                          "where that pays)";
  if (directCopies && (tile.size() != 3 || stages != 2))
    return emitError() << "direct_copies copies a matmul's K-loop operands "
                          "into two LDS slots: it takes a matmul tile of "
                          "[M, N, K] and stages = 2";
  if (instr && !instr.getValue().starts_with("v_mfma_") &&
      !instr.getValue().starts_with("v_wmma_"))
    return emitError() << "instr must name an MFMA or WMMA instruction "
                          "(v_mfma_* or v_wmma_*), got \""
                       << instr.getValue() << "\"";
  return success();
}

int64_t ConfigAttr::getNumWaves() const {
  return getWaves()[0] * getWaves()[1];
}

//===----------------------------------------------------------------------===//
// BlockedAttr
//===----------------------------------------------------------------------===//

LogicalResult BlockedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  ArrayRef<int64_t> sizePerThread,
                                  ArrayRef<int64_t> threadsPerWave,
                                  ArrayRef<int64_t> waves,
                                  ArrayRef<int64_t> order) {
  size_t rank = sizePerThread.size();
  if (rank == 0 || threadsPerWave.size() != rank || waves.size() != rank ||
      order.size() != rank)
    return emitError() << "sizePerThread, threadsPerWave, waves and order "
                          "must have one entry per tile dimension";
  if (!allPowersOfTwo(sizePerThread) || !allPowersOfTwo(threadsPerWave) ||
      !allPowersOfTwo(waves))
    return emitError() << "sizePerThread, threadsPerWave and waves must be "
                          "positive powers of two";
  if (!isPermutation(order))
    return emitError() << "order must be a permutation of 0.." << rank - 1;
  int64_t lanes = 1;
  for (int64_t count : threadsPerWave)
    lanes *= count;
  if (lanes != 32 && lanes != 64)
    return emitError() << "threadsPerWave must multiply to a wave (32 or 64 "
                          "lanes), got "
                       << lanes;
  int64_t numWaves = 1;
  for (int64_t count : waves)
    numWaves *= count;
  if (numWaves * lanes > 1024)
    return emitError() << "a workgroup has at most 1024 lanes (" << 1024 / lanes
                       << " waves of " << lanes << "), got " << numWaves
                       << " waves";
  return success();
}

FailureOr<LinearLayout> BlockedAttr::toLinearLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  return toDiagnostic(blockedLayout(shape, getSizePerThread(),
                                    getThreadsPerWave(), getWaves(),
                                    getOrder()),
                      emitError);
}

//===----------------------------------------------------------------------===//
// MmaAttr
//===----------------------------------------------------------------------===//

/// The catalogue entry `instr` names on `chip` (or, without a chip, its only
/// family), with a diagnostic when there is none or several.
static FailureOr<const MmaInstr *>
resolveInstruction(StringRef instr, StringRef chipName,
                   function_ref<InFlightDiagnostic()> emitError) {
  SmallVector<const MmaInstr *, 2> candidates = lookupMmaByName(instr);
  if (candidates.empty())
    return emitError() << "unknown matrix instruction \"" << instr
                       << "\" (not in the matrix-instruction catalogue)";
  if (chipName.empty()) {
    // Entries of one family share their layouts (an f8f6f4 name has one
    // per pair of formats); a WMMA name differs between gfx11 and gfx12.
    if (llvm::any_of(candidates, [&](const MmaInstr *candidate) {
          return candidate->family != candidates.front()->family;
        }))
      return emitError() << "\"" << instr
                         << "\" has different layouts on gfx11 and gfx12: "
                            "name the chip (chip = \"gfx1100\" or "
                            "\"gfx1201\")";
    return candidates.front();
  }
  const Chip *chip = lookupChip(chipName);
  if (!chip)
    return emitError() << "unknown chip \"" << chipName
                       << "\"; known chips: " << knownChipNames();
  for (const MmaInstr *candidate : candidates)
    if (candidate->isAvailableOn(*chip))
      return candidate;
  return emitError() << "\"" << instr << "\" is not available on " << chipName
                     << " (it is on " << candidates.front()->getChipNames()
                     << ")";
}

LogicalResult MmaAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              StringRef instr, ArrayRef<int64_t> waves,
                              StringRef chip, unsigned waveSize,
                              bool transposed) {
  FailureOr<const MmaInstr *> resolved =
      resolveInstruction(instr, chip, emitError);
  if (failed(resolved))
    return failure();
  if (waves.size() != 2 || !allPowersOfTwo(waves))
    return emitError() << "waves must be two positive powers of two [along "
                          "M, along N]";
  if (waveSize != 0 &&
      !llvm::is_contained((*resolved)->getWaveSizes(), waveSize))
    return emitError() << "\"" << instr << "\" does not run in wave"
                       << waveSize;
  const MmaInstr &resolvedInstr = **resolved;
  if (transposed &&
      (resolvedInstr.isWmma() || resolvedInstr.m != resolvedInstr.n))
    return emitError() << "transposed needs a square MFMA instruction (its A "
                          "and B lane layouts swap), got \""
                       << instr << "\"";
  return success();
}

const MmaInstr &MmaAttr::getInstruction() const {
  return **resolveInstruction(getInstr(), getChip(), [&] {
    return emitError(UnknownLoc::get(getContext()));
  });
}

unsigned MmaAttr::getEffectiveWaveSize() const {
  if (getWaveSize())
    return getWaveSize();
  if (!getInstruction().isWmma())
    return 64;
  const Chip *chip = lookupChip(getChip());
  return chip ? chip->defaultWaveSize : 32;
}

FailureOr<LinearLayout>
MmaAttr::toLinearLayout(ArrayRef<int64_t> shape,
                        function_ref<InFlightDiagnostic()> emitError) const {
  return toDiagnostic(mmaAccumulatorLayout(
                          getInstruction(), getEffectiveWaveSize(),
                          getWaves()[0], getWaves()[1], shape, getTransposed()),
                      emitError);
}

//===----------------------------------------------------------------------===//
// MmaOperandAttr
//===----------------------------------------------------------------------===//

LogicalResult
MmaOperandAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       unsigned operandIndex, MmaAttr parent, int64_t kWidth) {
  if (operandIndex > 1)
    return emitError() << "operand must be a or b";
  if (!parent)
    return emitError() << "expected a #tessel.mma parent layout";
  const MmaInstr &instr = parent.getInstruction();
  int64_t perLane =
      instr.getOperandElementsPerLane(parent.getEffectiveWaveSize());
  if (kWidth <= 0 || !llvm::isPowerOf2_64(kWidth))
    return emitError() << "kWidth must be a power of two (a multiple or a "
                          "fraction of the "
                       << perLane << " elements per lane of " << instr.name
                       << "), got " << kWidth;
  if (instr.isWmma() && kWidth != perLane)
    return emitError() << "kWidth of a WMMA operand must be its " << perLane
                       << " elements per lane, got " << kWidth;
  return success();
}

FailureOr<LinearLayout> MmaOperandAttr::toLinearLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  MmaAttr parent = getParent();
  return toDiagnostic(
      mmaOperandLayout(parent.getInstruction(), parent.getEffectiveWaveSize(),
                       parent.getWaves()[0], parent.getWaves()[1],
                       getOperandIndex() == 0 ? MmaOperand::A : MmaOperand::B,
                       getKWidth(), shape),
      emitError);
}

//===----------------------------------------------------------------------===//
// SwizzleAttr
//===----------------------------------------------------------------------===//

LogicalResult SwizzleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t vec, int64_t perPhase,
                                  int64_t maxPhase, ArrayRef<int64_t> order,
                                  bool fold) {
  if (!allPowersOfTwo({vec, perPhase, maxPhase}))
    return emitError() << "vec, perPhase and maxPhase must be positive powers "
                          "of two";
  if (!order.empty() && (order.size() != 2 || !isPermutation(order)))
    return emitError() << "order must be [1, 0] or [0, 1]";
  return success();
}

SmallVector<int64_t, 2> SwizzleAttr::getEffectiveOrder() const {
  if (getOrder().empty())
    return {1, 0};
  return SmallVector<int64_t, 2>(getOrder());
}

FailureOr<LinearLayout> SwizzleAttr::toLinearLayout(
    ArrayRef<int64_t> shape,
    function_ref<InFlightDiagnostic()> emitError) const {
  return toDiagnostic(swizzledLdsLayout(shape, getVec(), getPerPhase(),
                                        getMaxPhase(), getEffectiveOrder(),
                                        getFold()),
                      emitError);
}

//===----------------------------------------------------------------------===//
// LinearAttr
//===----------------------------------------------------------------------===//

static constexpr StringLiteral kLinearInDims[] = {
    dims::kRegister, dims::kLane, dims::kWave, dims::kBlock, dims::kOffset};

SmallVector<std::pair<StringRef, ArrayRef<int64_t>>, 5>
LinearAttr::getAllBases() const {
  return {{kLinearInDims[0], getRegisterBases()},
          {kLinearInDims[1], getLaneBases()},
          {kLinearInDims[2], getWaveBases()},
          {kLinearInDims[3], getBlockBases()},
          {kLinearInDims[4], getOffsetBases()}};
}

LogicalResult LinearAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 unsigned rank, ArrayRef<int64_t> registerBases,
                                 ArrayRef<int64_t> laneBases,
                                 ArrayRef<int64_t> waveBases,
                                 ArrayRef<int64_t> blockBases,
                                 ArrayRef<int64_t> offsetBases) {
  ArrayRef<int64_t> all[] = {registerBases, laneBases, waveBases, blockBases,
                             offsetBases};
  for (auto [name, bases] : llvm::zip(kLinearInDims, all)) {
    if (!bases.empty() && rank == 0)
      return emitError() << "bases of '" << name << "' have no coordinates";
    if (rank && bases.size() % rank)
      return emitError() << "every basis must have " << rank << " coordinates";
    if (llvm::any_of(bases, [](int64_t v) { return v < 0; }))
      return emitError() << "basis coordinates must be non-negative";
  }
  return success();
}

Attribute LinearAttr::parse(AsmParser &parser, Type) {
  unsigned rank = 0;
  SmallVector<SmallVector<int64_t>, 5> flat(std::size(kLinearInDims));
  SmallVector<bool, 5> seen(std::size(kLinearInDims), false);
  auto parseBasis = [&](SmallVector<int64_t> &into) -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    SmallVector<int64_t, 4> basis;
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
          return parser.parseInteger(basis.emplace_back());
        }))
      return failure();
    if (rank == 0)
      rank = basis.size();
    if (basis.size() != rank || rank == 0)
      return parser.emitError(loc) << "every basis must have the same number "
                                      "(at least one) of coordinates";
    into.append(basis.begin(), basis.end());
    return success();
  };
  auto parseEntry = [&]() -> ParseResult {
    StringRef name;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&name) || parser.parseEqual())
      return failure();
    const auto *it = llvm::find(kLinearInDims, name);
    if (it == std::end(kLinearInDims))
      return parser.emitError(loc)
             << "unknown input dimension '" << name
             << "'; expected register, lane, wave, block or offset";
    size_t index = it - std::begin(kLinearInDims);
    if (seen[index])
      return parser.emitError(loc) << "'" << name << "' appears twice";
    seen[index] = true;
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Square, [&] { return parseBasis(flat[index]); });
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::LessGreater,
                                     parseEntry))
    return {};
  return parser.getChecked<LinearAttr>(parser.getContext(), rank, flat[0],
                                       flat[1], flat[2], flat[3], flat[4]);
}

void LinearAttr::print(AsmPrinter &printer) const {
  printer << "<";
  bool first = true;
  for (auto [name, bases] : getAllBases()) {
    if (bases.empty())
      continue;
    printer << (first ? "" : ", ") << name << " = [";
    first = false;
    for (size_t i = 0; i < bases.size(); i += getRank()) {
      printer << (i ? ", [" : "[");
      llvm::interleaveComma(bases.slice(i, getRank()), printer);
      printer << "]";
    }
    printer << "]";
  }
  printer << ">";
}

FailureOr<LinearLayout>
LinearAttr::toLinearLayout(ArrayRef<int64_t> shape,
                           function_ref<InFlightDiagnostic()> emitError) const {
  if (getRank() && getRank() != shape.size())
    return emitError() << "the bases have " << getRank()
                       << " coordinates but the tile has rank " << shape.size();
  SmallVector<LinearLayout::InDim, 5> ins;
  for (auto [name, bases] : getAllBases()) {
    if (bases.empty())
      continue;
    LinearLayout::InDim in{name.str(), {}};
    for (size_t i = 0; i < bases.size(); i += getRank())
      in.bases.emplace_back(bases.begin() + i, bases.begin() + i + getRank());
    ins.push_back(std::move(in));
  }
  SmallVector<LinearLayout::OutDim, 4> outs;
  for (auto [d, size] : llvm::enumerate(shape))
    outs.push_back({dims::tileDim(d), int32_t(size)});
  return toDiagnostic(LinearLayout::get(ins, outs), emitError);
}
