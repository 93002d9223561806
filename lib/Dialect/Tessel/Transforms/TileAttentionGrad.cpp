//===- TileAttentionGrad.cpp - Attention backward to tile programs -*- C++ -*-//
//
// tessel.attention_grad becomes a plan of two kernels (FlashAttention-2's
// backward with a separate dQ pass, so that no gradient is accumulated
// with atomics and every result is deterministic):
//
//   <name>__dq    one workgroup per query block: D = rowsum(dO * O) to a
//                 workspace, then over the key blocks the query block sees
//                 P^T, dP^T = V dO^T, dS^T = P^T * (dP^T - D) and
//                 dQ^T += K^T dS^T.
//   <name>__dkdv  one workgroup per key block (after the first kernel):
//                 over the query heads of its group and the query blocks
//                 that see it, P, dP = dO V^T, dS = P * (dP - D),
//                 dV^T += dO^T P and dK^T += Q^T dS.
//
// Each kernel puts the dimension its workgroup owns along the columns of
// its products (queries in the first, keys in the second) and the
// accumulators in a transposed form, so that P and dS, computed in
// accumulator registers, are the B operand of the next product as they
// stand (tessel-select-mfma makes that conversion the identity).
//
//===----------------------------------------------------------------------===//

#include "TileSupport.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"

#include <limits>

using namespace mlir;
using namespace tessel;

namespace {

/// Builds one kernel of the backward plan in place of the op.
class AttentionGradTiler : TileProgramBuilder {
public:
  /// Queries: the dQ kernel (and D). Keys: the dK/dV kernel.
  enum class Mode { Queries, Keys };

  AttentionGradTiler(AttentionGradOp op, const TileTarget &target, Mode mode,
                     Value delta)
      : TileProgramBuilder(op), op(op), config(op.getConfigAttr()),
        target(target), mode(mode), delta(delta) {}

  LogicalResult run();

private:
  Value splat(RankedTensorType type, double value) {
    return arith::ConstantOp::create(
        b, loc, type,
        SplatElementsAttr::get(type,
                               b.getFloatAttr(type.getElementType(), value)));
  }
  Value splatValue(RankedTensorType type, Value scalar) {
    return tensor::SplatOp::create(b, loc, type, scalar);
  }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  /// `value` clamped to [0, limit].
  Value clamp(Value value, Value limit) {
    return min(limit, max(value, constIndex(0)));
  }
  /// `value` rounded down (up) to a multiple of `step`; value >= 0.
  Value alignDown(Value value, int64_t step) {
    return arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, value, constIndex(step)),
        constIndex(step));
  }
  Value alignUp(Value value, int64_t step) {
    return alignDown(add(value, constIndex(step - 1)), step);
  }
  RankedTensorType tile(ArrayRef<int64_t> shape, Type element,
                        Attribute layout) {
    return RankedTensorType::get(shape, element, layout);
  }
  /// A tile of `shape` loaded from `memref` at `indices` in a coalesced
  /// layout along `contiguousDim` (the memref's contiguous dimension).
  Value loadCoalesced(ArrayRef<int64_t> shape, int64_t contiguousDim,
                      Value memref, ValueRange indices);
  /// `source` rounded to the inputs' element type (an operand of a product).
  Value toElement(Value source) {
    auto type = cast<RankedTensorType>(source.getType());
    return arith::TruncFOp::create(
        b, loc, tile(type.getShape(), element, type.getEncoding()), source);
  }
  /// Sets the scores outside the window of their query (and past the
  /// sequences' ends) to -inf. `keyDim` is the tile dimension running over
  /// the keys (from `keyStart`), the other over the queries (from
  /// `queryStart`).
  Value maskScores(Value scores, unsigned keyDim, Value keyStart,
                   Value queryStart);
  /// The step range [begin, end) of the loop over the other dimension's
  /// blocks, split into the blocks that need masks and those that do not:
  /// [begin, unmaskedBegin) and [unmaskedEnd, end) are masked.
  struct LoopRanges {
    Value begin, unmaskedBegin, unmaskedEnd, end;
  };
  LoopRanges getKeyRanges(Value m0);
  /// Varlen: `end`, or `begin` (no iteration) for a block whose first row
  /// `first` is past its sequence's `length` rows (the launch covers the
  /// longest sequence).
  Value skipPastSequence(Value first, Value length, Value begin, Value end) {
    if (!op.isVarlen())
      return end;
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, first, length);
    return arith::SelectOp::create(b, loc, inside, end, begin);
  }
  LoopRanges getQueryRanges(Value n0);
  /// Runs `step(start, iters, masked)` over the three ranges.
  SmallVector<Value>
  buildLoops(const LoopRanges &ranges, int64_t step, ValueRange inits,
             function_ref<SmallVector<Value>(Value, ValueRange, bool)> body);
  /// -lse log2 e, for probabilities().
  Value negatedLog2(Value lse) {
    return arith::MulFOp::create(
        b, loc, lse, splat(cast<RankedTensorType>(lse.getType()), -kLog2e));
  }
  /// exp2(scores * scale log2 e - lse log2 e): P from the forward's
  /// logsumexp, `minusLse` (negatedLog2) broadcast to the scores' tile.
  Value probabilities(Value scores, Value minusLse);

  LogicalResult buildQueryKernel();
  LogicalResult buildKeyKernel();

  static constexpr double kLog2e = 1.4426950408889634;

  AttentionGradOp op;
  ConfigAttr config;
  TileTarget target;
  Mode mode;
  Value delta; // D = rowsum(dO * O): [batch, heads, seq_q] f32 workspace
  // Set by run().
  MmaAttr mma;
  Type element;
  int64_t blockM = 0, blockN = 0, headDim = 0, headDimV = 0;
  unsigned numWaves = 1, elementBytes = 2;
  Value batch, seqQ, seqKV, shift;
  /// The block of rows the workgroup owns (queries, or keys) and its head
  /// (the query head, or the key/value head).
  Value ownBlock, ownHead;
  KeyWindow window;
  // The arrays the kernel reads and writes: the op's, or with varlen views
  // of the sequence's rows.
  Value queries, keys, values, output, gradOutput, logsumexp, gradQueries,
      gradKeys, gradValues;
};

} // namespace

