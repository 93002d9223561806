//===- Tile.cpp - Problem ops (L0) to tile programs (L1) --------*- C++ -*-===//

#include "TileSupport.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Perf/DecodeEstimate.h"
#include "tessel/Target/Chip.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <limits>
#include <optional>

namespace tessel {
#define GEN_PASS_DEF_TESSELTILEPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

namespace {

/// `in_bounds` for a tile of `extents` at tile-aligned indices of `type`'s
/// last two dimensions (within the grid and the loop bounds, as the matmul
/// program places them): static, non-zero sizes that the tile divides.
static UnitAttr inBounds(MemRefType type, ArrayRef<int64_t> extents) {
  int64_t rank = type.getRank();
  for (auto [d, extent] : llvm::enumerate(extents)) {
    int64_t size = type.getDimSize(rank - 2 + d);
    if (ShapedType::isDynamic(size) || size == 0 || size % extent)
      return nullptr;
  }
  return UnitAttr::get(type.getContext());
}

/// Builds the tile program of one matmul in place of it.
class MatmulTiler : TileProgramBuilder {
public:
  /// Whole: the whole K loop, the epilogue and C. Split (split-K): this
  /// workgroup's share of K, its partial accumulator to the `workspace`;
  /// the last split of a tile to arrive (`counters`) sums the partials in
  /// split order (deterministic), then applies the epilogue and writes C.
  /// StreamK: this workgroup's even share of all tiles' K steps; tiles it
  /// runs whole as Whole, pieces of cut tiles as splits of that tile.
  enum class Mode { Whole, Split, StreamK };

  MatmulTiler(MatmulOp matmul, const TileTarget &target,
              Mode mode = Mode::Whole, Value workspace = {},
              Value counters = {})
      : TileProgramBuilder(matmul), matmul(matmul),
        config(matmul.getConfigAttr()), target(target), mode(mode),
        workspace(workspace), counters(counters) {}

  LogicalResult run();

private:
  Value remapOverXcds(Value linear, Value total) {
    return tessel::remapOverXcds(b, loc, linear, total, target.xcds);
  }
  /// The (row, col) of tile `linear` of a gridY x gridX grid in grouped
  /// order (kTileGroupRows rows at a time).
  std::pair<Value, Value> groupedPosition(Value linear, Value gridX,
                                          Value gridY);
  /// The (row, col) tile of this workgroup in a gridY x gridX grid: the
  /// arithmetic of getMatmulTilePosition over the program ids.
  std::pair<Value, Value> tilePosition(Value gridX, Value gridY);
  /// Indices of the tile at (row, col) of the last two dimensions.
  SmallVector<Value> indices(Value row, Value col) {
    SmallVector<Value> result;
    if (batch)
      result.push_back(batch);
    result.append({row, col});
    return result;
  }
  /// Indices of split `split`'s tile at (row, col) in the workspace
  /// ([batch,] splits, M, N).
  SmallVector<Value> workspaceIndices(Value split, Value row, Value col) {
    SmallVector<Value> result;
    if (batch)
      result.push_back(batch);
    result.append({split, row, col});
    return result;
  }
  /// The sum of two accumulator tiles (integer or float).
  static Value addTiles(OpBuilder &builder, Location at, Value x, Value y) {
    if (isa<IntegerType>(getElementTypeOrSelf(x.getType())))
      return arith::AddIOp::create(builder, at, x, y);
    return arith::AddFOp::create(builder, at, x, y);
  }
  /// A tile of zeros.
  Value zeroTile(RankedTensorType type) {
    Type element = type.getElementType();
    TypedAttr zero = isa<IntegerType>(element)
                         ? TypedAttr(b.getIntegerAttr(element, 0))
                         : TypedAttr(b.getFloatAttr(element, 0.0));
    return arith::ConstantOp::create(b, loc, type,
                                     SplatElementsAttr::get(type, zero));
  }
  /// The K loop over [kBegin, kEnd) of the tile at (m0, n0): the
  /// accumulator tile it produces. `evenTripCount`: the loop runs an even
  /// number of steps on every entry (kEvenTripCountAttrName).
  Value buildKLoop(Value m0, Value n0, Value kBegin, Value kEnd,
                   RankedTensorType accType, bool evenTripCount = false);
  /// Stream-K: the loop over this workgroup's tiles, each tile's K loop over
  /// the workgroup's steps of it, C for tiles it runs whole, the partials
  /// and their sum for the others.
  LogicalResult buildStreamK(Value gridX, Value gridY,
                             RankedTensorType accType);
  /// The epilogue applied to `accumulator` and the result stored to C.
  LogicalResult finishTile(Value accumulator, Value m0, Value n0);
  /// The split partials of the tile at (m0, n0) summed in split order.
  Value sumPartials(Value m0, Value n0, RankedTensorType accType);
  RankedTensorType tileType(ArrayRef<int64_t> shape, Type element,
                            Attribute layout) {
    return RankedTensorType::get(shape, element, layout);
  }
  /// A view of `extra` broadcast to C's shape (stride 0 along the
  /// dimensions it lacks or has of size 1), NumPy style.
  Value broadcastView(Value extra);
  /// The epilogue applied to the accumulator tile: each op of the region
  /// cloned on tiles in the accumulator's layout.
  FailureOr<Value> applyEpilogue(Value accumulator, Value m0, Value n0);

  MatmulOp matmul;
  ConfigAttr config;
  TileTarget target;
  Mode mode;
  Value workspace; // partials; Split ([batch,] splits, M, N) and StreamK
                   // (workgroups, 2, tileM, tileN) only
  Value counters;  // arrivals per C tile; Split and StreamK only
  Value batch;
  MmaAttr accumulatorLayout;
};

} // namespace

std::pair<Value, Value> MatmulTiler::groupedPosition(Value linear, Value gridX,
                                                     Value gridY) {
  Value one = constIndex(1);
  Value groupRows = constIndex(kTileGroupRows);
  Value perGroup = arith::MaxUIOp::create(b, loc, mul(groupRows, gridX), one);
  Value firstRow = mul(div(linear, perGroup), groupRows);
  Value rows = arith::MaxUIOp::create(
      b, loc, arith::MinUIOp::create(b, loc, groupRows, sub(gridY, firstRow)),
      one);
  Value inGroup = rem(linear, perGroup);
  return {add(firstRow, rem(inGroup, rows)), div(inGroup, rows)};
}

std::pair<Value, Value> MatmulTiler::tilePosition(Value gridX, Value gridY) {
  Value pidX =
      ProgramIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value pidY =
      ProgramIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(1));
  Value linear = add(pidX, mul(pidY, gridX));
  Value total = mul(gridX, gridY);
  return groupedPosition(remapOverXcds(linear, total), gridX, gridY);
}

Value MatmulTiler::broadcastView(Value extra) {
  auto extraType = cast<MemRefType>(extra.getType());
  MemRefType cType = matmul.getC().getType();
  int64_t rank = cType.getRank(), extraRank = extraType.getRank();
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, extra);
  SmallVector<int64_t> extraStrides;
  int64_t extraOffset;
  if (failed(extraType.getStridesAndOffset(extraStrides, extraOffset)))
    extraStrides.assign(extraRank, ShapedType::kDynamic);
  // Sizes and strides stay static where they are: the lowering vectorizes
  // along a unit stride, and a zero stride lets LLVM load a broadcast
  // element once per lane instead of once per register.
  SmallVector<OpFoldResult> sizes, strides;
  SmallVector<int64_t> staticStrides;
  for (int64_t d = 0; d < rank; ++d) {
    sizes.push_back(cType.isDynamicDim(d)
                        ? dim(matmul.getC(), d)
                        : OpFoldResult(b.getIndexAttr(cType.getDimSize(d))));
    int64_t extraDim = d - (rank - extraRank);
    bool broadcast = extraDim < 0 || extraType.getDimSize(extraDim) == 1;
    int64_t stride = broadcast ? 0 : extraStrides[extraDim];
    staticStrides.push_back(stride);
    strides.push_back(ShapedType::isDynamic(stride)
                          ? OpFoldResult(metadata.getStrides()[extraDim])
                          : OpFoldResult(b.getIndexAttr(stride)));
  }
  auto layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                       staticStrides);
  auto viewType =
      MemRefType::get(cType.getShape(), extraType.getElementType(), layout);
  return memref::ReinterpretCastOp::create(
      b, loc, viewType, metadata.getBaseBuffer(),
      OpFoldResult(metadata.getOffset()), sizes, strides);
}

FailureOr<Value> MatmulTiler::applyEpilogue(Value accumulator, Value m0,
                                            Value n0) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(accumulator.getType()).getShape();
  Region &region = matmul.getEpilogue();
  Type cElement = matmul.getC().getType().getElementType();
  if (region.empty()) {
    // Convert the accumulator to C's element type.
    Type accElement =
        cast<RankedTensorType>(accumulator.getType()).getElementType();
    if (accElement == cElement)
      return accumulator;
    auto type = tileType(shape, cElement, accumulatorLayout);
    if (isa<FloatType>(cElement) && isa<FloatType>(accElement))
      return cElement.getIntOrFloatBitWidth() <
                     accElement.getIntOrFloatBitWidth()
                 ? arith::TruncFOp::create(b, loc, type, accumulator)
                       .getResult()
                 : arith::ExtFOp::create(b, loc, type, accumulator).getResult();
    if (isa<FloatType>(cElement))
      return arith::SIToFPOp::create(b, loc, type, accumulator).getResult();
    return arith::FPToSIOp::create(b, loc, type, accumulator).getResult();
  }

  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArgument(0), accumulator);
  for (auto [extra, argument] :
       llvm::zip(matmul.getExtras(), block.getArguments().drop_front())) {
    if (isa<MemRefType>(extra.getType())) {
      Value view = broadcastView(extra);
      mapping.map(
          argument,
          LoadOp::create(b, loc,
                         tileType(shape, argument.getType(), accumulatorLayout),
                         view, indices(m0, n0),
                         inBounds(cast<MemRefType>(view.getType()), shape)));
    } else {
      mapping.map(argument,
                  tensor::SplatOp::create(
                      b, loc,
                      tileType(shape, extra.getType(), accumulatorLayout),
                      extra));
    }
  }
  for (Operation &op : block.without_terminator()) {
    if (!op.hasTrait<OpTrait::Elementwise>() && !isa<arith::ConstantOp>(op))
      return op.emitOpError()
             << "cannot be applied to a tile: epilogue ops must be "
                "elementwise (arith, math)";
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto type = tileType(shape, constant.getType(), accumulatorLayout);
      mapping.map(
          constant.getResult(),
          arith::ConstantOp::create(
              b, loc, type, SplatElementsAttr::get(type, constant.getValue())));
      continue;
    }
    OperationState state(op.getLoc(), op.getName());
    for (Value operand : op.getOperands())
      state.addOperands(mapping.lookup(operand));
    for (Type type : op.getResultTypes())
      state.addTypes(tileType(shape, type, accumulatorLayout));
    state.addAttributes(op.getAttrs());
    Operation *clone = b.create(state);
    mapping.map(op.getResults(), clone->getResults());
  }
  return mapping.lookup(block.getTerminator()->getOperand(0));
}

Value MatmulTiler::buildKLoop(Value m0, Value n0, Value kBegin, Value kEnd,
                              RankedTensorType accType, bool evenTripCount) {
  MLIRContext *context = b.getContext();
  ArrayRef<int64_t> tile = config.getTile();
  int64_t tileM = tile[0], tileN = tile[1], tileK = tile[2];
  unsigned numWaves = config.getNumWaves();
  Value a = matmul.getA(), bMatrix = matmul.getB();
  MemRefType aType = matmul.getA().getType(), bType = matmul.getB().getType();
  Type aElement = aType.getElementType(), bElement = bType.getElementType();
  const MmaInstr &instr =
      *lookupMmaByName(config.getInstr().getValue()).front();
  // An operand stored with K contiguous is loaded in 16-byte runs along K.
  // One stored the other way (B as K x N, A as K x M) is loaded with each
  // lane also holding a run along K, one instruction's K elements, so that
  // LDS can keep K contiguous: the operand is then read in K runs, as in
  // the K-contiguous case, instead of element by element (where the K
  // tile's LDS rows are wide enough, writesOperandInKRuns). Where LDS reads
  // can transpose (readsOperandTransposed) it is loaded as stored and read
  // transposed instead.
  const Chip *chip = lookupChip(target.chip);
  auto operandLayout = [&](ArrayRef<int64_t> shape, int64_t kDim,
                           MemRefType type) {
    int64_t contiguous = getContiguousTileDim(type);
    unsigned bytes =
        llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
    if (contiguous == kDim ||
        (chip && readsOperandTransposed(*chip, instr, bytes)) ||
        !writesOperandInKRuns(instr, target.waveSize, tileK, bytes))
      return getCoalescedLayout(context, shape, contiguous, bytes, numWaves,
                                target.waveSize);
    return getSpreadCoalescedLayout(
        context, shape, contiguous, bytes, numWaves, target.waveSize,
        instr.getOperandElementsPerLane(target.waveSize));
  };
  auto aLayout = operandLayout({tileM, tileK}, 1, aType);
  auto bLayout = operandLayout({tileK, tileN}, 0, bType);
  // Lanes holding runs along K across the rows of a memref stored the other
  // way: the lowering shares one lane offset between those rows.
  auto holdsKRunsAcrossRows = [](BlockedAttr layout, int64_t kDim) {
    return layout.getOrder()[0] != kDim && layout.getSizePerThread()[kDim] > 1;
  };
  bool constantRowsA = holdsKRunsAcrossRows(aLayout, 1);
  bool constantRowsB = holdsKRunsAcrossRows(bLayout, 0);
  Value init = zeroTile(accType);
  bool xf32 = instr.a == MmaElement::Xf32;
  auto loop = scf::ForOp::create(
      b, loc, kBegin, kEnd, constIndex(tileK), ValueRange{init},
      [&](OpBuilder &nested, Location nestedLoc, Value k0, ValueRange iters) {
        auto aTile = LoadOp::create(
            nested, nestedLoc, tileType({tileM, tileK}, aElement, aLayout), a,
            indices(m0, k0), inBounds(aType, {tileM, tileK}));
        auto bTile = LoadOp::create(
            nested, nestedLoc, tileType({tileK, tileN}, bElement, bLayout),
            bMatrix, indices(k0, n0), inBounds(bType, {tileK, tileN}));
        for (auto [load, constantRows] :
             {std::pair{aTile, constantRowsA}, {bTile, constantRowsB}})
          if (load.getInBounds() && constantRows)
            load->setAttr(kConstantRowOffsetsAttrName, nested.getUnitAttr());
        auto dot =
            DotOp::create(nested, nestedLoc, accType, aTile, bTile, iters[0],
                          xf32 ? nested.getUnitAttr() : UnitAttr());
        scf::YieldOp::create(nested, nestedLoc, dot.getResult());
      });
  if (evenTripCount)
    loop->setAttr(kEvenTripCountAttrName, b.getUnitAttr());
  return loop.getResult(0);
}

Value MatmulTiler::sumPartials(Value m0, Value n0, RankedTensorType accType) {
  ArrayRef<int64_t> tile = config.getTile();
  auto workspaceType = cast<MemRefType>(workspace.getType());
  UnitAttr inBoundsAttr = inBounds(workspaceType, {tile[0], tile[1]});
  auto loop = scf::ForOp::create(
      b, loc, constIndex(0), constIndex(config.getSplits()), constIndex(1),
      ValueRange{zeroTile(accType)},
      [&](OpBuilder &nested, Location nestedLoc, Value split,
          ValueRange iters) {
        Value partial =
            LoadOp::create(nested, nestedLoc, accType, workspace,
                           workspaceIndices(split, m0, n0), inBoundsAttr);
        scf::YieldOp::create(nested, nestedLoc,
                             addTiles(nested, nestedLoc, iters[0], partial));
      });
  return loop.getResult(0);
}

LogicalResult MatmulTiler::finishTile(Value accumulator, Value m0, Value n0) {
  ArrayRef<int64_t> tile = config.getTile();
  FailureOr<Value> result = applyEpilogue(accumulator, m0, n0);
  if (failed(result))
    return failure();
  StoreOp::create(b, loc, *result, matmul.getC(), indices(m0, n0),
                  inBounds(matmul.getC().getType(), {tile[0], tile[1]}));
  return success();
}

