//===- Tile.cpp - Problem ops (L0) to tile programs (L1) --------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace tessel {
#define GEN_PASS_DEF_TESSELTILEPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

namespace {

/// Builds the tile program of one matmul in place of it.
class MatmulTiler {
public:
  MatmulTiler(MatmulOp matmul)
      : matmul(matmul), b(matmul), loc(matmul.getLoc()),
        config(matmul.getConfigAttr()) {}

  LogicalResult run();

private:
  Value constIndex(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value dim(Value memref, int64_t index) {
    return memref::DimOp::create(b, loc, memref, index);
  }
  /// Indices of the tile at (row, col) of the last two dimensions.
  SmallVector<Value> indices(Value row, Value col) {
    SmallVector<Value> result;
    if (batch)
      result.push_back(batch);
    result.append({row, col});
    return result;
  }
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
  OpBuilder b;
  Location loc;
  ConfigAttr config;
  Value batch;
  MmaAttr accumulatorLayout;
};

} // namespace

Value MatmulTiler::broadcastView(Value extra) {
  auto extraType = cast<MemRefType>(extra.getType());
  MemRefType cType = matmul.getC().getType();
  int64_t rank = cType.getRank(), extraRank = extraType.getRank();
  auto metadata =
      memref::ExtractStridedMetadataOp::create(b, loc, extra);
  SmallVector<OpFoldResult> sizes, strides;
  for (int64_t d = 0; d < rank; ++d) {
    sizes.push_back(dim(matmul.getC(), d));
    int64_t extraDim = d - (rank - extraRank);
    bool broadcast =
        extraDim < 0 || extraType.getDimSize(extraDim) == 1;
    strides.push_back(broadcast ? OpFoldResult(b.getIndexAttr(0))
                                : OpFoldResult(metadata.getStrides()[extraDim]));
  }
  SmallVector<int64_t> dynamicStrides(rank, ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                                       dynamicStrides);
  auto viewType = MemRefType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic),
                                  extraType.getElementType(), layout);
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
      return cElement.getIntOrFloatBitWidth() < accElement.getIntOrFloatBitWidth()
                 ? arith::TruncFOp::create(b, loc, type, accumulator).getResult()
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
      mapping.map(argument,
                  LoadOp::create(b, loc,
                                 tileType(shape, argument.getType(),
                                          accumulatorLayout),
                                 view, indices(m0, n0)));
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
      mapping.map(constant.getResult(),
                  arith::ConstantOp::create(
                      b, loc, type,
                      SplatElementsAttr::get(type, constant.getValue())));
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

LogicalResult MatmulTiler::run() {
  MLIRContext *context = b.getContext();
  ArrayRef<int64_t> tile = config.getTile();
  ArrayRef<int64_t> waves = config.getWaves();
  int64_t tileM = tile[0], tileN = tile[1], tileK = tile[2];
  unsigned numWaves = config.getNumWaves();
  accumulatorLayout = MmaAttr::get(context, config.getInstr().getValue(),
                                   waves, /*chip=*/"", /*waveSize=*/0);

  Value a = matmul.getA(), bMatrix = matmul.getB(), c = matmul.getC();
  MemRefType aType = matmul.getA().getType(), bType = matmul.getB().getType();
  int64_t rank = aType.getRank();
  Type aElement = aType.getElementType(), bElement = bType.getElementType();
  Type accElement = matmul.getAccumulatorType();

  // Tile coordinates: N tiles along x (neighbouring workgroups share the
  // rows of A), M tiles along y, the batch along z.
  Value pidN = ProgramIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(0));
  Value pidM = ProgramIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(1));
  if (rank == 3)
    batch = ProgramIdOp::create(b, loc, b.getIndexType(), b.getI64IntegerAttr(2));
  Value m0 = arith::MulIOp::create(b, loc, pidM, constIndex(tileM));
  Value n0 = arith::MulIOp::create(b, loc, pidN, constIndex(tileN));
  Value k = dim(a, rank - 1);

  auto aLayout = getCoalescedLayout(
      context, {tileM, tileK}, getContiguousTileDim(aType),
      llvm::divideCeil(aElement.getIntOrFloatBitWidth(), 8), numWaves);
  auto bLayout = getCoalescedLayout(
      context, {tileK, tileN}, getContiguousTileDim(bType),
      llvm::divideCeil(bElement.getIntOrFloatBitWidth(), 8), numWaves);
  auto accType = tileType({tileM, tileN}, accElement, accumulatorLayout);
  TypedAttr zero = isa<IntegerType>(accElement)
                       ? TypedAttr(b.getIntegerAttr(accElement, 0))
                       : TypedAttr(b.getFloatAttr(accElement, 0.0));
  Value init = arith::ConstantOp::create(b, loc, accType,
                                         SplatElementsAttr::get(accType, zero));
  bool xf32 = lookupMmaByName(config.getInstr().getValue()).front()->a ==
              MmaElement::Xf32;
  auto loop = scf::ForOp::create(
      b, loc, constIndex(0), k, constIndex(tileK), ValueRange{init},
      [&](OpBuilder &nested, Location nestedLoc, Value k0, ValueRange iters) {
        Value aTile = LoadOp::create(
            nested, nestedLoc, tileType({tileM, tileK}, aElement, aLayout), a,
            indices(m0, k0));
        Value bTile = LoadOp::create(
            nested, nestedLoc, tileType({tileK, tileN}, bElement, bLayout),
            bMatrix, indices(k0, n0));
        auto dot =
            DotOp::create(nested, nestedLoc, accType, aTile, bTile, iters[0],
                          xf32 ? nested.getUnitAttr() : UnitAttr());
        scf::YieldOp::create(nested, nestedLoc, dot.getResult());
      });
  FailureOr<Value> result = applyEpilogue(loop.getResult(0), m0, n0);
  if (failed(result))
    return failure();
  StoreOp::create(b, loc, *result, c, indices(m0, n0));

  auto function = matmul->getParentOfType<func::FuncOp>();
  function->setAttr("tessel.workgroup_size",
                    b.getI64IntegerAttr(64 * numWaves));
  function->setAttr("tessel.tile",
                    DenseI64ArrayAttr::get(context, {tileM, tileN}));
  function->setAttr("tessel.config", config);
  matmul.erase();
  return success();
}

namespace {
struct TilePass : public tessel::impl::TesselTilePassBase<TilePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MatmulOp> matmuls;
    getOperation().walk([&](MatmulOp op) { matmuls.push_back(op); });
    if (matmuls.size() > 1) {
      matmuls[1].emitOpError()
          << "a kernel function holds one problem op; this is the second";
      return signalPassFailure();
    }
    for (MatmulOp matmul : matmuls) {
      if (!matmul.getConfigAttr()) {
        matmul.emitOpError() << "has no #tessel.config: run "
                                "tessel-select-config first";
        return signalPassFailure();
      }
      if (failed(MatmulTiler(matmul).run()))
        return signalPassFailure();
    }
    getOperation().walk([&](AttentionOp attention) {
      attention.emitOpError() << "cannot be tiled yet: the attention "
                                 "lowering is not part of this build";
      signalPassFailure();
    });
  }
};
} // namespace