Value AttentionGradTiler::loadCoalesced(ArrayRef<int64_t> shape,
                                        int64_t contiguousDim, Value memref,
                                        ValueRange indices) {
  auto layout = getCoalescedLayout(b.getContext(), shape, contiguousDim,
                                   elementBytes, numWaves, target.waveSize);
  return LoadOp::create(b, loc, tile(shape, element, layout), memref, indices);
}

Value AttentionGradTiler::maskScores(Value scores, unsigned keyDim,
                                     Value keyStart, Value queryStart) {
  auto type = cast<RankedTensorType>(scores.getType());
  auto iotaType = tile(type.getShape(), b.getI32Type(), type.getEncoding());
  auto asI32 = [&](Value index) {
    return splatValue(
        iotaType, arith::IndexCastOp::create(b, loc, b.getI32Type(), index));
  };
  // Key and query offsets in the tile; the bounds move to the scalars.
  Value key = IotaOp::create(b, loc, iotaType, b.getI64IntegerAttr(keyDim));
  Value query =
      IotaOp::create(b, loc, iotaType, b.getI64IntegerAttr(1 - keyDim));
  auto compare = [&](arith::CmpIPredicate predicate, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, predicate, x, y).getResult();
  };
  auto both = [&](Value x, Value y) {
    return arith::AndIOp::create(b, loc, x, y).getResult();
  };
  using P = arith::CmpIPredicate;
  Value valid = both(compare(P::slt, key, asI32(sub(seqKV, keyStart))),
                     compare(P::slt, query, asI32(sub(seqQ, queryStart))));
  // Query i sits at key position i + shift and sees keys j with
  // i + shift - left <= j <= i + shift + right: in tile offsets,
  // key - query <= queryStart + shift + right - keyStart (and >= with left).
  if (window.hasLeft() || window.hasRight()) {
    Value difference = arith::SubIOp::create(b, loc, key, query);
    Value base = sub(add(queryStart, shift), keyStart);
    if (window.hasRight())
      valid = both(valid, compare(P::sle, difference,
                                  asI32(add(base, constIndex(window.right)))));
    if (window.hasLeft())
      valid = both(valid, compare(P::sge, difference,
                                  asI32(sub(base, constIndex(window.left)))));
  }
  return arith::SelectOp::create(
      b, loc, valid, scores,
      splat(type, -std::numeric_limits<double>::infinity()));
}