LogicalResult MatmulTiler::buildStreamK(Value gridX, Value gridY,
                                        RankedTensorType accType) {
  ArrayRef<int64_t> tile = config.getTile();
  int64_t tileM = tile[0], tileN = tile[1], tileK = tile[2];
  Value a = matmul.getA();
  int64_t k = matmul.getA().getType().getShape().back();
  // T K steps in all (I per tile, tiles in grouped order), shared by G
  // workgroups in units of two steps where I is even and every workgroup
  // still gets a unit (then each piece of a tile is a whole number of
  // pairs: the K loop unrolled by two needs no loop for an odd last step),
  // else of one: of the U units, the first U mod G workgroups take
  // q + 1, the others q.
  int64_t workgroups = config.getStreamK();
  int64_t perTile = llvm::divideCeil(k, tileK);
  int64_t steps = getStreamKSteps(matmul);
  int64_t unit = perTile % 2 == 0 && steps / 2 >= workgroups ? 2 : 1;
  int64_t units = steps / unit;
  int64_t quotient = units / workgroups, remainder = units % workgroups;
  Value stepsPerTile = constIndex(perTile), q = constIndex(quotient),
        r = constIndex(remainder), one = constIndex(1),
        unitSteps = constIndex(unit);
  // (Ops are created one statement at a time: argument evaluation order
  // differs between compilers, and the IR must not.)
  auto firstStepOf = [&](Value w) {
    Value extra = arith::MinUIOp::create(b, loc, w, r);
    Value whole = mul(w, q);
    return mul(add(whole, extra), unitSteps);
  };
  // The workgroup that runs step `step` (the inverse of firstStepOf).
  Value longShare = constIndex(remainder * (quotient + 1));
  auto ownerOf = [&](Value step) {
    Value inUnits = div(step, unitSteps);
    Value inLong = div(inUnits, constIndex(quotient + 1));
    Value inShort = add(r, div(sub(inUnits, longShare), q));
    return arith::SelectOp::create(b, loc, less(inUnits, longShare), inLong,
                                   inShort)
        .getResult();
  };

  Value pid =
      ProgramIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value w = remapOverXcds(pid, constIndex(workgroups));
  Value begin = firstStepOf(w);
  Value end = firstStepOf(add(w, one));
  Value firstTile = div(begin, stepsPerTile);
  Value lastTile = div(sub(end, one), stepsPerTile);
  auto tiles = scf::ForOp::create(b, loc, firstTile, add(lastTile, one), one);
  tiles->setAttr(kTileLoopAttrName, b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(tiles.getBody()->getTerminator());
  Value t = tiles.getInductionVar();
  auto [row, col] = groupedPosition(t, gridX, gridY);
  Value m0 = mul(row, constIndex(tileM)), n0 = mul(col, constIndex(tileN));
  // This workgroup's steps of tile t: [stepBegin, stepEnd) of its I.
  Value tileBegin = mul(t, stepsPerTile);
  Value stepBegin =
      sub(arith::MaxUIOp::create(b, loc, begin, tileBegin), tileBegin);
  Value stepEnd =
      sub(arith::MinUIOp::create(b, loc, end, add(tileBegin, stepsPerTile)),
          tileBegin);
  Value kTile = constIndex(tileK);
  Value kStepsEnd = mul(stepEnd, kTile);
  Value kEnd = arith::MinUIOp::create(b, loc, dim(a, 1), kStepsEnd);
  Value accumulator = buildKLoop(m0, n0, mul(stepBegin, kTile), kEnd, accType,
                                 /*evenTripCount=*/unit == 2);

  // A tile this workgroup runs whole is finished right away. A piece of a
  // cut tile goes to the workspace at (workgroup, 0) for the workgroup's
  // first tile or (workgroup, 1) for its last; the last piece to arrive
  // sums the pieces in workgroup order and finishes the tile. Both share
  // one sum loop (empty for a whole tile, which starts from its own
  // accumulator) and one epilogue, so that no tile flows out of a branch.
  auto eq = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y)
        .getResult();
  };
  Value toEnd = eq(stepEnd, stepsPerTile);
  Value fromStart = eq(stepBegin, constIndex(0));
  Value whole = arith::AndIOp::create(b, loc, fromStart, toEnd);
  Value zero = constIndex(0);
  auto slotOf = [&](Value workgroup) {
    // The piece is the workgroup's first when its steps begin in tile t.
    Value later = less(firstStepOf(workgroup), tileBegin);
    return arith::SelectOp::create(b, loc, later, one, zero).getResult();
  };
  auto workspaceType = cast<MemRefType>(workspace.getType());
  UnitAttr inBoundsAttr = inBounds(workspaceType, {tileM, tileN});
  Value firstOwner = ownerOf(tileBegin);
  Value lastOwner = ownerOf(sub(add(tileBegin, stepsPerTile), one));
  Value falseValue = arith::ConstantIntOp::create(b, loc, 0, 1);
  auto ifCut = scf::IfOp::create(b, loc, TypeRange{b.getI1Type()}, whole,
                                 /*withElse=*/true);
  b.setInsertionPointToStart(ifCut.thenBlock());
  scf::YieldOp::create(b, loc, falseValue);
  b.setInsertionPointToStart(ifCut.elseBlock());
  StoreOp::create(b, loc, accumulator, workspace,
                  ValueRange{w, slotOf(w), zero, zero}, inBoundsAttr);
  Value pieces = add(sub(lastOwner, firstOwner), one);
  Value last =
      SplitArriveOp::create(b, loc, b.getI1Type(), counters,
                            ValueRange{row, col}, pieces, IntegerAttr());
  scf::YieldOp::create(b, loc, last);
  b.setInsertionPointAfter(ifCut);
  Value lastPiece = ifCut.getResult(0);

  Value ownersEnd = arith::SelectOp::create(b, loc, lastPiece,
                                            add(lastOwner, one), firstOwner);
  Value init =
      arith::SelectOp::create(b, loc, whole, accumulator, zeroTile(accType));
  auto sum = scf::ForOp::create(
      b, loc, firstOwner, ownersEnd, one, ValueRange{init},
      [&](OpBuilder &nested, Location nestedLoc, Value owner,
          ValueRange iters) {
        OpBuilder::InsertionGuard bodyGuard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        Value partial = LoadOp::create(
            b, nestedLoc, accType, workspace,
            ValueRange{owner, slotOf(owner), zero, zero}, inBoundsAttr);
        scf::YieldOp::create(b, nestedLoc,
                             addTiles(b, nestedLoc, iters[0], partial));
      });
  Value finish = arith::OrIOp::create(b, loc, whole, lastPiece);
  auto ifFinish = scf::IfOp::create(b, loc, finish, /*withElseRegion=*/false);
  b.setInsertionPoint(ifFinish.thenBlock()->getTerminator());
  return finishTile(sum.getResult(0), m0, n0);
}

LogicalResult MatmulTiler::run() {
  ArrayRef<int64_t> tile = config.getTile();
  ArrayRef<int64_t> waves = config.getWaves();
  int64_t tileM = tile[0], tileN = tile[1], tileK = tile[2];
  unsigned numWaves = config.getNumWaves();
  StringRef instrName = config.getInstr().getValue();
  FailureOr<MmaAttr> mma = getMmaLayout(
      matmul, instrName, waves, target,
      storesTransposedAccumulator(matmul.getC().getType(), instrName));
  if (failed(mma))
    return failure();
  accumulatorLayout = *mma;

  Value a = matmul.getA(), bMatrix = matmul.getB();
  int64_t rank = matmul.getA().getType().getRank();
  Type accElement = matmul.getAccumulatorType();
  Value gridX = arith::CeilDivUIOp::create(b, loc, dim(bMatrix, rank - 1),
                                           constIndex(tileN));
  Value gridY =
      arith::CeilDivUIOp::create(b, loc, dim(a, rank - 2), constIndex(tileM));
  auto accType = tileType({tileM, tileN}, accElement, accumulatorLayout);
  if (mode == Mode::StreamK) {
    if (failed(buildStreamK(gridX, gridY, accType)))
      return failure();
    finishKernel(matmul, target.waveSize * numWaves, {tileM, tileN}, config);
    return success();
  }

  // The grid: N tiles along x, M tiles along y, the batch along z (times
  // the splits for split-K: z = batch * splits + split); the workgroups of
  // a batch are renumbered over the tiles (tilePosition).
  Value split;
  if (rank == 3 || mode == Mode::Split) {
    Value z =
        ProgramIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(2));
    if (mode == Mode::Split) {
      Value splits = constIndex(config.getSplits());
      split = arith::RemUIOp::create(b, loc, z, splits);
      z = arith::DivUIOp::create(b, loc, z, splits);
    }
    if (rank == 3)
      batch = z;
  }
  auto [tileRow, tileCol] = tilePosition(gridX, gridY);
  Value m0 = arith::MulIOp::create(b, loc, tileRow, constIndex(tileM));
  Value n0 = arith::MulIOp::create(b, loc, tileCol, constIndex(tileN));

  Value accumulator;
  scf::IfOp lastSplit;
  if (mode == Mode::Split) {
    // A whole number of K steps per split (the verifier checked that each
    // split gets at least one).
    int64_t k = matmul.getA().getType().getShape().back();
    Value chunk = constIndex(getSplitKChunk(k, tileK, config.getSplits()));
    Value kBegin = arith::MulIOp::create(b, loc, split, chunk);
    Value kEnd = arith::MinUIOp::create(
        b, loc, dim(a, rank - 1), arith::AddIOp::create(b, loc, kBegin, chunk));
    Value partial = buildKLoop(m0, n0, kBegin, kEnd, accType);
    StoreOp::create(
        b, loc, partial, workspace, workspaceIndices(split, m0, n0),
        inBounds(cast<MemRefType>(workspace.getType()), {tileM, tileN}));
    Value last = SplitArriveOp::create(
        b, loc, b.getI1Type(), counters, indices(tileRow, tileCol),
        /*count=*/Value(), b.getI64IntegerAttr(config.getSplits()));
    lastSplit = scf::IfOp::create(b, loc, last, /*withElseRegion=*/false);
    b.setInsertionPoint(lastSplit.thenBlock()->getTerminator());
    accumulator = sumPartials(m0, n0, accType);
  } else {
    accumulator = buildKLoop(m0, n0, constIndex(0), dim(a, rank - 1), accType);
  }
  if (failed(finishTile(accumulator, m0, n0)))
    return failure();
  if (lastSplit)
    b.setInsertionPointAfter(lastSplit);

  finishKernel(matmul, target.waveSize * numWaves, {tileM, tileN}, config);
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {

/// Builds the FlashAttention-2 forward tile program of one attention op:
/// one workgroup per (query block, head, batch x splits), or per (block of
/// a group's stacked heads, key/value head, ...) with packed query heads;
/// loops over the key/value blocks the block's windows reach computing
/// S = Q K^T, the online softmax (running row max and sum in the exp2
/// domain, the scale folded in), and O += P V; then O / l and the optional
/// logsumexp (split-KV: partials, and the last split's merge).
class AttentionTiler : TileProgramBuilder {
public:
  /// Whole: one pass over all keys. Split: this workgroup's share of the
  /// keys, partial O and log2-sum-exp to the workspace; the last split of a
  /// query block to arrive (counted in `arrivals`) merges the partials into
  /// O (and the logsumexp). StreamK: this workgroup's even share of all
  /// query blocks' key blocks (AttentionStreamKWork); query blocks it runs
  /// whole as Whole, pieces of cut ones as splits of that block.
  enum class Mode { Whole, Split, StreamK };

  AttentionTiler(AttentionOp op, const TileTarget &target,
                 Mode mode = Mode::Whole, Value workspaceO = {},
                 Value workspaceLse = {}, Value arrivals = {})
      : TileProgramBuilder(op), op(op), config(op.getConfigAttr()),
        target(target), mode(mode), workspaceO(workspaceO),
        workspaceLse(workspaceLse), arrivals(arrivals) {}

  LogicalResult run();

private:
  /// Stream-K's step arithmetic is 32-bit (AttentionStreamKWork bounds the
  /// steps): its scalars live through every key loop, and 64-bit indices
  /// would take twice the SGPRs.
  Value scalar(int64_t value) {
    return arith::ConstantIntOp::create(b, loc, value, 32);
  }
  Value toIndex(Value x) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), x);
  }
  Value toScalar(Value x) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), x);
  }
  RankedTensorType tile(ArrayRef<int64_t> shape, Type element,
                        Attribute layout) {
    return RankedTensorType::get(shape, element, layout);
  }
  /// A constant tile of `value` (floats, or integers: bit patterns).
  Value splat(RankedTensorType type, double value) {
    Type element = type.getElementType();
    TypedAttr attr = isa<FloatType>(element)
                         ? TypedAttr(b.getFloatAttr(element, value))
                         : TypedAttr(b.getIntegerAttr(element, int64_t(value)));
    return arith::ConstantOp::create(b, loc, type,
                                     SplatElementsAttr::get(type, attr));
  }
  Value splatValue(RankedTensorType type, Value scalar) {
    return tensor::SplatOp::create(b, loc, type, scalar);
  }

  /// Whether a block's row sums add the f16 probabilities the second
  /// product multiplies, widened (summedProbabilities), rather than the f32
  /// `p`: on gfx90a and gfx942, whose `v_dot2_f32_f16` adds a pair of them
  /// to an f32 sum in one instruction (tessel-lower-to-gpu: 8 instead of 15
  /// adds for 16 keys a lane), in kernels that do not write the logsumexp
  /// (whose sum's log is an output, as exact as FlashAttention's). On gfx950
  /// the model predicted losses (docs/performance.md, "Row sums by pairs").
  bool sumsRoundedProbabilities(Type element) {
    const Chip *chip = lookupChip(target.chip);
    return !logsumexp && element.isF16() && chip && chip->isCDNA() &&
           chip->isaVersion() < 9500;
  }

  /// The probabilities `p` (f32) rounded to `type`, the second product's
  /// operand.
  ///
  /// To f16, where the row sums add the rounded values, toward zero up to
  /// padded head dim 64 (roundsProbabilitiesTowardZero): two values a
  /// `v_cvt_pkrtz_f16_f32` (tessel-lower-to-gpu) instead of a
  /// `v_cvt_f16_f32` each and a `v_pack_b32_f16` a pair, 32 of 185 VALU
  /// instructions a key block of 64 on gfx942 at head dim 64. O is then
  /// normalized by the weights it was built from: each weight is within
  /// 2^-10 of `p` relative, and what the truncation shifts all of them by
  /// alike divides out (docs/performance.md, "P rounded toward zero").
  ///
  /// To bf16, where the chip has no conversion instruction, the backend's
  /// rounding also checks each value for NaN (5.5 VALU instructions per
  /// value); here it is the rounding alone, to nearest with ties away from
  /// zero (add 0x8000, keep the top 16 bits: 1.5 instructions a value, a
  /// `v_add_u32` each and a `v_perm_b32` a pair). It differs from rounding
  /// to nearest even only on an exact tie, with the same half-ulp bound
  /// (docs/performance.md, "bf16 P rounded with ties away"). A NaN
  /// probability may then round to another value, which the output never
  /// shows: the row's sum adds the f32 `p`, so the sum is NaN and so is the
  /// row of O it divides, and its logsumexp.
  Value roundProbabilities(Value p, RankedTensorType type,
                           int64_t paddedHeadDim) {
    const Chip *chip = lookupChip(target.chip);
    if (sumsRoundedProbabilities(type.getElementType()) &&
        roundsProbabilitiesTowardZero(paddedHeadDim))
      return arith::TruncFOp::create(
          b, loc, type, p,
          arith::RoundingModeAttr::get(b.getContext(),
                                       arith::RoundingMode::toward_zero),
          arith::FastMathFlagsAttr());
    if (!type.getElementType().isBF16() || !chip || chip->convertsToBf16())
      return arith::TruncFOp::create(b, loc, type, p);
    auto like = [&](Type element) {
      return tile(type.getShape(), element, type.getEncoding());
    };
    RankedTensorType bits32 = like(b.getI32Type());
    Value bits = arith::BitcastOp::create(b, loc, bits32, p);
    auto rounded = arith::AddIOp::create(b, loc, bits, splat(bits32, 0x8000));
    // A probability is not negative (or NaN): its bits plus 0x8000 stay
    // below 2^32 but for a negative NaN, which the row's sum shows anyway.
    rounded->setAttr(kPairedAddAttrName, b.getUnitAttr());
    Value top = arith::TruncIOp::create(
        b, loc, like(b.getI16Type()),
        arith::ShRUIOp::create(b, loc, rounded, splat(bits32, 16)));
    return arith::BitcastOp::create(b, loc, type, top);
  }

  /// What a block's row sums add: `pLow` widened where
  /// sumsRoundedProbabilities says so (the same error as summing `p`,
  /// measured against an f64 softmax; a NaN or infinity stays one in f16),
  /// otherwise the f32 `p`.
  Value summedProbabilities(Value p, Value pLow) {
    auto lowType = cast<RankedTensorType>(pLow.getType());
    if (!sumsRoundedProbabilities(lowType.getElementType()))
      return p;
    return arith::ExtFOp::create(b, loc, p.getType(), pLow);
  }

  /// log2 of a softmax sum. The sum is 0 or at least 1 (a row's sum holds
  /// exp2(0) = 1 for its maximum), never a denormal, so the bare v_log_f32
  /// (`afn`, no denormal scaling of the argument) is exact enough.
  Value log2OfSum(Value sum) {
    return math::Log2Op::create(b, loc, sum, arith::FastMathFlags::afn);
  }
  /// exp2 of a value at most 0 (a weight against the maximum): the bare
  /// v_exp_f32, whose results below 2^-126 flush to 0, which no sum of
  /// weights holding a 1 can see.
  Value weightOf(Value exponent) {
    return math::Exp2Op::create(b, loc, exponent, arith::FastMathFlags::afn);
  }

  /// The logsumexp in the natural log of rows with running max `max` and
  /// sum `sum` (exp2 domain): (max + log2 sum) ln 2, and +inf for a row
  /// that saw no key (sum 0), as FlashAttention writes it.
  Value naturalLogSumExp(Value max, Value sum, RankedTensorType type) {
    Value lse = arith::MulFOp::create(
        b, loc, arith::AddFOp::create(b, loc, max, log2OfSum(sum)),
        splat(type, 0.6931471805599453));
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum,
                                        splat(type, 0.0));
    return arith::SelectOp::create(
        b, loc, empty, splat(type, std::numeric_limits<double>::infinity()),
        lse);
  }

  Value unitDimView(Value memref, int64_t position, Value width = {}) {
    return tessel::unitDimView(b, loc, memref, position, width);
  }
  Value rowView(Value memref, Value width) {
    return unitDimView(memref, cast<MemRefType>(memref.getType()).getRank(),
                       width);
  }
  Value queryView(Value memref) {
    return unitDimView(memref,
                       cast<MemRefType>(memref.getType()).getRank() - 1);
  }
  Value transposedView(Value memref) {
    return tessel::transposedView(b, loc, memref);
  }
  Value stridedView(memref::ExtractStridedMetadataOp metadata, Type element,
                    ArrayRef<OpFoldResult> sizes,
                    ArrayRef<OpFoldResult> strides) {
    return tessel::stridedView(b, loc, metadata, element, sizes, strides);
  }
  /// The sink logits in log2 units of the query rows of a tile of `type`
  /// whose dimension `rowsDim` runs over the rows: the head's logit
  /// everywhere (the sinks memref seen as [heads, rows, columns] with
  /// stride-0 rows and columns), or with packed heads each row's head's.
  Value sinkTile(RankedTensorType type, Value head, unsigned rowsDim) {
    ArrayRef<int64_t> shape = type.getShape();
    Value view;
    UnitAttr inBounds = b.getUnitAttr();
    if (packedHeads > 1) {
      // [kv heads, group]: the rows beyond the group read 0.
      view = rowsDim == 1 ? unitDimView(sinks, 1)
                          : unitDimView(sinks, 2, constIndex(shape[1]));
      inBounds = UnitAttr();
    } else {
      view = unitDimView(unitDimView(sinks, 1, constIndex(shape[0])), 2,
                         constIndex(shape[1]));
    }
    Value logit = LoadOp::create(b, loc, type, view,
                                 ValueRange{head, constIndex(0), constIndex(0)},
                                 inBounds);
    return arith::MulFOp::create(b, loc, logit, splat(type, kLog2e));
  }
  /// A tile of `type` holding the one value of a memref<1xf32> (a
  /// per-tensor descale) everywhere.
  Value scalarTile(RankedTensorType type, Value memref) {
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(type.getDimSize(0)),
                                       b.getIndexAttr(type.getDimSize(1))};
    SmallVector<OpFoldResult> strides = {b.getIndexAttr(0), b.getIndexAttr(0)};
    Value view = stridedView(metadata, type.getElementType(), sizes, strides);
    Value zero = constIndex(0);
    return LoadOp::create(b, loc, type, view, ValueRange{zero, zero},
                          b.getUnitAttr());
  }
  /// Sets up the memrefs the program reads and writes: the op's own, or
  /// with packed query heads (getPackedQueryHeads) views that stack each
  /// group's heads along the query rows.
  void viewOperands();
  /// Varlen: the program's arrays become views of sequence `sequence` of
  /// the packed batch (its rows of Q, O, the logsumexp, K and V, from the
  /// cumulative lengths, clamped to the arrays), batch index 0.
  void viewSequence(Value sequence);
  /// Paged cache: sequence `sequence`'s context length, clamped to [0, its
  /// block table's pages x the page size].
  Value pagedLength(Value sequence);
  /// Paged cache: the page holding key `n0` of sequence `sequence` (whose
  /// length is `length`) as [1, kv heads, valid rows, head dim] views of K
  /// and V (rows past the length read as zeros), and n0's row in it. The
  /// page number is clamped to the cache.
  struct PageBlock {
    Value keys, values, row;
  };
  PageBlock viewPage(Value sequence, Value n0, Value length);
  /// Where the partial results of one query block lie: one per index in
  /// [begin, end) (splits, or stream-K workgroups), each at the workspace
  /// indices `prefix(index)` followed by its rows from `row`.
  struct PartialRange {
    Value begin, end;
    std::function<SmallVector<Value>(Value)> prefix;
    Value row;
  };
  /// Merges the partial O and log2-sum-exp of the query block at row m0
  /// into O (and the logsumexp), on `numWaves` waves; or, given
  /// `intoSlot`, into the partial (normalized O and log2-sum-exp) of that
  /// split slot, for a second level to merge (no sinks then).
  LogicalResult buildCombine(Value batch, Value head, Value m0,
                             unsigned numWaves, const PartialRange &partials,
                             Value intoSlot = {});
  /// Split-KV, after this split's partial: the last split of the query
  /// block to arrive merges the partials; with merge groups
  /// (getMergeGroup), the last of each group merges the group into its
  /// first slot, and the last group to arrive merges the groups.
  LogicalResult mergeSplits(Value batch, Value head, Value pidM, Value m0,
                            Value split, unsigned numWaves);
  /// Stream-K: the steps [begin, end) of this workgroup and the first and
  /// last query blocks (in unit order) they reach.
  struct StreamKRange {
    Value begin, end, first, last;
  };
  /// Stream-K: where this workgroup's piece of one query block lies (i32
  /// values but for the indices `queryBlockIndex`, `head` and `batch`).
  struct StreamKPiece {
    scf::ForOp loop; // over the query blocks (beginStreamK's)
    StreamKRange range;
    Value workgroup;  // this workgroup's number (remapped over the XCDs)
    Value queryBlock; // in its head, and as an index:
    Value queryBlockIndex;
    Value head, batch;
    Value begin, end; // the piece's key blocks of the query block's
    Value blocks;     // the query block's key blocks
    Value firstStep;  // the step of the query block's first key block
  };
  /// Stream-K: opens the loop over the query blocks this workgroup's steps
  /// of `streamK` reach, leaves the builder inside it and returns the piece
  /// of the loop's query block.
  StreamKPiece beginStreamK();
  /// Stream-K: query block `u` (in unit order) and the piece of it that the
  /// steps [begin, end) of `workgroup` cover.
  StreamKPiece describePiece(Value u, Value workgroup, Value begin, Value end);
  /// Stream-K: the query block (in unit order) holding step `step`.
  Value streamKQueryBlockAt(Value step);
  /// Stream-K: the query block's O when the piece is the whole block;
  /// otherwise the piece's partial O and log2-sum-exp to the workgroup's
  /// workspace slot and its arrival. Returns whether it arrived last (the
  /// workgroup then merges the pieces, mergeStreamKPieces).
  /// `storeOutput(view, prefix, element, row)` stores the normalized O.
  Value storeStreamKPiece(
      const StreamKPiece &piece, Value m0, Value lse2,
      function_ref<void(Value, ArrayRef<Value>, Type, Value)> storeOutput,
      function_ref<void()> storeLogSumExp);
  /// Stream-K, after the loop over the query blocks: merges the pieces of
  /// the first and the last of them where this workgroup's arrived last.
  LogicalResult mergeStreamKPieces(const StreamKPiece &piece,
                                   unsigned numWaves);
  /// Stream-K: the workspace slot (0 or 1) of `workgroup`'s piece of the
  /// query block of `piece`.
  Value streamKSlotOf(const StreamKPiece &piece, Value workgroup);
  /// Stream-K: the first step of workgroup `w` and the workgroup that runs
  /// step `step` (its inverse).
  Value firstStepOf(Value w);
  Value ownerOf(Value step);
  /// Whether the workgroups run the query blocks longest first: a kernel
  /// with a right key edge (causal) gives its later query blocks more keys,
  /// and the hardware dispatches workgroups in id order as slots free, so
  /// in grid order the longest blocks of the last heads start last and run
  /// alone at the end. One workgroup per query block only (stream-K and
  /// split-KV balance their own work; varlen, paged and packed-head grids
  /// keep their own order).
  bool runsLongestBlocksFirst() {
    return mode == Mode::Whole && op.getKeyWindow().hasRight() &&
           !op.isVarlen() && !op.isPaged() && packedHeads == 1;
  }
  /// Tells the runtime how many query heads a workgroup serves (the grid's
  /// x counts blocks of group x seq_q rows, y key/value heads).
  void recordPackedHeads() {
    if (packedHeads > 1)
      op->getParentOfType<func::FuncOp>()->setAttr(
          "tessel.packed_heads", b.getI64IntegerAttr(packedHeads));
  }
  /// `memref` ([batch, heads, seq, ...] with each head's rows after the
  /// previous head's) as [batch, heads / group, group x seq, ...].
  Value stackHeads(Value memref, int64_t group);
  static constexpr double kLog2e = 1.4426950408889634;
  /// How far (log2 units) a block's maximum may exceed a query's running
  /// maximum before the lazy rescale updates it: weights stay at most 2^8.
  static constexpr double kLazyRescaleThreshold = 8.0;
  /// The weights-first lazy rescale (lazyWeights): a block whose weights
  /// against the running maximum sum to more than this for some query is
  /// rescaled. Every weight then stays below 2^15, which f16 holds.
  static constexpr double kLazyRescaleSumLimit = 32768.0;

  AttentionOp op;
  ConfigAttr config;
  TileTarget target;
  Mode mode;
  Value workspaceO, workspaceLse, arrivals;
  std::optional<AttentionStreamKWork> streamK; // StreamK mode only
  // What the program reads and writes (viewOperands).
  int64_t packedHeads = 1;
  Value queries, output, logsumexp, sinks, keys, values;
};

} // namespace

Value AttentionTiler::stackHeads(Value memref, int64_t group) {
  // Heads and rows from Q, whose sizes packing requires static (those of O
  // or the logsumexp may be dynamic where Q's are not).
  MemRefType q = op.getQ().getType();
  int64_t heads = q.getDimSize(1), rows = q.getDimSize(2);
  auto type = cast<MemRefType>(memref.getType());
  int64_t rank = type.getRank();
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  SmallVector<OpFoldResult> sizes, strides;
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult size = dim(memref, d);
    OpFoldResult stride = metadata.getStrides()[d];
    if (d == 1) {
      size = constIndex(heads / group);
      stride = arith::MulIOp::create(b, loc, metadata.getStrides()[1],
                                     constIndex(group))
                   .getResult();
    } else if (d == 2) {
      size = constIndex(rows * group);
    }
    sizes.push_back(size);
    strides.push_back(stride);
  }
  return stridedView(metadata, type.getElementType(), sizes, strides);
}

void AttentionTiler::viewSequence(Value sequence) {
  auto [queryStart, queryLength] =
      getSequenceRange(b, loc, op.getCuSeqlensQ(), sequence, dim(queries, 2));
  auto [keyStart, keyLength] =
      getSequenceRange(b, loc, op.getCuSeqlensK(), sequence, dim(keys, 2));
  queries = getRowRange(b, loc, queries, queryStart, queryLength);
  output = getRowRange(b, loc, output, queryStart, queryLength);
  if (logsumexp)
    logsumexp = getRowRange(b, loc, logsumexp, queryStart, queryLength);
  keys = getRowRange(b, loc, keys, keyStart, keyLength);
  values = getRowRange(b, loc, values, keyStart, keyLength);
}

Value AttentionTiler::pagedLength(Value sequence) {
  Value raw = memref::LoadOp::create(b, loc, op.getContextLens(), sequence);
  Value length = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value capacity = arith::MulIOp::create(b, loc, dim(op.getBlockTable(), 1),
                                         constIndex(op.getPageSize()));
  return arith::MinSIOp::create(
      b, loc, capacity, arith::MaxSIOp::create(b, loc, length, constIndex(0)));
}

AttentionTiler::PageBlock AttentionTiler::viewPage(Value sequence, Value n0,
                                                   Value length) {
  int64_t pageSize = op.getPageSize();
  // The table's column, clamped to its last: a block past the sequence's
  // pages (scores_ahead's first block in front of a loop that runs no
  // iteration) reads a real entry, its keys masked or never used.
  Value column = arith::DivUIOp::create(b, loc, n0, constIndex(pageSize));
  Value lastColumn =
      arith::SubIOp::create(b, loc, dim(op.getBlockTable(), 1), constIndex(1));
  Value slot = arith::MinUIOp::create(b, loc, column, lastColumn);
  Value raw = memref::LoadOp::create(b, loc, op.getBlockTable(),
                                     ValueRange{sequence, slot});
  Value page = arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  Value lastPage = arith::SubIOp::create(b, loc, dim(keys, 0), constIndex(1));
  page = arith::MinSIOp::create(
      b, loc, lastPage, arith::MaxSIOp::create(b, loc, page, constIndex(0)));
  Value row = arith::RemUIOp::create(b, loc, n0, constIndex(pageSize));
  // The page's rows before the sequence's end.
  Value pageStart = arith::SubIOp::create(b, loc, n0, row);
  Value valid = arith::MinSIOp::create(
      b, loc, constIndex(pageSize),
      arith::MaxSIOp::create(b, loc,
                             arith::SubIOp::create(b, loc, length, pageStart),
                             constIndex(0)));
  auto pageView = [&](Value cache) {
    auto type = cast<MemRefType>(cache.getType());
    SmallVector<int64_t> staticStrides = getStaticStrides(type);
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, cache);
    auto sizeOf = [&](int64_t d) -> OpFoldResult {
      if (type.isDynamicDim(d))
        return dim(cache, d);
      return b.getIndexAttr(type.getDimSize(d));
    };
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), sizeOf(1), valid,
                                       sizeOf(3)};
    SmallVector<OpFoldResult> strides;
    for (int64_t d = 0; d < 4; ++d)
      strides.push_back(ShapedType::isDynamic(staticStrides[d])
                            ? OpFoldResult(metadata.getStrides()[d])
                            : OpFoldResult(b.getIndexAttr(staticStrides[d])));
    Value offset = arith::AddIOp::create(
        b, loc, metadata.getOffset(),
        arith::MulIOp::create(b, loc, page, metadata.getStrides()[0]));
    auto viewType = MemRefType::get(
        {1, type.getDimSize(1), ShapedType::kDynamic, type.getDimSize(3)},
        type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                               staticStrides));
    return memref::ReinterpretCastOp::create(
               b, loc, viewType, metadata.getBaseBuffer(), OpFoldResult(offset),
               sizes, strides)
        .getResult();
  };
  return {pageView(keys), pageView(values), row};
}

void AttentionTiler::viewOperands() {
  packedHeads = getPackedQueryHeads(op, config);
  queries = op.getQ();
  output = op.getO();
  logsumexp = op.getLse();
  sinks = op.getSinks();
  keys = op.getK();
  values = op.getV();
  if (packedHeads == 1)
    return;
  queries = stackHeads(queries, packedHeads);
  output = stackHeads(output, packedHeads);
  if (logsumexp)
    logsumexp = stackHeads(logsumexp, packedHeads);
  if (sinks) {
    // [heads] as [kv heads, group] (one query per head).
    auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, sinks);
    Value stride = metadata.getStrides()[0];
    int64_t heads = op.getQ().getType().getDimSize(1);
    SmallVector<OpFoldResult> sizes = {constIndex(heads / packedHeads),
                                       constIndex(packedHeads)};
    SmallVector<OpFoldResult> strides = {
        arith::MulIOp::create(b, loc, stride, constIndex(packedHeads))
            .getResult(),
        stride};
    sinks = stridedView(metadata, b.getF32Type(), sizes, strides);
  }
}

/// The factor a merge loop over partials is unrolled by (getMergeUnroll:
/// each iteration loads a partial and waits for it; unrolled, the loads of
/// several are in flight at once) and its trip count once unrolled, where
/// its trip count is static. `elementsPerLane`: the f32 values a lane loads
/// per iteration.
static std::optional<std::pair<int64_t, int64_t>>
getCombineUnroll(scf::ForOp loop, int64_t elementsPerLane) {
  std::optional<int64_t> begin = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> end = getConstantIntValue(loop.getUpperBound());
  if (!begin || !end || *end <= *begin)
    return std::nullopt;
  int64_t trips = *end - *begin;
  int64_t factor = getMergeUnroll(trips, elementsPerLane);
  return std::make_pair(factor, trips / factor);
}

/// The layout a split-KV merge works on, [rows, columns] over `waves` waves
/// of `waveSize` lanes: the lanes' low bits along the rows, so that a lane
/// holds as few rows as the tile allows (each row's weight is an
/// exponential a lane takes for every row it holds), the other lane bits
/// and the waves along the columns, and each lane's registers a run of
/// consecutive columns (16-byte loads and stores).
static Attribute getMergeLayout(MLIRContext *context, int64_t rows,
                                int64_t columns, int64_t waves,
                                int64_t waveSize) {
  SmallVector<int64_t> registerBases, laneBases, waveBases;
  int64_t rowBits = llvm::Log2_64(rows), columnBits = llvm::Log2_64(columns);
  int64_t laneBits = llvm::Log2_64(waveSize), waveBits = llvm::Log2_64(waves);
  int64_t row = 0, column = 0;
  auto nextBasis = [&](SmallVector<int64_t> &bases) {
    // Rows first, then columns; past the tile, copies (zero bases).
    if (row < rowBits) {
      bases.append({int64_t(1) << row++, 0});
    } else if (column < columnBits) {
      bases.append({0, int64_t(1) << column++});
    } else {
      bases.append({0, 0});
    }
  };
  // The registers take the columns' low bits (a run per lane) where the
  // lanes and waves leave columns to them.
  int64_t laneAndWaveColumns =
      std::max<int64_t>(0, laneBits + waveBits - rowBits);
  int64_t registerColumns =
      std::max<int64_t>(0, columnBits - laneAndWaveColumns);
  for (int64_t bit = 0; bit < registerColumns; ++bit)
    registerBases.append({0, int64_t(1) << column++});
  for (int64_t bit = 0; bit < laneBits; ++bit)
    nextBasis(laneBases);
  for (int64_t bit = 0; bit < waveBits; ++bit)
    nextBasis(waveBases);
  while (row < rowBits)
    registerBases.append({int64_t(1) << row++, 0});
  while (column < columnBits)
    registerBases.append({0, int64_t(1) << column++});
  return LinearAttr::get(context, /*rank=*/2, registerBases, laneBases,
                         waveBases, {}, {});
}

/// Unrolls a merge loop by getCombineUnroll's factor. Done once the loop's
/// results have all their uses: a loop of as many iterations as the factor
/// is replaced by its body.
static void unrollCombineLoop(scf::ForOp loop, int64_t elementsPerLane) {
  if (auto unroll = getCombineUnroll(loop, elementsPerLane);
      unroll && unroll->first > 1)
    (void)loopUnrollByFactor(loop, uint64_t(unroll->first));
}