AttentionGradTiler::LoopRanges AttentionGradTiler::getKeyRanges(Value m0) {
  // The keys the block's queries [m0, m0 + blockM) see: positions m0 +
  // shift through m0 + blockM - 1 + shift. A block is unmasked when it is
  // whole and every query sees all of it.
  Value firstPosition = add(m0, shift);
  Value lastPosition = add(firstPosition, constIndex(blockM - 1));
  LoopRanges ranges;
  ranges.begin =
      window.hasLeft()
          ? alignDown(clamp(sub(firstPosition, constIndex(window.left)), seqKV),
                      blockN)
          : constIndex(0);
  ranges.end =
      window.hasRight()
          ? clamp(add(lastPosition, constIndex(window.right + 1)), seqKV)
          : seqKV;
  ranges.end = skipPastSequence(m0, seqQ, ranges.begin, ranges.end);
  Value unmaskedBegin =
      window.hasLeft()
          ? alignUp(clamp(sub(lastPosition, constIndex(window.left)), seqKV),
                    blockN)
          : ranges.begin;
  Value unmaskedEnd = alignDown(seqKV, blockN);
  if (window.hasRight())
    unmaskedEnd =
        min(unmaskedEnd,
            alignDown(
                clamp(add(firstPosition, constIndex(window.right + 1)), seqKV),
                blockN));
  ranges.unmaskedBegin = min(max(unmaskedBegin, ranges.begin), ranges.end);
  ranges.unmaskedEnd = min(max(unmaskedEnd, ranges.unmaskedBegin), ranges.end);
  return ranges;
}

AttentionGradTiler::LoopRanges AttentionGradTiler::getQueryRanges(Value n0) {
  // Query i sees key j when i + shift - left <= j <= i + shift + right:
  // j - shift - right <= i <= j - shift + left. A query block is unmasked
  // when it is whole, the key block is whole, and every query sees every
  // key of the block.
  Value firstKey = n0, lastKey = add(n0, constIndex(blockN - 1));
  LoopRanges ranges;
  ranges.begin =
      window.hasRight()
          ? alignDown(clamp(sub(sub(firstKey, shift), constIndex(window.right)),
                            seqQ),
                      blockM)
          : constIndex(0);
  ranges.end =
      window.hasLeft()
          ? clamp(add(sub(lastKey, shift), constIndex(window.left + 1)), seqQ)
          : seqQ;
  ranges.end = skipPastSequence(n0, seqKV, ranges.begin, ranges.end);
  Value unmaskedBegin =
      window.hasRight()
          ? alignUp(
                clamp(sub(sub(lastKey, shift), constIndex(window.right)), seqQ),
                blockM)
          : ranges.begin;
  Value unmaskedEnd = alignDown(seqQ, blockM);
  if (window.hasLeft())
    unmaskedEnd = min(
        unmaskedEnd,
        alignDown(
            clamp(add(sub(firstKey, shift), constIndex(window.left + 1)), seqQ),
            blockM));
  // A key block past the sequence's end is masked everywhere.
  Value wholeKeys = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                          add(n0, constIndex(blockN)), seqKV);
  ranges.unmaskedBegin = min(max(unmaskedBegin, ranges.begin), ranges.end);
  unmaskedEnd = arith::SelectOp::create(b, loc, wholeKeys, unmaskedEnd,
                                        ranges.unmaskedBegin);
  ranges.unmaskedEnd = min(max(unmaskedEnd, ranges.unmaskedBegin), ranges.end);
  return ranges;
}

SmallVector<Value> AttentionGradTiler::buildLoops(
    const LoopRanges &ranges, int64_t step, ValueRange inits,
    function_ref<SmallVector<Value>(Value, ValueRange, bool)> body) {
  auto loop = [&](Value begin, Value end, ValueRange iters, bool masked) {
    auto forOp = scf::ForOp::create(
        b, loc, begin, end, constIndex(step), iters,
        [&](OpBuilder &nested, Location, Value start, ValueRange values) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(nested.getInsertionBlock(),
                              nested.getInsertionPoint());
          scf::YieldOp::create(b, loc, body(start, values, masked));
        });
    return SmallVector<Value>(forOp.getResults());
  };
  SmallVector<Value> values =
      loop(ranges.begin, ranges.unmaskedBegin, inits, true);
  values = loop(ranges.unmaskedBegin, ranges.unmaskedEnd, values, false);
  return loop(ranges.unmaskedEnd, ranges.end, values, true);
}