LogicalResult AttentionTiler::buildCombine(Value batch, Value head, Value m0,
                                           unsigned numWaves,
                                           const PartialRange &partials,
                                           Value intoSlot) {
  MLIRContext *context = b.getContext();
  // The block's rows, or only as many as its queries fill where they are
  // fewer (a decode's few queries, of each packed head: the one-wave
  // decode blocks of 32 rows often hold 4), merged in chunks of the head
  // dim (getAttentionMergeTile): the merge's work is per row.
  int64_t seqQ = op.getQ().getType().getDimSize(2);
  int64_t headDim = getPaddedHeadDim(op.getV().getType().getDimSize(3));
  AttentionMergeTile merge = getAttentionMergeTile(
      config.getTile()[0],
      ShapedType::isDynamic(seqQ) ? seqQ : seqQ * packedHeads, headDim,
      target.waveSize * numWaves);
  int64_t blockM = merge.rows, columns = merge.columns;
  int64_t elementsPerLane = std::max<int64_t>(
      1, blockM * columns / (int64_t(target.waveSize) * numWaves));
  int64_t rowsPerLane =
      std::max<int64_t>(1, blockM / (int64_t(target.waveSize) * numWaves));
  Type f32 = b.getF32Type();
  auto layout =
      getMergeLayout(context, blockM, columns, numWaves, target.waveSize);
  auto type = tile({blockM, columns}, f32, layout);
  Value zero = constIndex(0);
  // The rows' statistics: one value per row a lane holds (the chunks'
  // tile reduced along its columns), broadcast to the chunks' tiles.
  FailureOr<RankedTensorType> statType =
      getReducedTileType(type, 1, [&] { return op.emitOpError(); });
  if (failed(statType))
    return failure();
  auto stat = [&](double value) { return splat(*statType, value); };
  auto broadcast = [&](Value rows) -> Value {
    return BroadcastOp::create(b, loc, type, rows);
  };
  Value lseRows = rowView(workspaceLse, {});
  auto indices = [&](Value s, Value column) {
    SmallVector<Value> result = partials.prefix(s);
    result.append({partials.row, column});
    return result;
  };
  // The workspaces hold whole merge tiles where their rows and head dim
  // are static multiples of the tile's (the rows of every query block the
  // grid has, the head dim not padded): the loads then need no masks.
  UnitAttr wholeTiles =
      inBounds(cast<MemRefType>(workspaceO.getType()), {blockM, columns});
  if (cast<MemRefType>(workspaceO.getType()).getShape().back() != headDim)
    wholeTiles = UnitAttr();
  auto partialLse = [&](Value s) {
    return LoadOp::create(b, loc, *statType, lseRows, indices(s, zero),
                          wholeTiles);
  };
  double negInf = -std::numeric_limits<double>::infinity();
  auto forSplits = [&](ValueRange inits, auto body) {
    return scf::ForOp::create(
        b, loc, partials.begin, partials.end, constIndex(1), inits,
        [&](OpBuilder &nested, Location, Value s, ValueRange iters) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, body(s, iters));
        });
  };
  // A maximum that is -inf (no key seen yet) counts as 0 in the weights'
  // exponents, so that -inf - -inf gives no NaN.
  auto safeMax = [&](Value max) -> Value {
    Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                       stat(negInf));
    return arith::SelectOp::create(b, loc, none, stat(0.0), max);
  };
  // The rows' largest partial log2-sum-exp, once for all chunks (a sink
  // joins as one more split with no value). The maximum ignores a NaN
  // (maxnum: one instruction); the NaN's weight still makes the sum, and
  // so every output of the row, NaN.
  Value sink =
      sinks && !intoSlot ? sinkTile(*statType, head, /*rowsDim=*/0) : Value();
  auto statistics = forSplits(
      ValueRange{sink ? sink : stat(negInf)}, [&](Value s, ValueRange iters) {
        return SmallVector<Value>{
            arith::MaxNumFOp::create(b, loc, iters[0], partialLse(s))};
      });
  Value max = statistics.getResult(0);
  Value maxSafe = safeMax(max);
  Value sumInit =
      sink ? weightOf(arith::SubFOp::create(b, loc, sink, maxSafe)) : stat(0.0);
  // The chunks carry the rows' sum of the weights out (every chunk's is
  // the same) for a merged partial's log2-sum-exp, stored after the last
  // chunk has read the slot's.
  auto chunks = scf::ForOp::create(b, loc, zero, constIndex(headDim),
                                   constIndex(columns), ValueRange{sumInit});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(chunks.getBody());
  Value d0 = chunks.getInductionVar();
  // Per chunk, the weighted partials and the rows' sum of the weights (one
  // exponent per row and split, the same in every chunk).
  auto accLoop = forSplits(
      ValueRange{splat(type, 0.0), sumInit}, [&](Value s, ValueRange iters) {
        Value weight =
            weightOf(arith::SubFOp::create(b, loc, partialLse(s), maxSafe));
        Value partial = LoadOp::create(b, loc, type, workspaceO, indices(s, d0),
                                       wholeTiles);
        // One fused multiply-add per element (v_pk_fma_f32 pairs).
        return SmallVector<Value>{
            math::FmaOp::create(b, loc, broadcast(weight), partial, iters[0]),
            arith::AddFOp::create(b, loc, iters[1], weight)};
      });
  Value sum = accLoop.getResult(1);
  // Every chunk has the rows' whole statistics: each stores the same
  // logsumexp.
  if (logsumexp && !intoSlot)
    StoreOp::create(b, loc, naturalLogSumExp(max, sum, *statType),
                    rowView(logsumexp, {}), ValueRange{batch, head, m0, zero});
  // The sum holds a weight of 1 (the largest split's), so it is at least 1:
  // acc * v_rcp_f32(sum) (`afn`, 1 ulp) instead of the correctly rounded
  // division's nine-instruction expansion, per element. A row that saw no
  // key (sum 0) gets 0. (One reciprocal per row and a multiply per element
  // made LLVM duplicate the stream-K kernels' merges: gfx942 f16 D=64
  // 76.5 -> 75.3 % structural.)
  Value sums = broadcast(sum);
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sums,
                                      splat(type, 0.0));
  // The model's trip counts of the merge's innermost loops (a static split
  // count): the statistics', and the partials' once per chunk. A loop
  // unrolled whole is no loop; the chunks' then is the innermost.
  auto statisticsUnroll = getCombineUnroll(statistics, rowsPerLane);
  auto accUnroll = getCombineUnroll(accLoop, elementsPerLane);
  if (statisticsUnroll && accUnroll) {
    int64_t numChunks = llvm::divideCeil(headDim, columns);
    SmallVector<int64_t> trips;
    if (statisticsUnroll->second > 1)
      trips.push_back(statisticsUnroll->second);
    if (accUnroll->second > 1)
      trips.push_back(accUnroll->second * numChunks);
    else if (numChunks > 1)
      trips.push_back(numChunks);
    // A second level's loops follow the first's.
    Operation *function = chunks->getParentOfType<FunctionOpInterface>();
    if (auto earlier = function->getAttrOfType<DenseI64ArrayAttr>(
            kMergeLoopIterationsAttrName))
      trips.insert(trips.begin(), earlier.asArrayRef().begin(),
                   earlier.asArrayRef().end());
    function->setAttr(kMergeLoopIterationsAttrName,
                      b.getDenseI64ArrayAttr(trips));
  }
  Value out = arith::SelectOp::create(
      b, loc, empty, splat(type, 0.0),
      arith::DivFOp::create(b, loc, accLoop.getResult(0), sums,
                            arith::FastMathFlags::afn));
  if (intoSlot) {
    // The slot's partial is also an input: every lane reads what it needs
    // of it before any lane overwrites it (a lane may hold another's
    // elements or rows, and lanes need not run in lockstep).
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> slot = partials.prefix(intoSlot);
    slot.append({partials.row, d0});
    StoreOp::create(b, loc, out, workspaceO, slot, wholeTiles);
  } else {
    Type oElement = op.getO().getType().getElementType();
    if (oElement != f32)
      out = arith::TruncFOp::create(
          b, loc, tile({blockM, columns}, oElement, layout), out);
    // O, like the workspaces, holds whole tiles where its rows (of every
    // packed head) and head dim are static multiples of the tile's.
    MemRefType oType = op.getO().getType();
    int64_t oRows = oType.getDimSize(2), oColumns = oType.getDimSize(3);
    UnitAttr wholeOutputTiles;
    if (!op.isVarlen() && !ShapedType::isDynamic(oRows) &&
        (oRows * packedHeads) % blockM == 0 && oColumns == headDim &&
        headDim % columns == 0)
      wholeOutputTiles = b.getUnitAttr();
    StoreOp::create(b, loc, out, output, ValueRange{batch, head, m0, d0},
                    wholeOutputTiles);
  }
  scf::YieldOp::create(b, loc, sum);
  if (intoSlot) {
    b.setInsertionPointAfter(chunks);
    Value lse2 =
        arith::AddFOp::create(b, loc, maxSafe, log2OfSum(chunks.getResult(0)));
    gpu::BarrierOp::create(b, loc);
    StoreOp::create(b, loc, lse2, lseRows, indices(intoSlot, zero), wholeTiles);
  }
  unrollCombineLoop(accLoop, elementsPerLane);
  unrollCombineLoop(statistics, rowsPerLane);
  return success();
}

LogicalResult AttentionTiler::mergeSplits(Value batch, Value head, Value pidM,
                                          Value m0, Value split,
                                          unsigned numWaves) {
  int64_t splits = config.getSplits();
  int64_t group = getMergeGroup(splits);
  auto arrive = [&](ValueRange counter, int64_t count) {
    Value last =
        SplitArriveOp::create(b, loc, b.getI1Type(), arrivals, counter,
                              /*count=*/Value(), b.getI64IntegerAttr(count));
    auto ifLast = scf::IfOp::create(b, loc, last, /*withElseRegion=*/false);
    b.setInsertionPoint(ifLast.thenBlock()->getTerminator());
    return ifLast;
  };
  Value zero = constIndex(0);
  OpBuilder::InsertionGuard guard(b);
  if (group == 1) {
    arrive({batch, head, pidM}, splits);
    PartialRange splitPartials{zero, constIndex(splits),
                               [&](Value s) {
                                 return SmallVector<Value>{batch, head, s};
                               },
                               m0};
    return buildCombine(batch, head, m0, numWaves, splitPartials);
  }
  // Counters [.., query block, g] for group g and [.., query block,
  // groups] for the groups.
  int64_t groups = splits / group;
  Value groupSize = constIndex(group);
  Value groupIndex = arith::DivUIOp::create(b, loc, split, groupSize);
  Value first = arith::MulIOp::create(b, loc, groupIndex, groupSize);
  arrive({batch, head, pidM, groupIndex}, group);
  PartialRange groupPartials{zero, groupSize,
                             [&, first](Value s) {
                               return SmallVector<Value>{
                                   batch, head,
                                   arith::AddIOp::create(b, loc, first, s)};
                             },
                             m0};
  if (failed(buildCombine(batch, head, m0, numWaves, groupPartials,
                          /*intoSlot=*/zero)))
    return failure();
  arrive({batch, head, pidM, constIndex(groups)}, groups);
  PartialRange groupResults{zero, constIndex(groups),
                            [&](Value g) {
                              return SmallVector<Value>{
                                  batch, head,
                                  arith::MulIOp::create(b, loc, g, groupSize)};
                            },
                            m0};
  return buildCombine(batch, head, m0, numWaves, groupResults);
}

Value AttentionTiler::firstStepOf(Value w) {
  // S steps over G workgroups: the first S mod G take q + 1 steps, the
  // others q (q = S / G >= 1, which the verifier ensures).
  int64_t workgroups = config.getStreamK();
  int64_t quotient = streamK->steps() / workgroups;
  int64_t remainder = streamK->steps() % workgroups;
  Value extra = arith::MinUIOp::create(b, loc, w, scalar(remainder));
  Value whole = mul(w, scalar(quotient));
  return add(whole, extra);
}

Value AttentionTiler::ownerOf(Value step) {
  int64_t workgroups = config.getStreamK();
  int64_t quotient = streamK->steps() / workgroups;
  int64_t remainder = streamK->steps() % workgroups;
  Value longShare = scalar(remainder * (quotient + 1));
  Value inLong = div(step, scalar(quotient + 1));
  // (Wraps below the long shares; the select then takes inLong.)
  Value pastLong = sub(step, longShare);
  Value shortIndex = div(pastLong, scalar(quotient));
  Value inShort = add(scalar(remainder), shortIndex);
  return select(less(step, longShare), inLong, inShort);
}

Value AttentionTiler::streamKQueryBlockAt(Value step) {
  const AttentionStreamKWork &work = *streamK;
  Value unitSteps = scalar(work.blocksPerUnit);
  Value unit = div(step, unitSteps);
  if (!work.pairs)
    return unit;
  // Causal: the unit's second query block starts after the first's
  // (p + 1) x diagonal blocks, p the pair's index within its head.
  Value offset = sub(step, mul(unit, unitSteps));
  Value p = rem(unit, scalar(work.unitsPerHead()));
  Value one = scalar(1);
  Value diagonal = scalar(work.diagonalBlocks);
  Value firstLength = mul(add(p, one), diagonal);
  Value inFirst = less(offset, firstLength);
  Value second = select(inFirst, scalar(0), one);
  return add(mul(unit, scalar(2)), second);
}

AttentionTiler::StreamKPiece AttentionTiler::describePiece(Value u,
                                                           Value workgroup,
                                                           Value begin,
                                                           Value end) {
  const AttentionStreamKWork &work = *streamK;
  int64_t perHead = work.unitsPerHead();
  Value one = scalar(1), zero = scalar(0);
  Value unitSteps = scalar(work.blocksPerUnit);
  Value diagonal = scalar(work.diagonalBlocks);
  StreamKPiece piece;
  piece.workgroup = workgroup;
  Value unit = work.pairs ? div(u, scalar(2)) : u;
  Value p = rem(unit, scalar(perHead));
  Value headIndex = div(unit, scalar(perHead));
  piece.batch = div(headIndex, scalar(work.heads));
  piece.head = rem(headIndex, scalar(work.heads));
  piece.firstStep = mul(unit, unitSteps);
  if (work.pairs) {
    // Pair p holds query block p, then its partner Q - 1 - p.
    Value second = rem(u, scalar(2));
    Value isFirst = equal(second, zero);
    Value partner = sub(scalar(work.queryBlocks - 1), p);
    piece.queryBlock = select(isFirst, p, partner);
    piece.blocks = mul(add(piece.queryBlock, one), diagonal);
    Value firstLength = mul(add(p, one), diagonal);
    Value skipped = select(isFirst, zero, firstLength);
    piece.firstStep = add(piece.firstStep, skipped);
  } else {
    piece.queryBlock = p;
    piece.blocks = unitSteps;
  }
  Value lastStep = add(piece.firstStep, piece.blocks);
  Value from = arith::MaxUIOp::create(b, loc, begin, piece.firstStep);
  Value to = arith::MinUIOp::create(b, loc, end, lastStep);
  piece.begin = sub(from, piece.firstStep);
  piece.end = sub(to, piece.firstStep);
  piece.batch = toIndex(piece.batch);
  piece.head = toIndex(piece.head);
  piece.queryBlockIndex = toIndex(piece.queryBlock);
  return piece;
}

AttentionTiler::StreamKPiece AttentionTiler::beginStreamK() {
  Value one = scalar(1);
  Value pid =
      ProgramIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value w = toScalar(
      remapOverXcds(b, loc, pid, constIndex(config.getStreamK()), target.xcds));
  Value begin = firstStepOf(w);
  Value end = firstStepOf(add(w, one));
  Value first = streamKQueryBlockAt(begin);
  Value last = streamKQueryBlockAt(sub(end, one));
  // The loop carries whether this workgroup's pieces of its first (bit 0)
  // and its last (bit 1) query block arrived last: it merges them after the
  // loop. (One 32-bit scalar: two flags would take two SGPR pairs.)
  Value noMerges = scalar(0);
  Value upper = add(last, one);
  auto loop =
      scf::ForOp::create(b, loc, first, upper, one, ValueRange{noMerges});
  loop->setAttr(kTileLoopAttrName, b.getUnitAttr());
  b.setInsertionPointToStart(loop.getBody());
  StreamKPiece piece = describePiece(loop.getInductionVar(), w, begin, end);
  piece.loop = loop;
  piece.range = {begin, end, first, last};
  return piece;
}

Value AttentionTiler::storeStreamKPiece(
    const StreamKPiece &piece, Value m0, Value lse2,
    function_ref<void(Value, ArrayRef<Value>, Type, Value)> storeOutput,
    function_ref<void()> storeLogSumExp) {
  Value zero = scalar(0), one = scalar(1), zeroIndex = constIndex(0);
  Value fromStart = equal(piece.begin, zero);
  Value toEnd = equal(piece.end, piece.blocks);
  Value whole = arith::AndIOp::create(b, loc, fromStart, toEnd);
  Type oElement = op.getO().getType().getElementType();
  Value falseValue = arith::ConstantIntOp::create(b, loc, 0, 1);
  auto ifWhole = scf::IfOp::create(b, loc, TypeRange{b.getI1Type()}, whole,
                                   /*withElseRegion=*/true);
  b.setInsertionPointToStart(ifWhole.thenBlock());
  storeOutput(output, {piece.batch, piece.head}, oElement, m0);
  storeLogSumExp();
  scf::YieldOp::create(b, loc, falseValue);

  // A cut query block's pieces belong to consecutive workgroups, each
  // keeping its piece in slot 0 or 1 of its workspace (streamKSlotOf).
  b.setInsertionPointToStart(ifWhole.elseBlock());
  Value workgroup = toIndex(piece.workgroup);
  Value slot = streamKSlotOf(piece, piece.workgroup);
  storeOutput(workspaceO, {workgroup, slot}, b.getF32Type(), zeroIndex);
  StoreOp::create(b, loc, lse2, queryView(workspaceLse),
                  ValueRange{workgroup, slot, zeroIndex, zeroIndex});
  Value firstOwner = ownerOf(piece.firstStep);
  Value lastStep = sub(add(piece.firstStep, piece.blocks), one);
  Value pieces = toIndex(add(sub(ownerOf(lastStep), firstOwner), one));
  Value last = SplitArriveOp::create(
      b, loc, b.getI1Type(), arrivals,
      ValueRange{piece.batch, piece.head, piece.queryBlockIndex}, pieces,
      IntegerAttr());
  scf::YieldOp::create(b, loc, last);
  b.setInsertionPointAfter(ifWhole);
  return ifWhole.getResult(0);
}