Value AttentionGradTiler::probabilities(Value scores, Value minusLse) {
  auto type = cast<RankedTensorType>(scores.getType());
  double scaleLog2 = double(op.getEffectiveScale()) * kLog2e;
  // A row that saw no key has lse +inf: its P is exp2(-inf) = 0.
  Value exponent =
      math::FmaOp::create(b, loc, scores, splat(type, scaleLog2), minusLse);
  return math::Exp2Op::create(b, loc, exponent, arith::FastMathFlags::afn);
}

LogicalResult AttentionGradTiler::run() {
  // tile = [rows a workgroup owns, rows per step]: queries then keys in
  // the dQ kernel, keys then queries in the dK/dV kernel.
  ArrayRef<int64_t> tileSizes = config.getTile();
  bool ownsQueries = mode == Mode::Queries;
  blockM = ownsQueries ? tileSizes[0] : tileSizes[1];
  blockN = ownsQueries ? tileSizes[1] : tileSizes[0];
  MemRefType qType = op.getQ().getType();
  element = qType.getElementType();
  elementBytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  headDim = getPaddedHeadDim(qType.getDimSize(3));
  headDimV = getPaddedHeadDim(op.getV().getType().getDimSize(3));
  numWaves = config.getNumWaves();
  // The workgroup's own dimension (queries, or keys) along the products'
  // columns, split over the waves.
  FailureOr<MmaAttr> layout = getMmaLayout(op, config.getInstr().getValue(),
                                           {1, int64_t(numWaves)}, target);
  if (failed(layout))
    return failure();
  mma = *layout;
  // A right key edge (causal) gives later query blocks more keys and
  // earlier key blocks more queries: the workgroups run the longest blocks
  // first (longestBlocksFirst), which the grid order would start last.
  // Varlen grids keep their order (z is the sequence).
  if (op.getKeyWindow().hasRight() && !op.isVarlen()) {
    Value owned = ownsQueries ? op.getQ() : op.getK();
    Value blocks = arith::CeilDivUIOp::create(
        b, loc, dim(owned, 2), constIndex(ownsQueries ? blockM : blockN));
    Value heads = dim(owned, 1);
    Value batches = dim(op.getQ(), 0);
    std::tie(ownBlock, ownHead, batch) =
        longestBlocksFirst(blocks, heads, batches, /*fromLast=*/ownsQueries);
  } else {
    std::tie(ownBlock, ownHead, batch) = gridProgramIds();
  }
  queries = op.getQ();
  keys = op.getK();
  values = op.getV();
  output = op.getO();
  gradOutput = op.getGradO();
  logsumexp = op.getLse();
  gradQueries = op.getGradQ();
  gradKeys = op.getGradK();
  gradValues = op.getGradV();
  // Varlen: z is the sequence; the arrays become views of its rows.
  if (op.isVarlen()) {
    auto [queryStart, queryLength] =
        getSequenceRange(b, loc, op.getCuSeqlensQ(), batch, dim(queries, 2));
    auto [keyStart, keyLength] =
        getSequenceRange(b, loc, op.getCuSeqlensK(), batch, dim(keys, 2));
    for (Value *rows :
         {&queries, &output, &gradOutput, &logsumexp, &gradQueries, &delta})
      *rows = getRowRange(b, loc, *rows, queryStart, queryLength);
    for (Value *rows : {&keys, &values, &gradKeys, &gradValues})
      *rows = getRowRange(b, loc, *rows, keyStart, keyLength);
    batch = constIndex(0);
  }
  seqQ = dim(queries, 2);
  seqKV = dim(keys, 2);
  shift = sub(seqKV, seqQ);
  window = op.getKeyWindow();
  LogicalResult built =
      mode == Mode::Queries ? buildQueryKernel() : buildKeyKernel();
  if (failed(built))
    return failure();
  finishKernel(op, target.waveSize * numWaves, tileSizes, config);
  return success();
}

LogicalResult AttentionGradTiler::buildQueryKernel() {
  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  Value m0 = arith::MulIOp::create(b, loc, ownBlock, constIndex(blockM));
  Value head = ownHead;
  Value kvHead = arith::DivUIOp::create(
      b, loc, head,
      arith::DivUIOp::create(b, loc, dim(op.getQ(), 1), dim(op.getK(), 1)));
  Value zero = constIndex(0);

  // D = rowsum(dO * O) per query: O^T and dO^T in the accumulators' layout,
  // summed down the head dims (within a lane and across its lane halves).
  auto sType = tile({blockN, blockM}, f32, mma);
  auto oType = tile({headDimV, blockM}, f32, mma);
  FailureOr<RankedTensorType> statType =
      getReducedTileType(sType, 0, [&] { return op.emitOpError(); });
  if (failed(statType))
    return failure();
  auto loadAsAccumulator = [&](Value memref) {
    Value loaded = LoadOp::create(
        b, loc, tile({headDimV, blockM}, element, mma),
        transposedView(b, loc, memref), ValueRange{batch, head, zero, m0});
    return arith::ExtFOp::create(b, loc, oType, loaded);
  };
  Value product = arith::MulFOp::create(b, loc, loadAsAccumulator(output),
                                        loadAsAccumulator(gradOutput));
  Value rowSum =
      ReduceOp::create(b, loc, *statType, product, b.getI64IntegerAttr(0),
                       b.getStringAttr("add"));
  StoreOp::create(b, loc, rowSum, unitDimView(b, loc, delta, 2),
                  ValueRange{batch, head, zero, m0});
  Value deltaTile = BroadcastOp::create(b, loc, sType, rowSum);
  Value lse =
      LoadOp::create(b, loc, *statType, unitDimView(b, loc, logsumexp, 2),
                     ValueRange{batch, head, zero, m0});
  Value lseTile = BroadcastOp::create(b, loc, sType, negatedLog2(lse));

  // Q^T and dO^T stay in registers (operands of every key block).
  Value qT =
      loadCoalesced({headDim, blockM}, 0, transposedView(b, loc, queries),
                    ValueRange{batch, head, zero, m0});
  Value gradOT =
      loadCoalesced({headDimV, blockM}, 0, transposedView(b, loc, gradOutput),
                    ValueRange{batch, head, zero, m0});
  Value keysT = transposedView(b, loc, keys);
  auto dqType = tile({headDim, blockM}, f32, mma);

  // K^T [head dim, keys]: each lane loads runs of keys, the K of the
  // product, so that its LDS copy keeps them contiguous.
  auto kTLayout =
      getCoalescedLayout(context, {headDim, blockN}, 0, elementBytes, numWaves,
                         target.waveSize, std::min<int64_t>(4, blockN));
  auto step = [&](Value n0, ValueRange iters, bool masked) {
    // The key block's tiles are all loaded (and written to LDS) before its
    // first product.
    Value k = loadCoalesced({blockN, headDim}, 1, keys,
                            ValueRange{batch, kvHead, n0, zero});
    Value v = loadCoalesced({blockN, headDimV}, 1, values,
                            ValueRange{batch, kvHead, n0, zero});
    Value kT =
        LoadOp::create(b, loc, tile({headDim, blockN}, element, kTLayout),
                       keysT, ValueRange{batch, kvHead, zero, n0});
    Value sT =
        DotOp::create(b, loc, sType, k, qT, splat(sType, 0.0), UnitAttr());
    if (masked)
      sT = maskScores(sT, /*keyDim=*/0, n0, m0);
    Value pT = probabilities(sT, lseTile);
    Value dpT =
        DotOp::create(b, loc, sType, v, gradOT, splat(sType, 0.0), UnitAttr());
    Value dsT = arith::MulFOp::create(
        b, loc, pT, arith::SubFOp::create(b, loc, dpT, deltaTile));
    return SmallVector<Value>{DotOp::create(b, loc, dqType, kT, toElement(dsT),
                                            iters[0], UnitAttr())};
  };
  SmallVector<Value> results = buildLoops(getKeyRanges(m0), blockN,
                                          ValueRange{splat(dqType, 0.0)}, step);
  Value gradQT = arith::MulFOp::create(
      b, loc, results[0], splat(dqType, double(op.getEffectiveScale())));
  Type outElement = cast<MemRefType>(gradQueries.getType()).getElementType();
  if (outElement != f32)
    gradQT = arith::TruncFOp::create(
        b, loc, tile({headDim, blockM}, outElement, mma), gradQT);
  StoreOp::create(b, loc, gradQT, transposedView(b, loc, gradQueries),
                  ValueRange{batch, head, zero, m0});
  return success();
}