Value AttentionTiler::streamKSlotOf(const StreamKPiece &piece,
                                    Value workgroup) {
  // A workgroup whose steps began in an earlier query block keeps its
  // piece of this one (its last) in slot 1.
  Value later = less(firstStepOf(workgroup), piece.firstStep);
  Value one = constIndex(1);
  return select(later, one, constIndex(0));
}

LogicalResult AttentionTiler::mergeStreamKPieces(const StreamKPiece &piece,
                                                 unsigned numWaves) {
  // The merges run after the loop over the query blocks, for at most its
  // first and its last: inside it, their registers would add to the key
  // loop's (the backend hoists their lane addresses out of the loop over
  // query blocks: 38 VGPRs at head dim 128).
  const StreamKRange &range = piece.range;
  scf::ForOp loop = piece.loop;
  Value merges = loop.getResult(0);
  auto bitSet = [&](int64_t bit) {
    Value masked = arith::AndIOp::create(b, loc, merges, scalar(bit));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, masked,
                                 scalar(0))
        .getResult();
  };
  Value mergeFirst = bitSet(1);
  Value lastDiffers = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                            range.first, range.last);
  Value mergeLast = arith::AndIOp::create(b, loc, bitSet(2), lastDiffers);
  Value one = scalar(1);
  Value zero = scalar(0);
  auto candidates = scf::ForOp::create(b, loc, zero, scalar(2), one);
  candidates->setAttr(kFreshLanesAttrName, b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(candidates.getBody()->getTerminator());
  Value isFirst = equal(candidates.getInductionVar(), scalar(0));
  Value u = select(isFirst, range.first, range.last);
  Value merge = select(isFirst, mergeFirst, mergeLast);
  auto ifMerge = scf::IfOp::create(b, loc, merge, /*withElseRegion=*/false);
  b.setInsertionPoint(ifMerge.thenBlock()->getTerminator());
  StreamKPiece cut = describePiece(u, piece.workgroup, range.begin, range.end);
  Value m0 = mul(cut.queryBlockIndex, constIndex(config.getTile()[0]));
  Value firstOwner = toIndex(ownerOf(cut.firstStep));
  Value lastStep = sub(add(cut.firstStep, cut.blocks), one);
  Value ownersEnd = toIndex(add(ownerOf(lastStep), one));
  PartialRange owners{
      firstOwner, ownersEnd,
      [&](Value owner) {
        return SmallVector<Value>{owner, streamKSlotOf(cut, toScalar(owner))};
      },
      constIndex(0)};
  return buildCombine(cut.batch, cut.head, m0, numWaves, owners);
}

LogicalResult AttentionTiler::run() {
  MLIRContext *context = b.getContext();
  viewOperands();
  ArrayRef<int64_t> tileSizes = config.getTile();
  int64_t blockM = tileSizes[0], blockN = tileSizes[1];
  MemRefType qType = op.getQ().getType();
  // A head dim that is not a power of two is padded inside the kernel: the
  // loads read zeros past it (which add nothing to S or O) and the stores
  // skip it. Q and K have the scores' head dim, V and O the values' (they
  // may differ).
  int64_t realHeadDim = qType.getDimSize(3);
  int64_t realHeadDimV = op.getV().getType().getDimSize(3);
  int64_t headDim = getPaddedHeadDim(realHeadDim);
  int64_t headDimV = getPaddedHeadDim(realHeadDimV);
  Type element = qType.getElementType();
  Type f32 = b.getF32Type();
  unsigned elementBytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  unsigned numWaves = config.getNumWaves();

  // Workgroup (x, y, z) = (query block, head, batch); with stream-K, the
  // query blocks of the workgroup's share of the steps, one at a time.
  Value pidM, head, batch;
  std::optional<StreamKPiece> piece;
  if (mode == Mode::StreamK) {
    FailureOr<AttentionStreamKWork> work =
        getAttentionStreamKWork(op, config, [&] { return op.emitOpError(); });
    if (failed(work))
      return failure();
    streamK = *work;
    piece = beginStreamK();
    pidM = piece->queryBlockIndex;
    head = piece->head;
    batch = piece->batch;
  } else if (runsLongestBlocksFirst()) {
    Value queryBlocks = arith::CeilDivUIOp::create(b, loc, dim(op.getQ(), 2),
                                                   constIndex(blockM));
    Value heads = dim(op.getQ(), 1);
    Value batches = dim(op.getQ(), 0);
    std::tie(pidM, head, batch) =
        longestBlocksFirst(queryBlocks, heads, batches, /*fromLast=*/true);
  } else {
    std::tie(pidM, head, batch) = gridProgramIds();
  }
  // Split-KV: z = batch * splits + split.
  Value split;
  int64_t splits = config.getSplits();
  if (mode == Mode::Split) {
    split = arith::RemUIOp::create(b, loc, batch, constIndex(splits));
    batch = arith::DivUIOp::create(b, loc, batch, constIndex(splits));
  }
  // Varlen: z is the sequence; the arrays become its views.
  if (op.isVarlen()) {
    viewSequence(batch);
    batch = constIndex(0);
  }
  Value m0 = arith::MulIOp::create(b, loc, pidM, constIndex(blockM));
  // With packed query heads, y is the key/value head (queries and output
  // are views of [batch, kv heads, group x seq_q, head dim]).
  Value kvHead = head;
  if (packedHeads == 1) {
    Value groups =
        arith::DivUIOp::create(b, loc, dim(op.getQ(), 1), dim(op.getK(), 1));
    kvHead = arith::DivUIOp::create(b, loc, head, groups);
  }
  // Queries per head: the sequence's with varlen (`queries` is its view);
  // Q's own otherwise (with packed heads `queries` stacks the group's).
  Value seqQ = dim(op.isVarlen() ? queries : op.getQ(), 2);
  // A paged cache: the sequence's context length, clamped to its pages.
  Value seqKV = op.isPaged() ? pagedLength(batch) : dim(keys, 2);
  Value zero = constIndex(0);

  // The transposed form S^T = K Q^T, O^T = V^T P^T: the accumulators hold
  // queries along their columns, waves split the queries, and a lane holds
  // one query's keys (or head dims) down its registers. Softmax statistics
  // are then column reductions, almost all within a lane, and P^T's
  // accumulator layout is the next instruction's B operand layout: it feeds
  // the second product from registers. Q^T (a transposed view) is loaded
  // once; K and V^T (a transposed view, D contiguous in memory) per key
  // block.
  unsigned waveSize = target.waveSize;
  FailureOr<MmaAttr> mmaLayout = getMmaLayout(op, config.getInstr().getValue(),
                                              {1, int64_t(numWaves)}, target);
  if (failed(mmaLayout))
    return failure();
  MmaAttr mma = *mmaLayout;
  const MmaInstr &instr = mma.getInstruction();
  // Head dims a chunk at a time where registers are short (WMMA past 128)
  // or where the MFMA's 32 rows at a time compute less than the padded
  // head dim (getAttentionHeadDimChunk):
  // S^T sums one product per chunk of K and Q^T, O^T keeps one accumulator
  // per chunk of V^T. Chunks wholly past the real head dim are left out.
  int64_t chunk = getAttentionHeadDimChunk(
      instr, std::max(headDim, headDimV), std::max(realHeadDim, realHeadDimV),
      /*masked=*/!op.getKeyWindow().isFull());
  int64_t chunkQK = std::min(chunk, headDim),
          chunkV = std::min(chunk, headDimV);
  int64_t chunksQK = llvm::divideCeil(realHeadDim, chunkQK);
  int64_t chunksV = llvm::divideCeil(realHeadDimV, chunkV);
  // Whether chunk `c` of `size` head dims reaches past the `real` ones
  // (its loads read zeros there, its stores skip them).
  auto paddedChunk = [](int64_t c, int64_t size, int64_t real) {
    return (c + 1) * size > real;
  };
  // Operands read from LDS at their product rather than all after the
  // key block's barrier: with chunks, one chunk's K or V^T at a time.
  bool chunked = chunk < std::max(headDim, headDimV);
  // On the MFMA chips, past four chunks, each chunk is read one product
  // ahead (in front of the product before its own) where the registers of
  // one more chunk are free: up to 96 registers a lane of O^T accumulators
  // (a head dim of 192 at 32 queries a wave). Each product's first matrix
  // instruction otherwise waits for its chunk's LDS reads (gfx942 bf16 head
  // dim 192, causal: 20 % of the key loop's clocks). Past 96 the chunk
  // ahead spilled (gfx942 f16 head dim 224: 250 VGPRs -> 262 and 6 AGPRs);
  // with three chunks (head dims 80 and 96) it measured mixed, -4 to +11
  // points (docs/performance.md, "Head-dim chunks read one product ahead").
  int64_t accumulatorRegisters =
      chunksV * chunkV * blockM / numWaves / int64_t(target.waveSize);
  bool readsChunksAhead = chunked && !instr.isWmma() &&
                          std::max(chunksQK, chunksV) > 4 &&
                          accumulatorRegisters <= 96;
  auto markReadAtUse = [&](Value load) {
    if (!chunked)
      return;
    load.getDefiningOp()->setAttr(kLdsReadAtUseAttrName, b.getUnitAttr());
    if (readsChunksAhead)
      load.getDefiningOp()->setAttr(kLdsReadAheadAttrName, b.getUnitAttr());
  };
  // A key block's origin moves along the keys each iteration while every
  // lane's coordinates stay: the origin goes to the loads' scalar offset
  // (only in bounds, where the lowering uses it).
  auto markScalarOrigin = [&](Value load) {
    auto tileLoad = cast<LoadOp>(load.getDefiningOp());
    if (tileLoad.getInBounds())
      tileLoad->setAttr(kScalarOriginAttrName, b.getUnitAttr());
  };
  auto qLayout = getCoalescedLayout(context, {chunkQK, blockM}, 0, elementBytes,
                                    numWaves, waveSize);
  // A chunk of K or V^T is too small for 16 bytes per lane of the
  // workgroup: its waves split it both ways.
  auto kLayout =
      chunked ? getSpreadCoalescedLayout(context, {blockN, chunkQK}, 1,
                                         elementBytes, numWaves, waveSize)
              : getCoalescedLayout(context, {blockN, chunkQK}, 1, elementBytes,
                                   numWaves, waveSize);
  // A split-KV block on one or two waves whose split walks at most two key
  // blocks reads K straight into the first product's operand layout (each
  // wave all of it: the waves split the queries). Such a split's time is
  // the chain from its blocks' loads to its partial's store, and staging K
  // through LDS (a write, a wait and a read of every element) lengthens it;
  // a longer split streams its keys at the HBM floor, where keeping a
  // block's K in registers until its product only costs registers (gfx942,
  // one wave at head dim 128: 224 VGPRs -> 256 and 13 AGPRs of spill
  // space). (A paged cache's third dimension is its page, not the keys.)
  // Each lane loads runs of the operands' K packing (16 bytes), which Q^T's
  // operand layout shares (docs/performance.md, "Decode: K into the
  // operands").
  Attribute kLoadLayout = kLayout;
  int64_t splitKeys = cast<MemRefType>(keys.getType()).getDimSize(2);
  bool shortSplits =
      mode == Mode::Split && !op.isPaged() &&
      !ShapedType::isDynamic(splitKeys) &&
      llvm::divideCeil(llvm::divideCeil(splitKeys, splits), blockN) <= 2;
  if (shortSplits && numWaves <= 2 && !chunked && !instr.isWmma())
    kLoadLayout = MmaOperandAttr::get(
        context, /*operandIndex=*/0, mma,
        getOperandKWidth(instr, waveSize, chunkQK, elementBytes));
  // Each lane also holds a run of consecutive keys of V^T, so that V^T's
  // LDS copy keeps the keys (its K) contiguous: written and read in runs,
  // not element by element. The run is what the second product reads per
  // lane (4 keys, the accumulator order P^T imposes, also where the
  // instruction takes 8 per lane). Lanes load 16 bytes of head dims, or
  // less where the workgroup's lanes would otherwise cover the key block
  // more than once (a 32-key block at head dim 128: 8 bytes).
  // Where LDS reads can transpose (readsOperandTransposed), V^T is loaded
  // as stored instead, 16 bytes of head dims per lane, and read transposed,
  // unless 16-byte loads would cover the key block more than once (small
  // head dims and key blocks keep the runs).
  int64_t keysPerLane =
      std::min<int64_t>(instr.getOperandElementsPerLane(waveSize), 4);
  unsigned vectorBytes = 16;
  auto keysCoveredBy = [&](int64_t keys) {
    int64_t lanesAlongHeadDim =
        std::min<int64_t>(waveSize, chunkV * elementBytes / vectorBytes);
    return int64_t(waveSize) / lanesAlongHeadDim * numWaves * keys;
  };
  auto keysCovered = [&] { return keysCoveredBy(keysPerLane); };
  const Chip *chip = lookupChip(target.chip);
  if (chip && readsOperandTransposed(*chip, instr, elementBytes) &&
      keysCoveredBy(1) <= blockN)
    keysPerLane = 1;
  while (keysCovered() > blockN && vectorBytes > elementBytes)
    vectorBytes /= 2;
  while (keysCovered() > blockN && keysPerLane > 1)
    keysPerLane /= 2;
  auto vLayout =
      chunked
          ? getSpreadCoalescedLayout(
                context, {chunkV, blockN}, 0, elementBytes, numWaves, waveSize,
                std::min<int64_t>(instr.getOperandElementsPerLane(waveSize), 4))
          : getCoalescedLayout(context, {chunkV, blockN}, 0, elementBytes,
                               numWaves, waveSize, keysPerLane, vectorBytes);
  Value queriesTransposed = transposedView(queries);
  SmallVector<Value> qTChunks;
  for (int64_t c = 0; c < chunksQK; ++c) {
    Value qT = LoadOp::create(
        b, loc, tile({chunkQK, blockM}, element, qLayout), queriesTransposed,
        ValueRange{batch, head, constIndex(c * chunkQK), m0});
    if (readsAttentionQueriesFromLds(instr, std::max(headDim, headDimV)))
      markReadAtUse(qT);
    qTChunks.push_back(qT);
  }
  Value vTransposed = transposedView(values);

  auto sType = tile({blockN, blockM}, f32, mma);
  auto oType = tile({chunkV, blockM}, f32, mma);
  auto iotaType = tile({blockN, blockM}, b.getI32Type(), mma);
  FailureOr<RankedTensorType> statType =
      getReducedTileType(sType, 0, [&] { return op.emitOpError(); });
  if (failed(statType))
    return failure();
  // The key loops keep each query's sum l as the sums of the lane groups
  // that hold its keys (`tessel.reduce ... within_lanes`): a block's weights
  // are summed within each lane, and the lanes' parts are added once after
  // the last loop (laneSumsTotal), not once a block (on gfx942 an LDS
  // permute and a wait for it, on gfx950 a v_permlane32_swap and two adds).
  FailureOr<RankedTensorType> sumType = getReducedTileType(
      sType, 0, [&] { return op.emitOpError(); }, /*withinLanes=*/true);
  if (failed(sumType))
    return failure();
  double negInf = -std::numeric_limits<double>::infinity();
  Value mInit = splat(*statType, negInf);
  Value lInit = splat(*sumType, 0.0);
  Value accInit = splat(oType, 0.0);
  if (op.getSinks() && mode != Mode::Split) {
    // The sink is a key with no value: it starts every row's max and sum
    // (exp2(sink - sink) = 1, or 0 for a -inf sink), in the first lane
    // group's part of the sum. Splits leave it to the combine, which adds
    // it once.
    mInit = sinkTile(*statType, head, /*rowsDim=*/1);
    Value noSink = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OEQ,
        BroadcastOp::create(b, loc, *sumType, mInit), splat(*sumType, negInf));
    RankedTensorType groupType =
        tile(sumType->getShape(), b.getI32Type(), sumType->getEncoding());
    Value group = IotaOp::create(b, loc, groupType, b.getI64IntegerAttr(0));
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                        splat(groupType, 0));
    Value one = arith::SelectOp::create(b, loc, first, splat(*sumType, 1.0),
                                        splat(*sumType, 0.0));
    lInit = arith::SelectOp::create(b, loc, noSink, splat(*sumType, 0.0), one);
  }
  // The lane groups' parts of l added up: the sum itself.
  auto laneSumsTotal = [&](Value l) -> Value {
    return ReduceOp::create(b, loc, *statType, l, b.getI64IntegerAttr(0),
                            b.getStringAttr("add"), UnitAttr());
  };
  // A block's weights `p` summed within each lane (a part of l).
  auto laneSums = [&](Value p) -> Value {
    return ReduceOp::create(b, loc, *sumType, p, b.getI64IntegerAttr(0),
                            b.getStringAttr("add"), b.getUnitAttr());
  };
  // l times one factor per query.
  auto scaleSums = [&](Value l, Value factor) -> Value {
    return arith::MulFOp::create(b, loc, l,
                                 BroadcastOp::create(b, loc, *sumType, factor));
  };

  // Masks (KeyWindow): query i sits at key position i + shift (aligned to
  // the bottom-right corner) and sees keys [i + shift - left, i + shift +
  // right]. Key blocks no query of this block sees are skipped.
  KeyWindow window = op.getKeyWindow();
  Value shift = arith::SubIOp::create(b, loc, seqKV, seqQ);
  Value firstPosition = arith::AddIOp::create(b, loc, m0, shift);
  // A packed block's rows are seq_q queries of each head of the group.
  int64_t queriesPerBlock =
      packedHeads > 1 ? op.getQ().getType().getDimSize(2) : blockM;
  Value lastPosition = arith::AddIOp::create(b, loc, firstPosition,
                                             constIndex(queriesPerBlock - 1));
  auto clampKeys = [&](Value key) {
    return arith::MinSIOp::create(b, loc, seqKV,
                                  arith::MaxSIOp::create(b, loc, key, zero))
        .getResult();
  };
  auto alignDown = [&](Value key) {
    return arith::MulIOp::create(
               b, loc, arith::DivUIOp::create(b, loc, key, constIndex(blockN)),
               constIndex(blockN))
        .getResult();
  };
  // With a left bound, the first key a query sees (i + shift - left) and
  // the block holding the first key of the block's first query.
  auto firstSeen = [&](Value position) {
    return arith::SubIOp::create(b, loc, position, constIndex(window.left))
        .getResult();
  };
  Value kvBegin =
      window.hasLeft() ? alignDown(clampKeys(firstSeen(firstPosition))) : zero;
  Value kvEnd = seqKV;
  if (window.hasRight())
    kvEnd = clampKeys(arith::AddIOp::create(b, loc, lastPosition,
                                            constIndex(window.right + 1)));
  // A packed sequence shorter than the launch's longest: its query blocks
  // past its end visit no key.
  if (op.isVarlen())
    kvEnd = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, m0, seqQ),
        kvEnd, kvBegin);
  if (mode == Mode::Split) {
    // Each split takes a whole number of key blocks of the block's key
    // range (all keys, or the ones its queries' windows reach).
    Value keys = arith::MaxSIOp::create(
        b, loc, zero, arith::SubIOp::create(b, loc, kvEnd, kvBegin));
    Value perSplit =
        arith::CeilDivUIOp::create(b, loc, keys, constIndex(splits));
    Value chunk = arith::MulIOp::create(
        b, loc,
        arith::CeilDivUIOp::create(b, loc, perSplit, constIndex(blockN)),
        constIndex(blockN));
    kvBegin = arith::AddIOp::create(
        b, loc, kvBegin, arith::MulIOp::create(b, loc, split, chunk));
    kvEnd = arith::MinSIOp::create(
        b, loc, kvEnd, arith::AddIOp::create(b, loc, kvBegin, chunk));
  }
  if (mode == Mode::StreamK) {
    // The piece's key blocks (stream-K takes no left window: kvBegin is 0).
    Value keysPerBlock = constIndex(blockN);
    Value pieceEnd = mul(toIndex(piece->end), keysPerBlock);
    kvBegin = mul(toIndex(piece->begin), keysPerBlock);
    kvEnd = arith::MinSIOp::create(b, loc, kvEnd, pieceEnd);
  }
  double scaleLog2 = op.getEffectiveScale() * kLog2e;

  // With a positive scale, max(s) * c = max(s * c): the scale (folded with
  // log2 e) applies to one value per query for the max and inside one fma
  // per element for the exponent. Descales are run-time values of any
  // sign: the scores are multiplied by scale * dq * dk first.
  bool foldScale = scaleLog2 > 0 && op.getDescale().empty();
  Value scoreScale = splat(sType, scaleLog2);
  Value valueScale = splat(*statType, 1.0);
  if (!op.getDescale().empty()) {
    scoreScale = arith::MulFOp::create(
        b, loc, scoreScale,
        arith::MulFOp::create(b, loc, scalarTile(sType, op.getDescaleQ()),
                              scalarTile(sType, op.getDescaleK())));
    valueScale = scalarTile(*statType, op.getDescaleV());
  }

  // The blocks before the tail lie inside the sequence: their loads need
  // no bounds checks, nor do chunks within the real head dim. (A static
  // sequence shorter than a block has no such blocks.)
  // A static sequence of whole key blocks has no tail: every block lies
  // inside it, the masked ones (a window's edges, the causal diagonal) too.
  int64_t staticKeyCount = cast<MemRefType>(keys.getType()).getDimSize(2);
  bool wholeKeyBlocks = !op.isVarlen() && !op.isPaged() &&
                        !ShapedType::isDynamic(staticKeyCount) &&
                        staticKeyCount % blockN == 0;
  auto loadsInBounds = [&](bool masked, bool padded) {
    bool wholeKeys = !masked && (ShapedType::isDynamic(staticKeyCount) ||
                                 staticKeyCount >= blockN);
    return wholeKeys && !padded ? b.getUnitAttr() : UnitAttr();
  };
  // Where block n0's keys are: rows n0.. of the sequence's K and V^T, or of
  // its page of a paged cache.
  struct BlockSource {
    Value keys, valuesT, batch, row;
  };
  auto sourceOf = [&](Value n0) {
    if (!op.isPaged())
      return BlockSource{keys, vTransposed, batch, n0};
    PageBlock page = viewPage(batch, n0, seqKV);
    return BlockSource{page.keys, transposedView(page.values), zero, page.row};
  };
  auto loadKeys = [&](const BlockSource &from, bool masked) {
    SmallVector<Value> kChunks;
    for (int64_t c = 0; c < chunksQK; ++c) {
      Value k = LoadOp::create(
          b, loc, tile({blockN, chunkQK}, element, kLoadLayout), from.keys,
          ValueRange{from.batch, kvHead, from.row, constIndex(c * chunkQK)},
          loadsInBounds(masked, paddedChunk(c, chunkQK, realHeadDim)));
      markReadAtUse(k);
      markScalarOrigin(k);
      kChunks.push_back(k);
    }
    return kChunks;
  };
  auto loadValues = [&](const BlockSource &from, bool masked) {
    SmallVector<Value> vTChunks;
    for (int64_t c = 0; c < chunksV; ++c) {
      Value vT = LoadOp::create(
          b, loc, tile({chunkV, blockN}, element, vLayout), from.valuesT,
          ValueRange{from.batch, kvHead, constIndex(c * chunkV), from.row},
          loadsInBounds(masked, paddedChunk(c, chunkV, realHeadDimV)));
      markReadAtUse(vT);
      markScalarOrigin(vT);
      vTChunks.push_back(vT);
    }
    return vTChunks;
  };
  // S^T of a block: one product per head-dim chunk.
  auto scoresOf = [&](ArrayRef<Value> kChunks) {
    Value s = splat(sType, 0.0);
    for (auto [k, qT] : llvm::zip(kChunks, qTChunks))
      s = DotOp::create(b, loc, sType, k, qT, s, UnitAttr());
    return s;
  };

  // The maximum the exponents subtract: 0 for a query with no key so far
  // (-inf), so that exp2 gives 0 there, not NaN.
  auto exponentBase = [&](Value m) -> Value {
    Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                                        splat(*statType, negInf));
    return arith::SelectOp::create(b, loc, empty, splat(*statType, 0.0), m);
  };
  // What the masks of block n0 compare, per query, in `type` (a tile of
  // i32 whose dimension 1 runs over the block's queries): the query's
  // offset in the block (a packed block's rows are queries of each head of
  // the group), the key offset the query sees no more from (a right bound:
  // i + m0 + shift + right + 1 - n0) and the first it sees (a left edge:
  // i + m0 + shift - left - n0).
  auto queryOffsetsIn = [&](RankedTensorType type) -> Value {
    Value offset = IotaOp::create(b, loc, type, b.getI64IntegerAttr(1));
    if (packedHeads > 1)
      offset = arith::RemUIOp::create(
          b, loc, offset,
          splatValue(type, arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                                        queriesPerBlock)));
    return offset;
  };
  auto splatI32 = [&](RankedTensorType type, Value index) {
    return splatValue(
        type, arith::IndexCastOp::create(b, loc, b.getI32Type(), index));
  };
  auto firstUnseenKeys = [&](Value n0, Value queryOffsets) -> Value {
    auto type = cast<RankedTensorType>(queryOffsets.getType());
    Value firstUnseen = arith::SubIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, firstPosition,
                              constIndex(window.right + 1)),
        n0);
    return arith::AddIOp::create(b, loc, queryOffsets,
                                 splatI32(type, firstUnseen));
  };
  auto firstSeenKeys = [&](Value n0, Value queryOffsets) -> Value {
    auto type = cast<RankedTensorType>(queryOffsets.getType());
    return arith::AddIOp::create(
        b, loc, queryOffsets,
        splatI32(type,
                 arith::SubIOp::create(b, loc, firstSeen(firstPosition), n0)));
  };
  // Block n0's scores `s` (S^T) with the keys (rows) past the sequence,
  // and outside the query's (column's) window, at -inf. Each query sees
  // the block's first `limit` keys: one compare of the key's offset in the
  // block per score (the query's limit is the same in every register of
  // its lane), and a second one with a left edge.
  auto maskScores = [&](Value n0, Value s) -> Value {
    // (Keys past the sequence only where its last block can be partial.)
    Value limit;
    if (!wholeKeyBlocks)
      limit = splatI32(iotaType, arith::SubIOp::create(b, loc, seqKV, n0));
    Value queryOffsets;
    if (window.hasRight() || window.hasLeft())
      queryOffsets = queryOffsetsIn(iotaType);
    if (window.hasRight()) {
      // Query i sees keys j <= i + shift + right, that is j - n0 < i +
      // (m0 + shift + right + 1 - n0) with i the query's offset here.
      Value queries = firstUnseenKeys(n0, queryOffsets);
      limit = limit ? arith::MinSIOp::create(b, loc, limit, queries) : queries;
    }
    Value keyOffset = IotaOp::create(b, loc, iotaType, b.getI64IntegerAttr(0));
    Value valid;
    if (limit)
      valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                    keyOffset, limit);
    if (window.hasLeft()) {
      // And keys j >= i + shift - left: j - n0 >= i + (m0 + shift - left
      // - n0).
      Value seen =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, keyOffset,
                                firstSeenKeys(n0, queryOffsets));
      valid = valid ? arith::AndIOp::create(b, loc, valid, seen) : seen;
    }
    if (!valid)
      return s;
    return arith::SelectOp::create(b, loc, valid, s, splat(sType, negInf));
  };
  // maskScores behind a wave-uniform branch: a wave one of whose queries
  // does not see the whole block masks it (a compare and a select per
  // score); a wave all of whose queries see every key of it keeps the
  // scores as they are. Of a causal query block's diagonal key blocks, a
  // 32-query wave sees one 64-key block partly and the others whole or not
  // at all: one compare per lane decides (maskScores' conditions at the
  // block's last key, and at its first for a left edge).
  auto maskScoresWhereNeeded = [&](Value n0, Value s) -> Value {
    RankedTensorType indexType =
        tile(statType->getShape(), b.getI32Type(), statType->getEncoding());
    auto constant = [&](int64_t value) {
      return splatValue(indexType, arith::ConstantIntOp::create(
                                       b, loc, b.getI32Type(), value));
    };
    Value queryOffsets = queryOffsetsIn(indexType);
    Value partial;
    auto either = [&](Value condition) {
      partial =
          partial ? arith::OrIOp::create(b, loc, partial, condition).getResult()
                  : condition;
    };
    if (!wholeKeyBlocks)
      either(arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::slt,
          splatI32(indexType, arith::SubIOp::create(b, loc, seqKV, n0)),
          constant(blockN)));
    if (window.hasRight())
      either(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                   firstUnseenKeys(n0, queryOffsets),
                                   constant(blockN)));
    if (window.hasLeft())
      either(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                   firstSeenKeys(n0, queryOffsets),
                                   constant(0)));
    if (!partial)
      return s;
    Value anyPartial = WaveAnyOp::create(b, loc, b.getI1Type(), partial);
    auto masking = scf::IfOp::create(b, loc, TypeRange{s.getType()}, anyPartial,
                                     /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(masking.thenBlock());
    scf::YieldOp::create(b, loc, maskScores(n0, s));
    b.setInsertionPointToStart(masking.elseBlock());
    scf::YieldOp::create(b, loc, s);
    return masking.getResult(0);
  };
  // The rest of key block n0 once its scores `s` (S^T) are known: the
  // masks of a `masked` block (the tail past the sequence, causal diagonal
  // blocks; the others need none), the online softmax and O^T += V^T P^T.
  auto finishStep = [&](Value n0, Value s, ArrayRef<Value> vTChunks,
                        ValueRange iters, bool masked) {
    Value m = iters[0], l = iters[1];
    SmallVector<Value> accs(iters.drop_front(2));
    if (!foldScale)
      s = arith::MulFOp::create(b, loc, s, scoreScale);
    if (masked)
      s = maskScores(n0, s);
    // Online softmax over one value per query, in the log2 domain; a query
    // with no key so far keeps max -inf, and exp2 is taken against 0 there
    // so that it gives 0, not NaN. maxnum ignores a NaN score, which still
    // reaches the sum (and O) through its exp2.
    Value blockMax = ReduceOp::create(
        b, loc, *statType, s, b.getI64IntegerAttr(0), b.getStringAttr("max"));
    if (foldScale)
      blockMax =
          arith::MulFOp::create(b, loc, blockMax, splat(*statType, scaleLog2));
    Value mNew = arith::MaxNumFOp::create(b, loc, m, blockMax);
    Value mSafe = exponentBase(mNew);
    Value minusMax = BroadcastOp::create(b, loc, sType,
                                         arith::NegFOp::create(b, loc, mSafe));
    Value exponent = math::FmaOp::create(
        b, loc, s, splat(sType, foldScale ? scaleLog2 : 1.0), minusMax);
    // The hardware exp2 alone: results below 2^-126 flush to 0.
    auto approximate = arith::FastMathFlags::afn;
    Value p = math::Exp2Op::create(b, loc, exponent, approximate);
    Value alpha = math::Exp2Op::create(
        b, loc, arith::SubFOp::create(b, loc, m, mSafe), approximate);
    Value pLow = roundProbabilities(p, tile({blockN, blockM}, element, mma),
                                    std::max(headDim, headDimV));
    Value blockSum = laneSums(summedProbabilities(p, pLow));
    Value lNew = arith::AddFOp::create(b, loc, scaleSums(l, alpha), blockSum);
    Value alphaTile = BroadcastOp::create(b, loc, oType, alpha);
    for (Value &acc : accs)
      acc = arith::MulFOp::create(b, loc, acc, alphaTile);
    SmallVector<Value> results = {mNew, lNew};
    for (auto [acc, vT] : llvm::zip(accs, vTChunks))
      results.push_back(
          DotOp::create(b, loc, oType, vT, pLow, acc, UnitAttr()));
    return results;
  };
  // One key block. Every load of the block first: LDS takes the block's K
  // and V^T in one write phase.
  auto step = [&](Value n0, ValueRange iters, bool masked) {
    BlockSource from = sourceOf(n0);
    bool pastSequence = masked && !wholeKeyBlocks;
    SmallVector<Value> kChunks = loadKeys(from, pastSequence);
    SmallVector<Value> vTChunks = loadValues(from, pastSequence);
    return finishStep(n0, scoresOf(kChunks), vTChunks, iters, masked);
  };
  // A loop over the key blocks in [begin, end) whose iteration yields
  // `body` of the block's first key and the loop state.
  auto blockLoop =
      [&](Value begin, Value end, ValueRange inits,
          llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body) {
        return scf::ForOp::create(
            b, loc, begin, end, constIndex(blockN), inits,
            [&](OpBuilder &nested, Location, Value n0, ValueRange iters) {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPoint(nested.getInsertionBlock(),
                                  nested.getInsertionPoint());
              scf::YieldOp::create(b, loc, body(n0, iters));
            });
      };
  auto keyLoop = [&](Value begin, Value end, ValueRange inits, bool masked) {
    scf::ForOp loop =
        blockLoop(begin, end, inits, [&](Value n0, ValueRange iters) {
          return step(n0, iters, masked);
        });
    if (masked)
      loop->setAttr(kOwnLoadsAttrName, b.getUnitAttr());
    return loop;
  };
  // The loop over whole, unmasked blocks with the next block's first
  // product one iteration ahead: iteration n0 computes S^T of block n0 +
  // N (clamped to the loop's last block, whose repeat is never used) and
  // then the softmax and second product of block n0, whose S^T the
  // previous iteration computed. The softmax's VALU work then has no
  // dependence on the matrix instructions issued just before it, and runs
  // under them. The first block's S^T is computed in front of the loop
  // (masked loads: the loop may run no iteration).
  //
  // Where P is a 16-bit float, the loop also rescales lazily: it keeps a
  // query's running maximum m until a block's scores exceed it by more
  // than kLazyRescaleThreshold (log2 units; rescaleIfGrown; a four-wave loop
  // carries each block's maximum, computed with its S^T an iteration
  // ahead, for the test). The weights exp2(s - m) then
  // stay at most 2^8, which f16 and bf16 hold at full precision, and l and O
  // stay exact relative to the m they were summed against. The rescale of
  // O and l (one multiply per accumulator register) runs only in a wave
  // some query of which crossed the threshold: a branch on tessel.wave_any
  // at the top of the iteration, marked unlikely (LLVM lays its block out
  // of the loop's line; the rest of the iteration stays one block for the
  // scheduler). In the steady state of a long sequence a row's maximum
  // rarely grows by 2^8: the loop's first block takes the branch where m
  // starts at -inf (no sink, no masked loop before).
  bool lazyRescale = element.isF16() || element.isBF16();
  // checkAttentionConfig admits ping_pong with lazy rescaling only.
  bool pingPong = config.getPingPong() && lazyRescale;
  // A ping-pong loop at padded head dim 64 takes the weights first
  // (lazyWeights): its test, on the block's sums, which the block needs
  // anyway, takes no maximum at all (15 v_max3_f32 a 64-key block fewer).
  // On gfx950 its softmax phase binds (32 quarter-rate exponentials a
  // block); on gfx942 the wave's own loop gets shorter (llvm-mca: 62.8 ->
  // 65.2 % dense at f16) for 0.3 points of the model's structural
  // efficiency. Elsewhere the test on the block's maximum measured faster
  // (docs/performance.md, "Weights first: the lazy rescale without the
  // block maximum"); the other ping-pong loops test the scores
  // (rescaleIfGrown). (Ping-pong loops are scores-ahead loops only.)
  bool weightsFirst =
      pingPong && getPaddedHeadDim(std::max(headDim, headDimV)) <= 64;
  // A ping-pong loop's masked blocks (the causal diagonal, a window's
  // edges) are masked only in the waves that need it (a 32-query wave meets
  // one 64-key diagonal block partly, and sees the others whole or not at
  // all): a compare and a select per score less in three of a causal
  // block's four diagonal blocks, whose VALU would otherwise run beside the
  // other wave's softmax. Taken on the 16-deep instructions (gfx950), whose
  // matrix phases are short enough for that to bind, and at padded head dim
  // 64; gfx942's head dim 128 (three LDS slots, long matrix phases) keeps
  // the unconditional masks, where the branch measured worse (bf16 causal
  // 93.7 -> 92.6 %, 2 VGPRs spilled) (docs/performance.md, "Masks only in
  // the waves that need them").
  bool branchesMasks = pingPong && (instr.k >= 16 || weightsFirst);
  // A four-wave scores-ahead loop carries each block's maximum, computed an
  // iteration ahead under the next block's MFMAs, for its test; testing the
  // scores instead measured mixed there (-7 to +12 points over 40 problems)
  // and spilled gfx942's bf16 head-dim-128 causal kernel on 128x32 tiles.
  bool carriesMax = lazyRescale && !weightsFirst && !pingPong;
  auto rowMax = [&](Value s) -> Value {
    Value blockMax = ReduceOp::create(
        b, loc, *statType, s, b.getI64IntegerAttr(0), b.getStringAttr("max"));
    if (!foldScale)
      return blockMax;
    return arith::MulFOp::create(b, loc, blockMax, splat(*statType, scaleLog2));
  };
  auto scaledScores = [&](Value s) -> Value {
    if (foldScale)
      return s;
    return arith::MulFOp::create(b, loc, s, scoreScale);
  };
  // m, l and O moved from the maximum m to mNew: l and O times exp2(m -
  // mNew), which is 0 where m was -inf (no key yet).
  auto rescaleTo = [&](Value m, Value mNew, Value l, ArrayRef<Value> accs) {
    Value alpha = math::Exp2Op::create(
        b, loc, arith::SubFOp::create(b, loc, m, exponentBase(mNew)),
        arith::FastMathFlags::afn);
    SmallVector<Value> rescaled = {mNew, scaleSums(l, alpha)};
    Value alphaTile = BroadcastOp::create(b, loc, oType, alpha);
    for (Value acc : accs)
      rescaled.push_back(arith::MulFOp::create(b, loc, acc, alphaTile));
    return rescaled;
  };
  // Where some query's block maximum exceeds its running m by more than the
  // threshold: m becomes the larger and l and O are scaled to it. Returns m,
  // l and O. The test compares the block's (unmasked or masked) scores
  // themselves with one limit per query (a score above it is a maximum
  // above it): tessel-lower-to-gpu then takes each lane's maximum of its
  // registers and compares once, with no exchange between the lanes that
  // share a query (on gfx942 an LDS permute and a wait for it); the
  // maximum itself is taken only in the unlikely branch.
  // With `blockMax` (the block's maximum, carried), the test compares it.
  auto rescaleIfGrown = [&](Value m, Value l, ArrayRef<Value> accs,
                            Value scores, Value blockMax = Value()) {
    Value limit = arith::AddFOp::create(
        b, loc, m, splat(*statType, kLazyRescaleThreshold));
    Value grown;
    if (blockMax) {
      grown = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, blockMax,
                                    limit);
    } else {
      // s * scaleLog2 > limit where s > limit / scaleLog2 (scaleLog2 > 0;
      // the threshold need not be exact to the last bit).
      if (foldScale)
        limit = arith::MulFOp::create(b, loc, limit,
                                      splat(*statType, 1.0 / scaleLog2));
      grown = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, scores,
                                    BroadcastOp::create(b, loc, sType, limit));
    }
    Value anyGrown = WaveAnyOp::create(b, loc, b.getI1Type(), grown);
    SmallVector<Type> types = {m.getType(), l.getType()};
    for (Value acc : accs)
      types.push_back(acc.getType());
    auto rescale = scf::IfOp::create(b, loc, types, anyGrown,
                                     /*withElseRegion=*/true);
    rescale->setAttr(kUnlikelyAttrName, b.getUnitAttr());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(rescale.thenBlock());
    scf::YieldOp::create(
        b, loc,
        rescaleTo(m,
                  arith::MaxNumFOp::create(
                      b, loc, m, blockMax ? blockMax : rowMax(scores)),
                  l, accs));
    b.setInsertionPointToStart(rescale.elseBlock());
    SmallVector<Value> kept = {m, l};
    kept.append(accs.begin(), accs.end());
    scf::YieldOp::create(b, loc, kept);
    return rescale.getResults();
  };
  // Block n0's weights against the running m (no new maximum), rounded
  // for the second product, and their sums within lanes (laneSums).
  auto roundedWeightsAndSum = [&](Value s, Value m) -> std::pair<Value, Value> {
    Value mSafe = exponentBase(m);
    Value minusMax = BroadcastOp::create(b, loc, sType,
                                         arith::NegFOp::create(b, loc, mSafe));
    Value exponent = math::FmaOp::create(
        b, loc, s, splat(sType, foldScale ? scaleLog2 : 1.0), minusMax);
    Value p = math::Exp2Op::create(b, loc, exponent, arith::FastMathFlags::afn);
    Value pLow = roundProbabilities(p, tile({blockN, blockM}, element, mma),
                                    std::max(headDim, headDimV));
    return {pLow, laneSums(summedProbabilities(p, pLow))};
  };
  // The same, and l with their sum added.
  auto blockWeights = [&](Value s, Value m,
                          Value l) -> std::pair<Value, Value> {
    auto [pLow, blockSum] = roundedWeightsAndSum(s, m);
    return {pLow, arith::AddFOp::create(b, loc, l, blockSum)};
  };
  // O^T += V^T P^T, chunk by chunk.
  auto secondProduct = [&](Value pLow, ArrayRef<Value> vTChunks,
                           ArrayRef<Value> accs) {
    SmallVector<Value> results;
    for (auto [acc, vT] : llvm::zip(accs, vTChunks))
      results.push_back(
          DotOp::create(b, loc, oType, vT, pLow, acc, UnitAttr()));
    return results;
  };
  // Block n0's weights, its sum added to l and O^T += V^T P^T.
  auto accumulateStep = [&](Value s, ArrayRef<Value> vTChunks, Value m, Value l,
                            ArrayRef<Value> accs) {
    auto [pLow, lNew] = blockWeights(s, m, l);
    SmallVector<Value> results = {m, lNew};
    llvm::append_range(results, secondProduct(pLow, vTChunks, accs));
    return results;
  };
  // Weights first: block n0's weights against the running m, and the
  // rescale only where some lane's part of a query's block sum exceeds
  // kLazyRescaleSumLimit (every weight is in one part, so all then stay
  // below it) or the query had no key before (m still -inf). The unlikely
  // branch takes the block's maximum, rescales l and O to it and computes the
  // weights again. Returns m, l (the block's sum added), O and the rounded
  // weights.
  auto lazyWeights = [&](Value s, Value m, Value l, ArrayRef<Value> accs) {
    auto [pLow, blockSum] = roundedWeightsAndSum(s, m);
    Value big =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, blockSum,
                              splat(*sumType, kLazyRescaleSumLimit));
    Value empty = BroadcastOp::create(
        b, loc,
        tile(sumType->getShape(), b.getI1Type(), sumType->getEncoding()),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                              splat(*statType, negInf)));
    Value anyGrown = WaveAnyOp::create(
        b, loc, b.getI1Type(), arith::OrIOp::create(b, loc, big, empty));
    SmallVector<Type> types = {m.getType(), l.getType()};
    for (Value acc : accs)
      types.push_back(acc.getType());
    types.push_back(pLow.getType());
    types.push_back(blockSum.getType());
    auto rescale = scf::IfOp::create(b, loc, types, anyGrown,
                                     /*withElseRegion=*/true);
    rescale->setAttr(kUnlikelyAttrName, b.getUnitAttr());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(rescale.thenBlock());
      Value mNew = arith::MaxNumFOp::create(b, loc, m, rowMax(s));
      SmallVector<Value> rescaled = rescaleTo(m, mNew, l, accs);
      auto [pLowNew, sumNew] = roundedWeightsAndSum(s, mNew);
      rescaled.push_back(pLowNew);
      rescaled.push_back(sumNew);
      scf::YieldOp::create(b, loc, rescaled);
      b.setInsertionPointToStart(rescale.elseBlock());
      SmallVector<Value> kept = {m, l};
      kept.append(accs.begin(), accs.end());
      kept.push_back(pLow);
      kept.push_back(blockSum);
      scf::YieldOp::create(b, loc, kept);
    }
    SmallVector<Value> results(rescale.getResults().drop_back(2));
    results[1] =
        arith::AddFOp::create(b, loc, results[1], rescale.getResults().back());
    results.push_back(rescale.getResults()[types.size() - 2]);
    return results;
  };
  // The lazy update without the scores ahead over whole, unmasked blocks:
  // the block's S^T, its maximum, the unlikely rescale, then its weights
  // against the kept m.
  auto lazyKeyLoop = [&](Value begin, Value end, ValueRange inits) {
    return blockLoop(begin, end, inits, [&](Value n0, ValueRange iters) {
      BlockSource from = sourceOf(n0);
      SmallVector<Value> kChunks = loadKeys(from, /*masked=*/false);
      SmallVector<Value> vTChunks = loadValues(from, /*masked=*/false);
      Value scores = scaledScores(scoresOf(kChunks));
      ValueRange state = rescaleIfGrown(
          iters[0], iters[1], SmallVector<Value>(iters.drop_front(2)), scores);
      return accumulateStep(scores, vTChunks, state[0], state[1],
                            SmallVector<Value>(state.drop_front(2)));
    });
  };
  // With `masked`, every block's scores are masked (maskScores): the causal
  // diagonal and a window's right edge of a sequence of whole key blocks,
  // whose loads stay in bounds.
  //
  // The scores ahead reach blocks up to `aheadEnd` (`end`, or the end of
  // the masked loop that follows, which then takes the last scores this
  // loop computed as its `firstScores`: S^T of its first block, not masked
  // yet).
  auto scoresAheadLoop = [&](Value begin, Value end, Value aheadEnd,
                             ValueRange inits, bool masked, Value firstScores) {
    // Built one op at a time: nested builder calls in one argument list
    // would order the ops by the C++ compiler's choice.
    Value one = constIndex(1), keysPerBlock = constIndex(blockN);
    Value span = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, aheadEnd, begin), one);
    Value blocksBefore = arith::DivUIOp::create(b, loc, span, keysPerBlock);
    Value lastBlock = arith::AddIOp::create(
        b, loc, begin,
        arith::MulIOp::create(b, loc, blocksBefore, keysPerBlock));
    Value first = firstScores;
    if (!first) {
      first = scoresOf(loadKeys(sourceOf(begin), /*masked=*/true));
      if (lazyRescale)
        first = scaledScores(first);
    }
    if (lazyRescale && masked)
      first = maskScores(begin, first);
    SmallVector<Value> loopInits(inits);
    loopInits.push_back(first);
    if (carriesMax)
      loopInits.push_back(rowMax(first));
    // The upper half of a ping-pong workgroup's waves starts a phase
    // behind (tessel-pipeline puts the loop's prologue in front of this
    // barrier), and the lower half catches up after the loop.
    if (pingPong)
      PhaseBarrierOp::create(b, loc, b.getI64IntegerAttr(1), UnitAttr());
    auto loop = scf::ForOp::create(
        b, loc, begin, end, constIndex(blockN), loopInits,
        [&](OpBuilder &nested, Location, Value n0, ValueRange iters) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          SmallVector<Value> state(iters.drop_back(carriesMax ? 2 : 1));
          Value scores = iters[state.size()];
          if (lazyRescale && !weightsFirst)
            state = llvm::to_vector_of<Value>(rescaleIfGrown(
                state[0], state[1],
                SmallVector<Value>(ArrayRef(state).drop_front(2)), scores,
                carriesMax ? iters.back() : Value()));
          // Ping-pong: the softmax phase (the block's weights), then the
          // matrix phase (the next block's S^T and this block's second
          // product, with the LDS reads and writes), a phase barrier after
          // each.
          Value pLow, lNew;
          if (pingPong) {
            if (weightsFirst) {
              state = lazyWeights(scores, state[0], state[1],
                                  ArrayRef<Value>(state).drop_front(2));
              pLow = state.pop_back_val();
              lNew = state[1];
            } else {
              std::tie(pLow, lNew) = blockWeights(scores, state[0], state[1]);
            }
            PhaseBarrierOp::create(b, loc, IntegerAttr(), b.getUnitAttr());
          }
          Value ahead = arith::AddIOp::create(b, loc, n0, constIndex(blockN));
          Value next = pingPong
                           ? minIndexIn32Bits(b, loc, ahead, lastBlock)
                           : arith::MinUIOp::create(b, loc, ahead, lastBlock)
                                 .getResult();
          SmallVector<Value> kChunks =
              loadKeys(sourceOf(next), /*masked=*/false);
          SmallVector<Value> vTChunks =
              loadValues(sourceOf(n0), /*masked=*/false);
          Value nextScores = scoresOf(kChunks);
          // A ping-pong loop masks the next block's scores in its matrix
          // phase: under the second product's matrix instructions, or,
          // where branchesMasks, after them and only in a wave whose queries
          // do not all see the whole block (maskScoresWhereNeeded).
          bool maskAhead = masked && pingPong;
          if (maskAhead && !branchesMasks)
            nextScores = maskScores(next, scaledScores(nextScores));
          SmallVector<Value> results;
          if (pingPong) {
            results = {state[0], lNew};
            llvm::append_range(
                results, secondProduct(pLow, vTChunks,
                                       ArrayRef<Value>(state).drop_front(2)));
            if (maskAhead && branchesMasks)
              nextScores =
                  maskScoresWhereNeeded(next, scaledScores(nextScores));
            PhaseBarrierOp::create(b, loc, IntegerAttr(), UnitAttr());
          } else {
            results = lazyRescale
                          ? accumulateStep(scores, vTChunks, state[0], state[1],
                                           SmallVector<Value>(
                                               ArrayRef(state).drop_front(2)))
                          : finishStep(n0, scores, vTChunks, state, masked);
          }
          if (lazyRescale && !maskAhead) {
            nextScores = scaledScores(nextScores);
            if (masked)
              nextScores = maskScores(next, nextScores);
          }
          results.push_back(nextScores);
          if (carriesMax)
            results.push_back(rowMax(nextScores));
          scf::YieldOp::create(b, loc, results);
        });
    if (pingPong) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfter(loop);
      PhaseBarrierOp::create(b, loc, b.getI64IntegerAttr(0), UnitAttr());
    }
    return loop;
  };
  // Blocks in [visibleBegin, visibleEnd) are whole and fully visible to
  // every query of this block: they need no mask. The blocks before (a
  // window's left edge) and after (the right edge or the causal diagonal,
  // and the sequence's tail block) are masked.
  Value visibleEnd = alignDown(seqKV);
  if (window.hasRight())
    visibleEnd = arith::MinSIOp::create(
        b, loc, visibleEnd,
        alignDown(clampKeys(arith::AddIOp::create(
            b, loc, firstPosition, constIndex(window.right + 1)))));
  auto clampTo = [&](Value key, Value low, Value high) {
    return arith::MaxSIOp::create(b, loc, low,
                                  arith::MinSIOp::create(b, loc, key, high))
        .getResult();
  };
  SmallVector<Value> inits = {mInit, lInit};
  inits.append(chunksV, accInit);
  Value unmaskedBegin = kvBegin;
  if (window.hasLeft()) {
    // The first block whose first key the block's last query sees.
    Value lastFirst = clampKeys(firstSeen(lastPosition));
    Value visibleBegin = alignDown(
        arith::AddIOp::create(b, loc, lastFirst, constIndex(blockN - 1)));
    unmaskedBegin = clampTo(visibleBegin, kvBegin, kvEnd);
    inits = keyLoop(kvBegin, unmaskedBegin, inits, true).getResults();
  }
  // Without a window, a static sequence of whole key blocks has no masked
  // block: no masked loop (one the folder may not prove empty where the
  // key range is a stream-K piece's).
  bool wholeBlocksOnly = window.isFull() && wholeKeyBlocks;
  Value maskStart =
      wholeBlocksOnly ? kvEnd : clampTo(visibleEnd, unmaskedBegin, kvEnd);
  ValueRange loopResults;
  bool maskedDone = false;
  if (config.getScoresAhead()) {
    // The masked blocks of a sequence of whole key blocks in the same form,
    // in a second loop that continues the first one's scores ahead.
    maskedDone = !wholeBlocksOnly && wholeKeyBlocks;
    scf::ForOp ahead = scoresAheadLoop(unmaskedBegin, maskStart,
                                       maskedDone ? kvEnd : maskStart, inits,
                                       /*masked=*/false, Value());
    loopResults = ahead.getResults().take_front(inits.size());
    if (maskedDone) {
      ahead = scoresAheadLoop(maskStart, kvEnd, kvEnd, loopResults,
                              /*masked=*/true, ahead.getResult(inits.size()));
      ahead->setAttr(kContinuesKeyLoopAttrName, b.getUnitAttr());
      loopResults = ahead.getResults().take_front(inits.size());
    }
  } else if (lazyRescale &&
             rescalesUnmaskedKeyLoopLazily(std::max(headDim, headDimV),
                                           headDimV, wholeBlocksOnly)) {
    scf::ForOp loop = lazyKeyLoop(unmaskedBegin, maskStart, inits);
    loopResults = loop.getResults();
  } else {
    loopResults = keyLoop(unmaskedBegin, maskStart, inits, false).getResults();
  }
  if (!wholeBlocksOnly && !maskedDone)
    loopResults = keyLoop(maskStart, kvEnd, loopResults, true).getResults();
  Value m = loopResults[0], l = laneSumsTotal(loopResults[1]);
  ValueRange accs = loopResults.drop_front(2);

  // O = acc / l (times V's descale), 0 for a query that saw no key (l ==
  // 0): one reciprocal per query. A NaN or infinity in Q or K makes l NaN,
  // and the query's O stays NaN, as FlashAttention's.
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l,
                                     splat(*statType, 0.0));
  Value inverse =
      arith::SelectOp::create(b, loc, none, splat(*statType, 0.0),
                              arith::DivFOp::create(b, loc, valueScale, l));
  Value inverseTile = BroadcastOp::create(b, loc, oType, inverse);
  // Each chunk of O^T, normalized, to `view` at head dim c x chunkV and
  // query `row`.
  auto storeOutput = [&](Value view, ArrayRef<Value> before, Type element,
                         Value row) {
    SmallVector<Value> outs;
    for (Value acc : accs) {
      Value out = arith::MulFOp::create(b, loc, acc, inverseTile);
      if (element != f32)
        out = arith::TruncFOp::create(
            b, loc, tile({chunkV, blockM}, element, mma), out);
      outs.push_back(out);
    }
    Value viewT = transposedView(view);
    for (auto [c, out] : llvm::enumerate(outs)) {
      SmallVector<Value> indices(before);
      indices.append({constIndex(c * chunkV), row});
      StoreOp::create(b, loc, out, viewT, indices);
    }
  };
  auto storeLogSumExp = [&] {
    if (!logsumexp)
      return;
    // logsumexp in the natural log: (m + log2 l) ln 2, to a [B, H, 1, Sq]
    // view.
    Value lseTile = naturalLogSumExp(m, l, *statType);
    StoreOp::create(b, loc, lseTile, queryView(logsumexp),
                    ValueRange{batch, head, zero, m0});
  };
  if (mode == Mode::StreamK) {
    Value lse2 = arith::AddFOp::create(b, loc, m, log2OfSum(l));
    Value last =
        storeStreamKPiece(*piece, m0, lse2, storeOutput, storeLogSumExp);
    // Whether this piece of the workgroup's first or last query block
    // arrived last.
    Value u = piece->loop.getInductionVar();
    Value atFirst =
        arith::AndIOp::create(b, loc, last, equal(u, piece->range.first));
    Value atLast =
        arith::AndIOp::create(b, loc, last, equal(u, piece->range.last));
    Value noBit = scalar(0);
    Value firstBit = select(atFirst, scalar(1), noBit);
    Value lastBit = select(atLast, scalar(2), noBit);
    Value merges =
        arith::OrIOp::create(b, loc, piece->loop.getRegionIterArg(0), firstBit);
    merges = arith::OrIOp::create(b, loc, merges, lastBit);
    scf::YieldOp::create(b, loc, merges);
    b.setInsertionPointAfter(piece->loop);
    if (failed(mergeStreamKPieces(*piece, numWaves)))
      return failure();
  } else if (mode == Mode::Split) {
    // This split's normalized O and log2-sum-exp (in the exp2 domain).
    storeOutput(workspaceO, {batch, head, split}, f32, m0);
    Value lse2 = arith::AddFOp::create(b, loc, m, log2OfSum(l));
    StoreOp::create(b, loc, lse2, queryView(workspaceLse),
                    ValueRange{batch, head, split, zero, m0});
    if (failed(mergeSplits(batch, head, pidM, m0, split, numWaves)))
      return failure();
  } else {
    storeOutput(output, {batch, head}, op.getO().getType().getElementType(),
                m0);
    storeLogSumExp();
  }
  recordPackedHeads();
  finishKernel(op, target.waveSize * numWaves, {blockM, blockN}, config);
  return success();
}