LogicalResult AttentionGradTiler::buildKeyKernel() {
  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  Value n0 = arith::MulIOp::create(b, loc, ownBlock, constIndex(blockN));
  Value kvHead = ownHead;
  Value group =
      arith::DivUIOp::create(b, loc, dim(op.getQ(), 1), dim(op.getK(), 1));
  Value zero = constIndex(0);

  auto sType = tile({blockM, blockN}, f32, mma);
  FailureOr<RankedTensorType> statType =
      getReducedTileType(sType, 1, [&] { return op.emitOpError(); });
  if (failed(statType))
    return failure();
  // K^T and V^T stay in registers (operands of every query block).
  auto operandLayout = [&](int64_t rows) {
    return getCoalescedLayout(context, {rows, blockN}, 0, elementBytes,
                              numWaves, target.waveSize,
                              std::min<int64_t>(4, blockN));
  };
  Value kT = LoadOp::create(
      b, loc, tile({headDim, blockN}, element, operandLayout(headDim)),
      transposedView(b, loc, keys), ValueRange{batch, kvHead, zero, n0});
  Value vT = LoadOp::create(
      b, loc, tile({headDimV, blockN}, element, operandLayout(headDimV)),
      transposedView(b, loc, values), ValueRange{batch, kvHead, zero, n0});
  Value queriesT = transposedView(b, loc, queries);
  Value gradOT = transposedView(b, loc, gradOutput);
  // Per-query statistics as [queries, 1] views read into one value per row.
  Value lseRows = unitDimView(b, loc, logsumexp, 3);
  Value deltaRows = unitDimView(b, loc, delta, 3);
  auto dkType = tile({headDim, blockN}, f32, mma);
  auto dvType = tile({headDimV, blockN}, f32, mma);
  // Operands whose K (the queries) is not contiguous in memory: lanes load
  // runs of queries (see K^T in the dQ kernel).
  auto transposedOperand = [&](int64_t rows, Value memref, Value head,
                               Value m0) {
    auto layout =
        getCoalescedLayout(context, {rows, blockM}, 0, elementBytes, numWaves,
                           target.waveSize, std::min<int64_t>(4, blockM));
    return LoadOp::create(b, loc, tile({rows, blockM}, element, layout), memref,
                          ValueRange{batch, head, zero, m0})
        .getResult();
  };

  // Over the group's query heads, then their query blocks.
  Value firstHead = arith::MulIOp::create(b, loc, kvHead, group);
  auto heads = scf::ForOp::create(
      b, loc, firstHead, add(firstHead, group), constIndex(1),
      ValueRange{splat(dkType, 0.0), splat(dvType, 0.0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(heads.getBody());
    Value head = heads.getInductionVar();
    auto step = [&](Value m0, ValueRange iters, bool masked) {
      // The query block's tiles are all loaded (and written to LDS) before
      // its first product.
      Value q = loadCoalesced({blockM, headDim}, 1, queries,
                              ValueRange{batch, head, m0, zero});
      Value gradO = loadCoalesced({blockM, headDimV}, 1, gradOutput,
                                  ValueRange{batch, head, m0, zero});
      Value gradOTBlock = transposedOperand(headDimV, gradOT, head, m0);
      Value qTBlock = transposedOperand(headDim, queriesT, head, m0);
      Value s =
          DotOp::create(b, loc, sType, q, kT, splat(sType, 0.0), UnitAttr());
      if (masked)
        s = maskScores(s, /*keyDim=*/1, n0, m0);
      Value lse = LoadOp::create(b, loc, *statType, lseRows,
                                 ValueRange{batch, head, m0, zero});
      Value p = probabilities(
          s, BroadcastOp::create(b, loc, sType, negatedLog2(lse)));
      Value dp = DotOp::create(b, loc, sType, gradO, vT, splat(sType, 0.0),
                               UnitAttr());
      Value rowSum = LoadOp::create(b, loc, *statType, deltaRows,
                                    ValueRange{batch, head, m0, zero});
      Value ds = arith::MulFOp::create(
          b, loc, p,
          arith::SubFOp::create(b, loc, dp,
                                BroadcastOp::create(b, loc, sType, rowSum)));
      Value dv = DotOp::create(b, loc, dvType, gradOTBlock, toElement(p),
                               iters[1], UnitAttr());
      Value dk = DotOp::create(b, loc, dkType, qTBlock, toElement(ds), iters[0],
                               UnitAttr());
      return SmallVector<Value>{dk, dv};
    };
    SmallVector<Value> results =
        buildLoops(getQueryRanges(n0), blockM, heads.getRegionIterArgs(), step);
    scf::YieldOp::create(b, loc, results);
  }
  auto store = [&](Value acc, Value memref, int64_t rows, double scale) {
    if (scale != 1.0)
      acc = arith::MulFOp::create(
          b, loc, acc, splat(cast<RankedTensorType>(acc.getType()), scale));
    Type outElement = cast<MemRefType>(memref.getType()).getElementType();
    if (outElement != f32)
      acc = arith::TruncFOp::create(b, loc,
                                    tile({rows, blockN}, outElement, mma), acc);
    StoreOp::create(b, loc, acc, transposedView(b, loc, memref),
                    ValueRange{batch, kvHead, zero, n0});
  };
  store(heads.getResult(0), gradKeys, headDim, double(op.getEffectiveScale()));
  store(heads.getResult(1), gradValues, headDimV, 1.0);
  return success();
}

LogicalResult tessel::tileAttentionGrad(func::FuncOp function,
                                        AttentionGradOp op,
                                        const TileTarget &target) {
  MLIRContext *context = function.getContext();
  std::string name = function.getName().str();
  // D [batch, heads, seq_q] (f32), written by the first kernel and read by
  // the second: a workspace argument of both.
  MemRefType q = op.getQ().getType();
  auto deltaType =
      MemRefType::get(q.getShape().take_front(3), Float32Type::get(context));
  OpBuilder builder(function);
  builder.setInsertionPointAfter(function);
  auto keys = cast<func::FuncOp>(builder.clone(*function));
  Builder attrs(context);
  auto prepare = [&](func::FuncOp kernel, StringRef suffix,
                     int64_t stage) -> Value {
    kernel.setName(name + suffix.str());
    kernel->setAttr("tessel.plan_of", attrs.getStringAttr(name));
    kernel->setAttr("tessel.plan_stage", attrs.getI64IntegerAttr(stage));
    // What the runtime sizes the workspace from.
    kernel->setAttr(
        "tessel.workspace_dims",
        attrs.getArrayAttr({attrs.getStrArrayAttr(
            op.isVarlen() ? ArrayRef<StringRef>{"", "heads", "total_q"}
                          : ArrayRef<StringRef>{"batch", "heads", "seq_q"})}));
    unsigned index = kernel.getNumArguments();
    if (failed(kernel.insertArgument(index, deltaType, DictionaryAttr(),
                                     kernel.getLoc())))
      return Value();
    return kernel.getArgument(index);
  };
  Value deltaQueries = prepare(function, "__dq", 0);
  Value deltaKeys = prepare(keys, "__dkdv", 1);
  if (!deltaQueries || !deltaKeys)
    return failure();
  // The second kernel's grid runs over key blocks and key/value heads.
  keys->setAttr("tessel.grid_over_keys", attrs.getUnitAttr());
  AttentionGradOp keysOp = *keys.getOps<AttentionGradOp>().begin();
  if (failed(AttentionGradTiler(op, target, AttentionGradTiler::Mode::Queries,
                                deltaQueries)
                 .run()))
    return failure();
  return AttentionGradTiler(keysOp, target, AttentionGradTiler::Mode::Keys,
                            deltaKeys)
      .run();
}