/// Names the workspace `arrivals` (counted from the first workspace) as one
/// the runtime zero-fills before the kernel's first launch: the arrival
/// counters, which every launch leaves at zero again. The other workspaces
/// are written before they are read and may hold anything.
static void markZeroedWorkspaces(func::FuncOp function, int64_t arrivals) {
  function->setAttr("tessel.zeroed_workspaces",
                    DenseI64ArrayAttr::get(function.getContext(), {arrivals}));
}

namespace {
struct TilePass : public tessel::impl::TesselTilePassBase<TilePass> {
  using Base::Base;

  void runOnOperation() override {
    if (!chip.empty()) {
      const Chip *target = lookupChip(chip);
      if (!target) {
        getOperation().emitError() << "unknown chip '" << chip
                                   << "'; known chips: " << knownChipNames();
        return signalPassFailure();
      }
      tileTarget.xcds = target->numXCDs;
      tileTarget.waveSize = target->defaultWaveSize;
      tileTarget.chip = target->name.str();
    }
    SmallVector<func::FuncOp> functions(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp function : functions)
      if (failed(tileFunction(function)))
        return signalPassFailure();
  }

  LogicalResult tileFunction(func::FuncOp function);
  TileTarget tileTarget;
  /// Split-KV attention: one kernel with three workspaces appended to the
  /// arguments, each split's partial O and log2-sum-exp and the arrivals
  /// per query block (zero before the first launch); the last split of a
  /// block to arrive merges the partials.
  LogicalResult splitAttention(func::FuncOp function, AttentionOp attention);
  /// Stream-K attention: one kernel of `stream_k` workgroups with three
  /// workspaces appended to the arguments, the partial O and log2-sum-exp
  /// of the pieces of cut query blocks (workgroups, 2, rows[, head dim]: a
  /// workgroup cuts at most its first and its last query block) and the
  /// arrivals per query block [B, H, blocks] (zero before the first launch).
  LogicalResult streamKAttention(func::FuncOp function, AttentionOp attention);
  /// Appends the partial O, partial log2-sum-exp and arrivals `workspaces`
  /// to `function`'s arguments, names the workgroup count `countName` =
  /// `count` on it, and tiles `attention` in `mode` on them.
  LogicalResult tileAttentionWithWorkspaces(func::FuncOp function,
                                            AttentionOp attention,
                                            ArrayRef<Type> workspaces,
                                            StringRef countName, int64_t count,
                                            AttentionTiler::Mode mode);
  /// Split-K matmul: one kernel with two workspaces appended to the
  /// arguments, each split's partial accumulators ([batch,] splits, M, N)
  /// and the arrivals per C tile ([batch,] rows, cols; zero before the first
  /// launch, left zero by every launch).
  LogicalResult splitMatmul(func::FuncOp function, MatmulOp matmul);
  /// Stream-K matmul: one kernel of `stream_k` workgroups with two
  /// workspaces appended to the arguments, the partial accumulators of the
  /// pieces of cut tiles (workgroups, 2, tileM, tileN: a workgroup cuts at
  /// most its first and its last tile) and the arrivals per C tile.
  LogicalResult streamKMatmul(func::FuncOp function, MatmulOp matmul);
  /// Appends the partials and arrivals `workspaces` to `function`'s
  /// arguments, names the workgroup count `countName` = `count` on it, and
  /// tiles `matmul` in `mode` on them.
  LogicalResult tileWithWorkspaces(func::FuncOp function, MatmulOp matmul,
                                   ArrayRef<Type> workspaces,
                                   StringRef countName, int64_t count,
                                   MatmulTiler::Mode mode);
};

LogicalResult TilePass::tileFunction(func::FuncOp function) {
  SmallVector<Operation *> problems;
  function.walk([&](Operation *op) {
    if (isa<MatmulOp, AttentionOp, AttentionGradOp>(op))
      problems.push_back(op);
  });
  if (problems.size() > 1)
    return problems[1]->emitOpError()
           << "a kernel function holds one problem op; this is the second";
  if (problems.empty())
    return success();
  Operation *problem = problems.front();
  auto config = problem->getAttrOfType<ConfigAttr>("config");
  if (!config)
    return problem->emitOpError() << "has no #tessel.config: run "
                                     "tessel-select-config first";
  if (auto matmul = dyn_cast<MatmulOp>(problem)) {
    if (config.getSplits() > 1)
      return splitMatmul(function, matmul);
    if (config.getStreamK() > 0)
      return streamKMatmul(function, matmul);
    return MatmulTiler(matmul, tileTarget).run();
  }
  if (auto grad = dyn_cast<AttentionGradOp>(problem))
    return tileAttentionGrad(function, grad, tileTarget);
  auto attention = cast<AttentionOp>(problem);
  if (config.getSplits() > 1)
    return splitAttention(function, attention);
  if (config.getStreamK() > 0)
    return streamKAttention(function, attention);
  return AttentionTiler(attention, tileTarget).run();
}

LogicalResult TilePass::splitAttention(func::FuncOp function,
                                       AttentionOp attention) {
  MemRefType q = attention.getQ().getType();
  ConfigAttr config = attention.getConfigAttr();
  int64_t splits = config.getSplits();
  Type f32 = Float32Type::get(&getContext());
  // Partial O [B, Hq, splits, Sq, Dv], log2-sum-exp [B, Hq, splits, Sq] and
  // the arrivals per query block [B, Hq, blocks] (i32); with packed query
  // heads Hkv and group x Sq rows.
  int64_t group = getPackedQueryHeads(attention, config);
  int64_t heads = q.getDimSize(1), rows = q.getDimSize(2);
  if (group > 1) {
    heads /= group;
    rows *= group;
  }
  int64_t blocks = ShapedType::isDynamic(rows)
                       ? ShapedType::kDynamic
                       : llvm::divideCeil(rows, config.getTile()[0]);
  // Two-level merges count arrivals per group and of the groups.
  int64_t mergeGroup = getMergeGroup(splits);
  SmallVector<int64_t> counters = {q.getDimSize(0), heads, blocks};
  if (mergeGroup > 1)
    counters.push_back(splits / mergeGroup + 1);
  SmallVector<Type> workspaces = {
      MemRefType::get({q.getDimSize(0), heads, splits, rows,
                       attention.getV().getType().getDimSize(3)},
                      f32),
      MemRefType::get({q.getDimSize(0), heads, splits, rows}, f32),
      MemRefType::get(counters, IntegerType::get(&getContext(), 32))};
  // What the runtime sizes dynamic workspace dimensions from (a dynamic
  // batch; the rows with a dynamic query length and no packed heads).
  Builder names(&getContext());
  std::string headsName = group > 1 ? "" : "heads";
  std::string rowsName = group > 1 ? "" : "seq_q";
  SmallVector<StringRef> counterNames = {"batch", headsName, ""};
  if (counters.size() > 3)
    counterNames.push_back("");
  function->setAttr(
      "tessel.workspace_dims",
      names.getArrayAttr(
          {names.getStrArrayAttr(
               {"batch", headsName, "", rowsName, "head_dim_v"}),
           names.getStrArrayAttr({"batch", headsName, "", rowsName}),
           names.getStrArrayAttr(counterNames)}));
  return tileAttentionWithWorkspaces(function, attention, workspaces,
                                     "tessel.splits", splits,
                                     AttentionTiler::Mode::Split);
}

LogicalResult TilePass::streamKAttention(func::FuncOp function,
                                         AttentionOp attention) {
  ConfigAttr config = attention.getConfigAttr();
  FailureOr<AttentionStreamKWork> work = getAttentionStreamKWork(
      attention, config, [&] { return attention.emitOpError(); });
  if (failed(work))
    return failure();
  int64_t workgroups = config.getStreamK(), blockM = config.getTile()[0];
  Type f32 = Float32Type::get(&getContext());
  SmallVector<Type> workspaces = {
      MemRefType::get(
          {workgroups, 2, blockM, attention.getV().getType().getDimSize(3)},
          f32),
      MemRefType::get({workgroups, 2, blockM}, f32),
      MemRefType::get({work->batch, work->heads, work->queryBlocks},
                      IntegerType::get(&getContext(), 32))};
  // The occupancy the workgroup count assumes (one per slot): G over the
  // chip's CUs, in waves per SIMD. Asked of the backend only up to two
  // waves per SIMD, the occupancy attention's four-wave workgroups are built
  // for: more would cap their registers below what they need (G = 8 per CU
  // compiled to 64 VGPRs and 492 spills); such a grid runs in rounds.
  if (const Chip *chip = lookupChip(tileTarget.chip)) {
    int64_t perCU = llvm::divideCeil(workgroups, int64_t(chip->numCUs));
    int64_t waves = llvm::divideCeil(perCU * int64_t(config.getNumWaves()),
                                     int64_t(chip->simdsPerCU));
    if (waves == 2)
      function->setAttr(
          kWavesPerSimdAttrName,
          IntegerAttr::get(IntegerType::get(&getContext(), 64), waves));
  }
  return tileAttentionWithWorkspaces(function, attention, workspaces,
                                     "tessel.stream_k", workgroups,
                                     AttentionTiler::Mode::StreamK);
}

LogicalResult TilePass::tileAttentionWithWorkspaces(
    func::FuncOp function, AttentionOp attention, ArrayRef<Type> workspaces,
    StringRef countName, int64_t count, AttentionTiler::Mode mode) {
  unsigned first = function.getNumArguments();
  Location loc = function.getLoc();
  if (failed(function.insertArguments(
          {first, first, first}, workspaces,
          {DictionaryAttr(), DictionaryAttr(), DictionaryAttr()},
          {loc, loc, loc})))
    return failure();
  function->setAttr(
      countName, IntegerAttr::get(IntegerType::get(&getContext(), 64), count));
  markZeroedWorkspaces(function, /*arrivals=*/2);
  return AttentionTiler(
             attention, tileTarget, mode, function.getArgument(first),
             function.getArgument(first + 1), function.getArgument(first + 2))
      .run();
}

LogicalResult TilePass::splitMatmul(func::FuncOp function, MatmulOp matmul) {
  MemRefType c = matmul.getC().getType();
  ArrayRef<int64_t> tile = matmul.getConfigAttr().getTile();
  int64_t splits = matmul.getConfigAttr().getSplits();
  int64_t rank = c.getRank();
  // Partials [batch,] splits, M, N; arrivals per C tile [batch,] rows, cols.
  SmallVector<int64_t> partials(c.getShape());
  partials.insert(partials.end() - 2, splits);
  SmallVector<int64_t> arrivals(c.getShape());
  arrivals[rank - 2] = llvm::divideCeil(arrivals[rank - 2], tile[0]);
  arrivals[rank - 1] = llvm::divideCeil(arrivals[rank - 1], tile[1]);
  Type i32 = IntegerType::get(&getContext(), 32);
  // Partials are stored along the accumulator's lane runs: row-major for a
  // transposed accumulator (a row-major C), M contiguous for the hardware
  // layout (split-K's sizes are static: the verifier requires them).
  MemRefLayoutAttrInterface partialLayout;
  if (!storesTransposedAccumulator(c, matmul.getConfigAttr().getInstr()) &&
      c.hasStaticShape()) {
    int64_t m = c.getDimSize(rank - 2), n = c.getDimSize(rank - 1);
    SmallVector<int64_t> strides = {m * n, 1, m};
    if (rank == 3)
      strides.insert(strides.begin(), splits * m * n);
    partialLayout =
        StridedLayoutAttr::get(&getContext(), /*offset=*/0, strides);
  }
  SmallVector<Type> workspaces = {
      MemRefType::get(partials, matmul.getAccumulatorType(), partialLayout),
      MemRefType::get(arrivals, i32)};
  return tileWithWorkspaces(function, matmul, workspaces, "tessel.splits",
                            splits, MatmulTiler::Mode::Split);
}

LogicalResult TilePass::streamKMatmul(func::FuncOp function, MatmulOp matmul) {
  MemRefType c = matmul.getC().getType();
  ConfigAttr config = matmul.getConfigAttr();
  ArrayRef<int64_t> tile = config.getTile();
  int64_t workgroups = config.getStreamK();
  Type i32 = IntegerType::get(&getContext(), 32);
  // Partial tiles are stored along the accumulator's lane runs: along N
  // (rows contiguous) for a transposed accumulator, along M otherwise.
  bool rowsContiguous =
      storesTransposedAccumulator(c, config.getInstr().getValue());
  SmallVector<int64_t, 4> shape = {workgroups, 2, tile[0], tile[1]};
  MemRefLayoutAttrInterface columnMajor = StridedLayoutAttr::get(
      &getContext(), /*offset=*/0,
      {2 * tile[0] * tile[1], tile[0] * tile[1], 1, tile[0]});
  SmallVector<Type> workspaces = {
      MemRefType::get(shape, matmul.getAccumulatorType(),
                      rowsContiguous ? MemRefLayoutAttrInterface()
                                     : columnMajor),
      MemRefType::get({int64_t(llvm::divideCeil(c.getDimSize(0), tile[0])),
                       int64_t(llvm::divideCeil(c.getDimSize(1), tile[1]))},
                      i32)};
  return tileWithWorkspaces(function, matmul, workspaces, "tessel.stream_k",
                            workgroups, MatmulTiler::Mode::StreamK);
}

LogicalResult TilePass::tileWithWorkspaces(func::FuncOp function,
                                           MatmulOp matmul,
                                           ArrayRef<Type> workspaces,
                                           StringRef countName, int64_t count,
                                           MatmulTiler::Mode mode) {
  unsigned first = function.getNumArguments();
  Location loc = function.getLoc();
  if (failed(function.insertArguments({first, first}, workspaces,
                                      {DictionaryAttr(), DictionaryAttr()},
                                      {loc, loc})))
    return failure();
  function->setAttr(
      countName, IntegerAttr::get(IntegerType::get(&getContext(), 64), count));
  markZeroedWorkspaces(function, /*arrivals=*/1);
  return MatmulTiler(matmul, tileTarget, mode, function.getArgument(first),
                     function.getArgument(first + 1))
      .run();
}
} // namespace
