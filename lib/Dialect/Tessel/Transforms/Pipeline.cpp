//===- Pipeline.cpp - Prefetch the next K step ------------------*- C++ -*-===//
//
// The K loop promote-lds leaves is, per iteration:
//
//   g = load(k)                     global -> registers
//   barrier; local_store(g); barrier
//   r = local_load(); acc = dot(r, acc)
//
// which waits for each global load and each LDS read before the MFMAs. The
// pipelined loop keeps two LDS slots and two steps in flight:
//
//   prologue: local_store(slot 0, load(lb)); barrier; r = local_load(slot 0)
//             g = load(lb + step)
//   loop:     local_store(next slot, g); g' = load(k + 2 step); barrier
//             r' = local_load(next slot); acc = dot(r, acc)
//
// so the global loads of step k + 2 and the LDS reads of step k + 1 are in
// flight while the MFMAs of step k run (the backend interleaves the
// independent LDS reads and MFMAs). One barrier per step suffices: a slot
// is rewritten two steps after it was read, with the barrier of the step
// between.
//
// The backend's scheduler would hoist a step's LDS stores (which wait for
// the global loads issued a step earlier) among the previous step's MFMAs,
// shortening the load-to-wait distance; a scheduling barrier in front of
// the stores keeps it a whole step. Two steps' operand registers are live
// at once, so a rolled loop copies the next step's registers over the
// current ones every iteration; unrolled by two, the sets alternate, when
// they fit the register file (fitsUnrolled). Where they do not, a loop of
// 8-wave workgroups with at most 8 MFMAs a step is unrolled all the same
// and marked tessel.reads_in_place: tessel-lower-to-gpu then reads each
// operand register of the next step after the MFMA that frees it, so both
// steps share one set (fitsUnrolledKLoopInPlace).
//
// Attention's key loop (a config tile of [M, N]) takes one of two forms.
// With stages = 2 it keeps one LDS slot, whose K and V^T blocks already
// bound the workgroups per CU, and prefetches into registers only
// (prefetchIntoRegisters):
//
//   prologue: g = load(lb)
//   loop:     barrier; local_store(g); barrier; r = local_load()
//             s = dot(r.k, ...)          first product
//             g' = load(k + step)        in flight through the rest
//             ...                        softmax, second product
//
// The loads sit after the first product, whose operand registers they can
// reuse, so their latency hides behind the softmax and the second product.
// With stages >= 3, where two slots still leave LDS for the workgroups the
// registers allow, K and V^T are double-buffered as well, with one barrier
// per block (doubleBufferKeyLoop). Only the loop over whole blocks (loads
// `in_bounds`) takes either; the masked loops over the causal diagonal and
// the tail run a block or two. A load's indices may be computed in the
// loop from its induction variable (the next block's K with
// scores_ahead): the prefetch clones that computation (cloneLoadAt).
//
//===----------------------------------------------------------------------===//

#include "TileSupport.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace tessel {
#define GEN_PASS_DEF_TESSELPIPELINEPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

namespace {

/// The parts of a K loop body in promote-lds' shape.
struct LoopShape {
  SmallVector<LoadOp> loads;           // global loads, only feeding LDS
  SmallVector<LocalStoreOp> stores;    // between the two barriers
  SmallVector<LocalLoadOp> localLoads; // after the second barrier
  gpu::BarrierOp before, after;
};

} // namespace

/// Whether `value` is usable before `loop` (the induction variable aside).
static bool definedOutside(Value value, scf::ForOp loop) {
  return !loop->isAncestor(value.getParentRegion()->getParentOp());
}

/// Collects, in order, the ops of `loop`'s body that `value` is computed
/// from: integer arithmetic on the induction variable and values from
/// outside the loop (a block index clamped to the loop's last). Fails for
/// anything else.
static LogicalResult collectIndexSlice(Value value, scf::ForOp loop,
                                       SmallVectorImpl<Operation *> &slice) {
  if (value == loop.getInductionVar() || definedOutside(value, loop))
    return success();
  Operation *op = value.getDefiningOp();
  if (!op || op->getBlock() != loop.getBody() ||
      !isa<arith::ArithDialect>(op->getDialect()) || op->getNumRegions() ||
      !isPure(op))
    return failure();
  if (llvm::is_contained(slice, op))
    return success();
  for (Value operand : op->getOperands())
    if (failed(collectIndexSlice(operand, loop, slice)))
      return failure();
  slice.push_back(op);
  return success();
}

/// A copy of `load` (of `loop`'s body) at step `k`: its index computations
/// cloned with the induction variable replaced by `k`.
static LoadOp cloneLoadAt(OpBuilder &b, LoadOp load, scf::ForOp loop, Value k) {
  SmallVector<Operation *> slice;
  for (Value index : load.getIndices())
    (void)collectIndexSlice(index, loop, slice);
  IRMapping at;
  at.map(loop.getInductionVar(), k);
  for (Operation *op : slice)
    b.clone(*op, at);
  return cast<LoadOp>(b.clone(*load, at));
}

/// The loads of `shape` at step `k`, in front of `loop`, with bounds
/// checks: the loop may run no iteration, and its step `k` may not exist.
static SmallVector<Value> cloneMaskedLoadsAt(OpBuilder &b, scf::ForOp loop,
                                             const LoopShape &shape, Value k) {
  SmallVector<Value> tiles;
  for (LoadOp load : shape.loads) {
    LoadOp clone = cloneLoadAt(b, load, loop, k);
    clone.setInBounds(false);
    // What holds of in-bounds loads only goes with the bound.
    clone->removeAttr(kScalarOriginAttrName);
    tiles.push_back(clone.getResult());
  }
  return tiles;
}

/// Recognizes the loop body promote-lds produces; nothing else is
/// pipelined.
static std::optional<LoopShape> matchLoop(scf::ForOp loop) {
  LoopShape shape;
  Block *body = loop.getBody();
  for (Operation &op : body->without_terminator()) {
    if (auto load = dyn_cast<LoadOp>(op)) {
      bool onlyToLds = !load->use_empty() &&
                       llvm::all_of(load->getUsers(), [](Operation *user) {
                         return isa<LocalStoreOp>(user);
                       });
      SmallVector<Operation *> slice;
      bool indicesKnown = llvm::all_of(load.getIndices(),
                                       [&](Value index) {
                                         return succeeded(collectIndexSlice(
                                             index, loop, slice));
                                       }) &&
                          definedOutside(load.getSource(), loop);
      if (!onlyToLds || !indicesKnown || shape.before)
        return std::nullopt;
      shape.loads.push_back(load);
    } else if (auto barrier = dyn_cast<gpu::BarrierOp>(op)) {
      if (!shape.before)
        shape.before = barrier;
      else if (!shape.after)
        shape.after = barrier;
      else
        return std::nullopt;
    } else if (auto store = dyn_cast<LocalStoreOp>(op)) {
      if (!shape.before || shape.after ||
          !definedOutside(store.getSlot(), loop) ||
          !definedOutside(store.getBuffer(), loop))
        return std::nullopt;
      shape.stores.push_back(store);
    } else if (auto localLoad = dyn_cast<LocalLoadOp>(op)) {
      if (!shape.after)
        return std::nullopt;
      shape.localLoads.push_back(localLoad);
    }
  }
  if (shape.loads.empty() || !shape.after ||
      shape.stores.size() != shape.loads.size() ||
      shape.localLoads.size() != shape.stores.size())
    return std::nullopt;
  // Every buffer has one slot, to become more, or already has them: an
  // earlier loop over the same buffers was pipelined (attention's masked
  // key loop after its unmasked one).
  for (LocalStoreOp store : shape.stores)
    if (store.getBuffer().getType().getSlots() > 3)
      return std::nullopt;
  return shape;
}

/// Gives an LDS buffer `slots` slots.
static void setSlots(Value buffer, int64_t slots) {
  auto type = cast<LdsType>(buffer.getType());
  buffer.setType(LdsType::get(type.getContext(), slots, type.getShape(),
                              type.getElementType(), type.getLayout()));
}

/// Gives an LDS buffer two slots.
static void doubleSlots(Value buffer) { setSlots(buffer, 2); }

/// 32-bit registers a lane holds of `type` (a distributed tile).
static int64_t registersPerLane(Type type) {
  auto tile = dyn_cast<RankedTensorType>(type);
  if (!tile)
    return type.isIndex() ? 0 : 1; // the slot: a scalar register
  FailureOr<LinearLayout> layout =
      getTileLayout(tile, [] { return InFlightDiagnostic(); });
  if (failed(layout))
    return 1;
  int64_t bits = int64_t(layout->getInDimSize(dims::kRegister)) *
                 tile.getElementType().getIntOrFloatBitWidth();
  return llvm::divideCeil(bits, 32);
}

/// The MFMAs one wave issues per K step of `loop`'s dots, and the waves of
/// the workgroup (none: 0 waves, for WMMA dots, which the lowering does not
/// read in place).
static std::pair<int64_t, int64_t> matrixInstructionsPerStep(scf::ForOp loop) {
  int64_t count = 0, workgroupWaves = 0;
  bool wmma = false;
  loop.walk([&](DotOp dot) {
    auto acc = dyn_cast_or_null<MmaAttr>(dot.getC().getType().getEncoding());
    if (!acc)
      return;
    const MmaInstr &instr = acc.getInstruction();
    wmma |= instr.isWmma();
    ArrayRef<int64_t> waves = acc.getWaves();
    workgroupWaves = waves[0] * waves[1];
    RankedTensorType c = dot.getC().getType();
    int64_t tileK = dot.getA().getType().getDimSize(1);
    count += c.getDimSize(0) / (instr.m * waves[0]) *
             (c.getDimSize(1) / (instr.n * waves[1])) *
             std::max<int64_t>(1, tileK / instr.k);
  });
  return {count, wmma ? 0 : workgroupWaves};
}

/// Whether `bound` is a constant or the static size of a memref dimension
/// (before canonicalization folds it).
static bool isStaticBound(Value bound) {
  if (getConstantIntValue(bound))
    return true;
  auto dim = bound.getDefiningOp<memref::DimOp>();
  if (!dim)
    return false;
  std::optional<int64_t> index = dim.getConstantIndex();
  auto type = dyn_cast<ShapedType>(dim.getSource().getType());
  return index && type && !type.isDynamicDim(*index);
}

namespace {
/// How the pipelined loop's registers fit once unrolled by two.
enum class UnrolledFit { None, TwoOperandSets, OperandsInPlace };
} // namespace

/// Whether the pipelined loop still fits once unrolled by two
/// (fitsUnrolledKLoop), or only with its steps' operands read in place
/// (fitsUnrolledKLoopInPlace).
static UnrolledFit fitsUnrolled(scf::ForOp loop, unsigned numOld,
                                unsigned numOperands, bool batched) {
  int64_t accumulators = 0, nextStep = 0, tiles = 0;
  // The loop's own values (the accumulators) come first; the pipeline
  // appended one step's operands, its tiles and the slot.
  for (auto [index, value] : llvm::enumerate(loop.getRegionIterArgs())) {
    int64_t registers = registersPerLane(value.getType());
    (index < numOld ? accumulators : nextStep) += registers;
    if (index >= numOld + numOperands)
      tiles += registers;
  }
  if (fitsUnrolledKLoop(accumulators, nextStep))
    return UnrolledFit::TwoOperandSets;
  auto [mfmasPerStep, waves] = matrixInstructionsPerStep(loop);
  bool plain = isStaticBound(loop.getUpperBound()) && !batched;
  if (fitsUnrolledKLoopInPlace(accumulators, nextStep, tiles, mfmasPerStep,
                               waves, plain))
    return UnrolledFit::OperandsInPlace;
  return UnrolledFit::None;
}

/// Unrolls a pipelined K loop by two where its registers fit
/// (fitsUnrolled), marking it tessel.reads_in_place where only that fits.
/// `numOld` loop values come first, then `numOperands` operand tiles.
static void unrollPipelinedLoop(scf::ForOp pipelined, unsigned numOld,
                                unsigned numOperands, bool batched, bool even) {
  UnrolledFit fit = fitsUnrolled(pipelined, numOld, numOperands, batched);
  if (fit == UnrolledFit::None)
    return;
  if (fit == UnrolledFit::OperandsInPlace)
    pipelined->setAttr(kReadsInPlaceAttrName,
                       UnitAttr::get(pipelined.getContext()));
  FailureOr<UnrolledLoopInfo> unrolled = loopUnrollByFactor(pipelined, 2);
  // An even trip count leaves the loop for an odd last step empty.
  if (succeeded(unrolled) && even && unrolled->epilogueLoopOp) {
    scf::ForOp epilogue = *unrolled->epilogueLoopOp;
    epilogue->replaceAllUsesWith(epilogue.getInitArgs());
    epilogue.erase();
  }
}

/// Clones the ops of `loop`'s body other than `replaced` and the LDS reads
/// `localLoads` into `pipelined` at `b`'s insertion point, on its induction
/// variable, its first `numOld` loop values and the operands a step earlier
/// (`operandIters`, in place of the reads' results). Returns the values
/// `loop` yielded, as cloned.
static SmallVector<Value> cloneRestOfStep(OpBuilder &b, scf::ForOp loop,
                                          scf::ForOp pipelined, unsigned numOld,
                                          ArrayRef<LocalLoadOp> localLoads,
                                          ValueRange operandIters,
                                          DenseSet<Operation *> replaced) {
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), pipelined.getInductionVar());
  for (unsigned i = 0; i < numOld; ++i)
    mapping.map(loop.getRegionIterArgs()[i], pipelined.getRegionIterArgs()[i]);
  for (auto [index, value] : llvm::enumerate(operandIters)) {
    LocalLoadOp localLoad = localLoads[index];
    mapping.map(localLoad.getResult(), value);
    replaced.insert(localLoad);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    if (!replaced.contains(&op))
      b.clone(op, mapping);
  return llvm::map_to_vector(
      loop.getBody()->getTerminator()->getOperands(),
      [&](Value value) { return mapping.lookupOrDefault(value); });
}

/// The LDS reads `localLoads` again, from `slot`.
static SmallVector<Value>
readOperandsAt(OpBuilder &b, ArrayRef<LocalLoadOp> localLoads, Value slot) {
  SmallVector<Value> operands;
  for (LocalLoadOp localLoad : localLoads)
    operands.push_back(LocalLoadOp::create(
        b, localLoad.getLoc(), localLoad.getType(), localLoad.getBuffer(), slot,
        localLoad.getTransposed()));
  return operands;
}

static void pipeline(scf::ForOp loop, LoopShape &shape) {
  bool even = loop->hasAttr(kEvenTripCountAttrName);
  bool batched = llvm::any_of(shape.loads, [](LoadOp load) {
    auto type = dyn_cast<MemRefType>(load.getSource().getType());
    return !type || type.getRank() > 2;
  });
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), step = loop.getStep();
  for (LocalStoreOp store : shape.stores)
    doubleSlots(store.getBuffer());

  // Loads that claim to stay in bounds must: the prefetches one and two
  // steps ahead are clamped to the last step (the data is loaded again and
  // never used), where masked loads would read zeros past the end.
  Value lastStep;
  if (llvm::any_of(shape.loads, [](LoadOp load) { return load.getInBounds(); }))
    lastStep = arith::SubIOp::create(b, loc, loop.getUpperBound(), step);
  // The loads of step `k` (`ahead`: a prefetch that may lie past the end).
  auto loadAt = [&](Value k, bool ahead) {
    Value clamped =
        ahead && lastStep ? arith::MinUIOp::create(b, loc, k, lastStep) : k;
    SmallVector<Value> tiles;
    for (LoadOp load : shape.loads) {
      tiles.push_back(
          cloneLoadAt(b, load, loop, load.getInBounds() ? clamped : k));
    }
    return tiles;
  };

  // Prologue: step 0 into slot 0 and its operand registers; step 1 in
  // registers.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  SmallVector<Value> first = loadAt(lb, /*ahead=*/false);
  // A store feeds from the load at the same position (promote-lds order).
  auto storeAll = [&](ArrayRef<Value> tiles, Value slot) {
    for (LocalStoreOp store : shape.stores) {
      auto it =
          llvm::find(shape.loads, store.getValue().getDefiningOp<LoadOp>());
      Value tile = tiles[it - shape.loads.begin()];
      LocalStoreOp::create(b, store.getLoc(), tile, store.getBuffer(), slot);
    }
  };
  auto loadOperands = [&](Value slot) {
    return readOperandsAt(b, shape.localLoads, slot);
  };
  // Inside another loop (stream-K's loop over tiles) the previous outer
  // iteration's last reads of the slots come before this store.
  if (loop->getParentOfType<scf::ForOp>())
    gpu::BarrierOp::create(b, loc);
  storeAll(first, zero);
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> operands = loadOperands(zero);
  SmallVector<Value> second =
      loadAt(arith::AddIOp::create(b, loc, lb, step), /*ahead=*/true);

  SmallVector<Value> inits(loop.getInitArgs());
  unsigned numOld = inits.size();
  inits.append(operands);
  inits.append(second);
  // The slot the loop's first step writes (step 1's tiles), carried and
  // flipped every step rather than computed from the induction variable:
  // unrolled by two, the flips cancel and the slots fold to constants, so
  // that the backend computes each slot's addresses once (the parity of
  // (iv - lb) / step it does not always derive: an odd number of K steps
  // left every address recomputed).
  inits.push_back(one);
  auto pipelined =
      scf::ForOp::create(b, loc, lb, loop.getUpperBound(), step, inits);
  Block *body = pipelined.getBody();
  b.setInsertionPointToStart(body);
  Value newIv = pipelined.getInductionVar();
  ValueRange iters = pipelined.getRegionIterArgs();
  ValueRange operandIters = iters.slice(numOld, operands.size());
  ValueRange tileIters = iters.slice(numOld + operands.size(), second.size());

  // This step writes the next step's tiles into the other slot.
  Value nextSlot = iters.back();
  amdgpu::SchedBarrierOp::create(b, loc, amdgpu::sched_barrier_opt_enum::none);
  storeAll(SmallVector<Value>(tileIters), nextSlot);
  Value twoSteps = arith::MulIOp::create(b, loc, step, two);
  SmallVector<Value> nextTiles =
      loadAt(arith::AddIOp::create(b, loc, newIv, twoSteps), /*ahead=*/true);
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> nextOperands = loadOperands(nextSlot);

  // The rest of the body computes on the operands loaded a step earlier.
  DenseSet<Operation *> replaced;
  for (LoadOp load : shape.loads)
    replaced.insert(load);
  for (LocalStoreOp store : shape.stores)
    replaced.insert(store);
  replaced.insert(shape.before);
  replaced.insert(shape.after);
  SmallVector<Value> yields = cloneRestOfStep(
      b, loop, pipelined, numOld, shape.localLoads, operandIters, replaced);
  yields.append(nextOperands);
  yields.append(nextTiles);
  yields.push_back(arith::SubIOp::create(b, loc, one, nextSlot));
  scf::YieldOp::create(b, loc, yields);
  loop->replaceAllUsesWith(pipelined->getResults().take_front(numOld));
  loop.erase();
  unrollPipelinedLoop(pipelined, numOld, operands.size(), batched, even);
}

namespace {
/// A K loop whose operands tessel-promote-lds copies straight into LDS:
/// barrier; copies; wait_copies; barrier; LDS reads; the rest.
struct CopyLoopShape {
  SmallVector<CopyToLocalOp> copies;
  SmallVector<LocalLoadOp> localLoads; // after the second barrier
  WaitCopiesOp wait;
  gpu::BarrierOp before, after;
};
} // namespace

/// Recognizes promote-lds' K loop with copies (one slot per buffer).
static std::optional<CopyLoopShape> matchCopyLoop(scf::ForOp loop) {
  CopyLoopShape shape;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto copy = dyn_cast<CopyToLocalOp>(op)) {
      SmallVector<Operation *> slice;
      bool indicesKnown = llvm::all_of(copy.getIndices(), [&](Value index) {
        return succeeded(collectIndexSlice(index, loop, slice));
      });
      if (!shape.before || shape.wait || !indicesKnown ||
          !definedOutside(copy.getSource(), loop) ||
          !definedOutside(copy.getBuffer(), loop) ||
          !definedOutside(copy.getSlot(), loop) ||
          copy.getBuffer().getType().getSlots() != 1)
        return std::nullopt;
      shape.copies.push_back(copy);
    } else if (auto wait = dyn_cast<WaitCopiesOp>(op)) {
      if (shape.copies.empty() || shape.wait)
        return std::nullopt;
      shape.wait = wait;
    } else if (auto barrier = dyn_cast<gpu::BarrierOp>(op)) {
      if (!shape.before)
        shape.before = barrier;
      else if (shape.wait && !shape.after)
        shape.after = barrier;
      else
        return std::nullopt;
    } else if (auto localLoad = dyn_cast<LocalLoadOp>(op)) {
      if (!shape.after)
        return std::nullopt;
      shape.localLoads.push_back(localLoad);
    } else if (isa<LoadOp, LocalStoreOp>(op)) {
      return std::nullopt;
    }
  }
  if (!shape.after || shape.localLoads.empty())
    return std::nullopt;
  return shape;
}

/// The copies of `shape` at step `k` into `slot`, in front of `b`'s
/// insertion point: their index computations cloned with the induction
/// variable replaced by `k`.
static void cloneCopiesAt(OpBuilder &b, scf::ForOp loop,
                          const CopyLoopShape &shape, Value k, Value slot) {
  for (CopyToLocalOp copy : shape.copies) {
    SmallVector<Operation *> slice;
    for (Value index : copy.getIndices())
      (void)collectIndexSlice(index, loop, slice);
    IRMapping at;
    at.map(loop.getInductionVar(), k);
    at.map(copy.getSlot(), slot);
    for (Operation *op : slice)
      b.clone(*op, at);
    b.clone(*copy, at);
  }
}

/// pipeline() for a loop whose operands are copied straight into LDS: the
/// same two slots and one barrier per step, without registers staging the
/// tiles:
///
///   prologue: copy(slot 0, lb); copy(slot 1, lb + step); wait; barrier
///             r = local_load(slot 0)
///   loop:     wait; barrier              step k + 1's slot written by all
///             copy(this step's slot, k + 2 step)
///             r' = local_load(next slot)
///             acc = dot(r, acc)
///
/// The copies of step k + 2 are issued first and are in flight while the
/// MFMAs of step k and the reads of step k + 1 run; they rewrite the slot
/// step k was read from, which every wave finished before the barrier.
/// (The backend would make each read wait for the copies in flight, which
/// it cannot tell apart from the slot read; scopeLdsReadsBesideCopies in
/// lib/Target stops that.)
static void pipelineCopies(scf::ForOp loop, CopyLoopShape &shape) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), step = loop.getStep();
  for (CopyToLocalOp copy : shape.copies)
    doubleSlots(copy.getBuffer());
  // Copies one and two steps ahead are clamped to the last step (copied
  // again, never read): the tiles are in bounds only up to it. In 32 bits:
  // a scalar compare where the index one was a VALU one.
  Value lastStep = arith::SubIOp::create(b, loc, loop.getUpperBound(), step);
  auto clamp = [&](Value k) -> Value {
    return minIndexIn32Bits(b, loc, k, lastStep);
  };
  auto loadOperands = [&](Value slot) {
    return readOperandsAt(b, shape.localLoads, slot);
  };
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  // Inside another loop (stream-K's loop over tiles) the previous outer
  // iteration's last reads of the slots come before these copies.
  if (loop->getParentOfType<scf::ForOp>())
    gpu::BarrierOp::create(b, loc);
  cloneCopiesAt(b, loop, shape, lb, zero);
  cloneCopiesAt(b, loop, shape, clamp(arith::AddIOp::create(b, loc, lb, step)),
                one);
  WaitCopiesOp::create(b, loc);
  gpu::BarrierOp::create(b, loc);
  SmallVector<Value> operands = loadOperands(zero);

  SmallVector<Value> inits(loop.getInitArgs());
  unsigned numOld = inits.size();
  inits.append(operands);
  // The slot step k + 1 is in, flipped every step (see pipeline()).
  inits.push_back(one);
  auto pipelined =
      scf::ForOp::create(b, loc, lb, loop.getUpperBound(), step, inits);
  b.setInsertionPointToStart(pipelined.getBody());
  Value newIv = pipelined.getInductionVar();
  ValueRange iters = pipelined.getRegionIterArgs();
  ValueRange operandIters = iters.slice(numOld, operands.size());
  Value nextSlot = iters.back();
  WaitCopiesOp::create(b, loc);
  gpu::BarrierOp::create(b, loc);
  Value freeSlot = arith::SubIOp::create(b, loc, one, nextSlot);
  Value twoSteps = arith::MulIOp::create(b, loc, step, two);
  cloneCopiesAt(b, loop, shape,
                clamp(arith::AddIOp::create(b, loc, newIv, twoSteps)),
                freeSlot);
  SmallVector<Value> nextOperands = loadOperands(nextSlot);

  DenseSet<Operation *> replaced(shape.copies.begin(), shape.copies.end());
  replaced.insert(shape.wait);
  replaced.insert(shape.before);
  replaced.insert(shape.after);
  SmallVector<Value> yields = cloneRestOfStep(
      b, loop, pipelined, numOld, shape.localLoads, operandIters, replaced);
  yields.append(nextOperands);
  yields.push_back(freeSlot);
  scf::YieldOp::create(b, loc, yields);
  bool even = loop->hasAttr(kEvenTripCountAttrName);
  bool batched = llvm::any_of(shape.copies, [](CopyToLocalOp copy) {
    return copy.getSource().getType().getRank() > 2;
  });
  loop->replaceAllUsesWith(pipelined->getResults().take_front(numOld));
  loop.erase();
  unrollPipelinedLoop(pipelined, numOld, operands.size(), batched, even);
}

/// Moves the constants of `loop`'s body in front of it.
static void hoistConstants(scf::ForOp loop) {
  for (Operation &op :
       llvm::make_early_inc_range(loop.getBody()->without_terminator()))
    if (isa<arith::ConstantOp>(op))
      op.moveBefore(loop);
}

/// The start of `loop`'s last iteration, lb + ((ub - lb - 1) / step) *
/// step (ub - step only when the range is a whole number of steps), built
/// in front of the loop. The prefetches inside the loop clamp to it, so
/// that their loads stay in bounds (`in_bounds`): the last iteration loads
/// its own block again and never uses it. The value is only used inside
/// the loop, which then runs.
/// With `end`, the last step of [lb, end) instead (a loop that continues
/// this one: see KeyLoopChain).
static Value getLastStepStart(OpBuilder &b, scf::ForOp loop,
                              Value end = Value()) {
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), step = loop.getStep();
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value span = arith::SubIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, end ? end : loop.getUpperBound(), lb), one);
  return arith::AddIOp::create(
      b, loc, lb,
      arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, span, step),
                            step));
}

/// The first op of `loop`'s body that uses an operand read from LDS (the
/// first product): the next step's loads go after it, where that operand's
/// registers are free again.
static Operation *getFirstOperandUse(scf::ForOp loop, LoopShape &shape) {
  for (Operation &op : loop.getBody()->without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) {
          return llvm::is_contained(shape.localLoads,
                                    v.getDefiningOp<LocalLoadOp>());
        }))
      return &op;
  return shape.after;
}

/// The last matrix product of a ping-pong loop's first product (the next
/// block's S^T: a dot whose B operand, Q, stays in registers for the whole
/// loop), or null.
static Operation *getLastFirstProductDot(scf::ForOp loop) {
  Operation *last = nullptr;
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto dot = dyn_cast<DotOp>(op))
      if (loop.isDefinedOutsideOfLoop(dot.getB()))
        last = &op;
  return last;
}

/// Whether a ping-pong loop's second product (O^T += V^T P^T, a dot whose
/// B operand is computed in the loop) reads its LDS operand with
/// transposing reads.
static bool readsSecondOperandTransposed(scf::ForOp loop) {
  for (auto dot : loop.getBody()->getOps<DotOp>()) {
    if (loop.isDefinedOutsideOfLoop(dot.getB()))
      continue;
    if (auto read = dot.getA().getDefiningOp<LocalLoadOp>())
      return read.getTransposed();
  }
  return false;
}

/// Ends `pipelined`'s body with `loop`'s yields (mapped by `mapping`) and
/// the carried `next` tiles, and replaces `loop` by it.
static void replacePipelinedLoop(OpBuilder &b, scf::ForOp loop,
                                 scf::ForOp pipelined, IRMapping &mapping,
                                 ArrayRef<Value> next) {
  SmallVector<Value> yields;
  for (Value value : loop.getBody()->getTerminator()->getOperands())
    yields.push_back(mapping.lookupOrDefault(value));
  yields.append(next.begin(), next.end());
  scf::YieldOp::create(b, loop.getLoc(), yields);
  loop->replaceAllUsesWith(
      pipelined->getResults().take_front(loop.getNumResults()));
  loop.erase();
}

/// Register prefetch with one LDS slot: step k + 1's tiles are loaded into
/// registers while step k computes and stored to the (single) slot at the
/// top of the next iteration. For loops whose LDS buffers already bound the
/// workgroups per CU (attention's key loop), where a second slot would cost
/// occupancy. Every load of `shape` is `in_bounds`.
static void prefetchIntoRegisters(scf::ForOp loop, LoopShape &shape) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  Value step = loop.getStep();
  Value iv = loop.getInductionVar();
  Value lastStep = getLastStepStart(b, loop);
  // The first step's tiles, before the loop: the loop may run no
  // iteration, so they are masked here.
  SmallVector<Value> first = cloneMaskedLoadsAt(b, loop, shape, lb);
  SmallVector<Value> inits(loop.getInitArgs());
  unsigned numOld = inits.size();
  inits.append(first);
  auto pipelined = scf::ForOp::create(b, loc, lb, ub, step, inits);
  Block *body = pipelined.getBody();
  b.setInsertionPointToStart(body);
  Value newIv = pipelined.getInductionVar();
  ValueRange iters = pipelined.getRegionIterArgs();
  IRMapping mapping;
  mapping.map(iv, newIv);
  for (unsigned i = 0; i < numOld; ++i)
    mapping.map(loop.getRegionIterArgs()[i], iters[i]);
  for (auto [index, load] : llvm::enumerate(shape.loads))
    mapping.map(load.getResult(), iters[numOld + index]);
  Operation *prefetchPoint = getFirstOperandUse(loop, shape);
  SmallVector<Value> next;
  auto prefetch = [&] {
    Value ahead = arith::AddIOp::create(b, loc, newIv, step);
    Value clamped = arith::MinUIOp::create(b, loc, ahead, lastStep);
    for (LoadOp load : shape.loads)
      next.push_back(cloneLoadAt(b, load, loop, clamped));
  };
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (llvm::is_contained(shape.loads, dyn_cast<LoadOp>(op)))
      continue;
    b.clone(op, mapping);
    if (&op == prefetchPoint)
      prefetch();
  }
  replacePipelinedLoop(b, loop, pipelined, mapping, next);
}

/// The registers a lane holds of `loop`'s tile iteration arguments (an
/// attention key loop's O^T accumulators and row statistics).
static int64_t getCarriedTileRegisters(scf::ForOp loop) {
  int64_t registers = 0;
  for (Value value : loop.getRegionIterArgs())
    if (isa<RankedTensorType>(value.getType()))
      registers += registersPerLane(value.getType());
  return registers;
}

/// Past this many carried registers a lane, an attention kernel with masked
/// loops keeps the padded loads of its loop over whole key blocks
/// unpipelined (isPipelinedKeyLoop).
constexpr int64_t kMaxCarriedRegistersForPaddedPrefetch = 96;

/// Whether tessel-pipeline pipelines attention key loop `loop`: not one of
/// the masked loops that load their own blocks (they run a block or two per
/// workgroup and hold their masks in scalar registers). Its loads may be
/// masked along a padded head dim (not `in_bounds`): masks keep every
/// access inside the arrays wherever the prefetched block lands, so they
/// are prefetched as in-bounds ones are (gfx942 f16 head dim 80: 53.0 ->
/// 70.6 %, docs/performance.md, "Padded head dims pipelined"). Except in a
/// kernel that also has masked loops and whose loop carries more than
/// kMaxCarriedRegistersForPaddedPrefetch registers a lane: there the
/// prefetched tiles spilled (gfx942 bf16 head dim 200, causal: 272 VGPRs
/// and 16 AGPRs, 57.7 -> 40.3 %). A ping-pong loop is pipelined whatever it
/// carries: the two halves of its waves meet only at the barriers of the
/// pipelined loop.
static bool isPipelinedKeyLoop(scf::ForOp loop, const LoopShape &shape) {
  if (loop->hasAttr(kOwnLoadsAttrName))
    return false;
  if (isPingPongLoop(loop) ||
      llvm::all_of(shape.loads, [](LoadOp load) { return load.getInBounds(); }))
    return true;
  bool maskedLoops = false;
  loop->getParentOfType<func::FuncOp>().walk([&](scf::ForOp other) {
    maskedLoops |= other->hasAttr(kOwnLoadsAttrName);
  });
  return !maskedLoops ||
         getCarriedTileRegisters(loop) <= kMaxCarriedRegistersForPaddedPrefetch;
}

namespace {
/// Two attention key loops run as one pipeline (kContinuesKeyLoopAttrName):
/// what the first, double-buffered, hands to the second.
struct KeyLoopChain {
  Value slotBase;               // the first loop's lower bound
  SmallVector<Value> carried;   // its loaded tiles (and rotating slots)
  Operation *catchUp = nullptr; // its `phase_barrier half 0`, if any
};
} // namespace

/// The loop after `loop` in its block that continues its steps, if the two
/// can run as one pipeline: the same step, its lower bound `loop`'s upper
/// bound, its upper bound known in front of `loop`, and a body
/// tessel-pipeline recognizes.
static scf::ForOp getContinuation(scf::ForOp loop) {
  scf::ForOp next;
  for (Operation *op = loop->getNextNode(); op && !next; op = op->getNextNode())
    next = dyn_cast<scf::ForOp>(op);
  if (!next || !next->hasAttr(kContinuesKeyLoopAttrName) ||
      next.getLowerBound() != loop.getUpperBound() ||
      getConstantIntValue(next.getStep()) !=
          getConstantIntValue(loop.getStep()) ||
      isPingPongLoop(next) != isPingPongLoop(loop))
    return {};
  Operation *end = next.getUpperBound().getDefiningOp();
  if (end && end->getBlock() == loop->getBlock() && !end->isBeforeInBlock(loop))
    return {};
  std::optional<LoopShape> shape = matchLoop(next);
  if (!shape || shape->loads.size() != matchLoop(loop)->loads.size() ||
      !isPipelinedKeyLoop(next, *shape))
    return {};
  return next;
}

/// Whether ping-pong key loop `loop` is unrolled by its slot count: where
/// its matrix instructions are 16 deep in K (gfx950), whose first product's
/// operand reads all go ahead of its MFMAs. Measured on gfx942's 8-deep
/// instructions (head dim 64), the unrolled loop lost (75.6 -> 68.4 %
/// structural efficiency by the model): with fewer instructions a block,
/// the backend scheduled each exponential right behind the product that
/// feeds it (docs/performance.md, "Ping-pong key loops unrolled by their
/// slots").
static bool unrollsPingPongLoop(scf::ForOp loop) {
  bool deep = false;
  loop.walk([&](DotOp dot) {
    if (auto acc =
            dyn_cast_or_null<MmaAttr>(dot.getC().getType().getEncoding()))
      deep |= acc.getInstruction().k >= 16;
  });
  return deep;
}

/// Unrolls the key loop `loop` by `factor` (MLIR's loopUnrollByFactor; the
/// iterations left over run in a rolled loop after it) and marks the
/// function kKeyLoopUnrollAttrName for the performance model, which splits
/// the blocks between the two loops. `onMain` adjusts the unrolled loop.
/// Returns the values that replace `loop`'s results.
static SmallVector<Value>
unrollKeyLoop(scf::ForOp loop, int64_t factor,
              function_ref<void(scf::ForOp)> onMain = nullptr) {
  // The unrolling may inline a loop of one iteration: a placeholder use
  // follows the results to whatever replaces them.
  OpBuilder b(loop->getContext());
  b.setInsertionPointAfter(loop);
  auto results = UnrealizedConversionCastOp::create(
      b, loop.getLoc(), TypeRange(), loop.getResults());
  auto function = loop->getParentOfType<func::FuncOp>();
  FailureOr<UnrolledLoopInfo> unrolled = loopUnrollByFactor(loop, factor);
  if (succeeded(unrolled))
    function->setAttr(kKeyLoopUnrollAttrName, b.getI64IntegerAttr(factor));
  if (succeeded(unrolled) && unrolled->mainLoopOp && onMain)
    onMain(*unrolled->mainLoopOp);
  SmallVector<Value> values(results.getInputs());
  results->erase();
  return values;
}

/// Unrolls a ping-pong key loop `loop`, whose last two iteration arguments
/// are the slots it reads and writes, by its slot count: each copy then
/// reads and writes constant slots, whose bases fold into the LDS
/// instructions' offset fields after the swizzle, where a rotating slot
/// cost an address computation per access every iteration (gfx950's
/// head-dim-128 loop: 14 of its 80 VALU instructions). The rotation
/// returns to the slots the loop starts with (0 and slots - 1) after
/// `slots` steps, so every iteration of the unrolled loop starts with them.
/// The iterations left over run in a rolled loop after it, which takes the
/// slots the unrolled one ends with. (Without a main loop, its one
/// iteration was inlined with the initial slots.)
static SmallVector<Value> unrollBySlots(scf::ForOp loop, int64_t slots) {
  return unrollKeyLoop(loop, slots, [](scf::ForOp main) {
    for (unsigned i = main.getNumRegionIterArgs() - 2;
         i < main.getNumRegionIterArgs(); ++i)
      main.getRegionIterArgs()[i].replaceAllUsesWith(main.getInitArgs()[i]);
  });
}

/// Attention's key loop with two LDS slots (stages >= 3): step k reads its
/// K and V^T from slot k % 2 and, once its first product has used its
/// operands, writes step k + 1's tiles (loaded a step earlier) into the
/// other slot and loads step k + 2's. One barrier per step, at its top:
///
///   prologue: g = load(lb); local_store(slot 0, g); g' = load(lb + step)
///   loop:     barrier; r = local_load(slot k % 2); s = dot(r.k, ...)
///             local_store(slot (k + 1) % 2, g'); g'' = load(k + 2 step)
///             ...                        softmax, second product
///
/// The barrier orders step k - 1's writes of slot k % 2 before step k's
/// reads, and step k - 1's reads of the other slot before step k's writes
/// to it. A global load has a whole step to arrive before its store, and
/// the barrier no longer waits for the stores. The slot of a four-wave
/// loop is a run-time value: unrolled by two for constant slots, the loop
/// held both steps' values at once and spilled (gfx942 head dim 128: 25
/// VGPRs). A ping-pong loop's phase barriers keep its steps apart, and on
/// gfx950 it is unrolled by its slots (unrollBySlots).
///
/// A ping-pong loop (`tessel.phase_barrier`s in its body) keeps no barrier
/// at its top: its phase barriers order the accesses. A wave's matrix phase
/// holds the step's LDS reads and writes (the reads of slot k % 2, then
/// the writes of the other after the first product), its softmax phase
/// none, and the two halves of the waves run their matrix phases in turn,
/// a barrier between each: every access of one half's phase comes after
/// the other half's previous phase and before its next.
///
/// With `stages = 4` a ping-pong loop keeps three slots, rotated as two
/// loop-carried indices: step k reads slot k % 3 and writes step k + 2's
/// tiles into slot (k + 2) % 3; each step's K is read at the top of the
/// iteration (the softmax phase), since the other half's matrix phase
/// writes only the slot of the block after next.
///
/// `continuation`: the loop after this one that continues its steps (its
/// last steps load and store that loop's first blocks). `chain`: this loop
/// continues an earlier one, whose slots and loaded tiles it takes over
/// (no prologue). A ping-pong loop that continues none is unrolled by its
/// slot count (unrollBySlots). A four-wave loop that continues none is
/// unrolled by two with `unrollByTwo` (the config's `unrolled`): its slots
/// follow from the induction variable, so the copies keep them as they are;
/// what the unrolling removes is the copy of the next block's S^T into the
/// loop-carried registers. Returns the values that replace `loop`'s
/// results, followed by its loaded tiles (and rotating slots).
static SmallVector<Value> doubleBufferKeyLoop(scf::ForOp loop, LoopShape &shape,
                                              int64_t stages, bool unrollByTwo,
                                              scf::ForOp continuation,
                                              const KeyLoopChain *chain) {
  // A ping-pong loop (phase barriers in its body) has the upper half of
  // the waves wait at a barrier right in front of it: the prologue's
  // stores go before that barrier, so that the lower half's first reads
  // (after its first phase barrier, which meets that one) see them.
  // (Constants hoisted out of the loop may sit between the two.)
  Operation *before = loop->getPrevNode();
  while (before && isa<arith::ConstantOp>(before))
    before = before->getPrevNode();
  auto stagger = dyn_cast_or_null<PhaseBarrierOp>(before);
  if (stagger && !stagger.getHalf())
    stagger = {};
  bool phased = isPingPongLoop(loop);
  // The loop that begins the pipeline (over whole key blocks) is unrolled:
  // a ping-pong one by its slots where its instructions are 16 deep in K
  // (unrollBySlots), a four-wave one by two where the config asks for it.
  // (`loop` is erased once the pipelined loop replaces it.)
  bool beginsPipeline = !chain && !loop->hasAttr(kContinuesKeyLoopAttrName);
  bool unrolls = phased && beginsPipeline && unrollsPingPongLoop(loop);
  bool unrollsByTwo = unrollByTwo && !phased && beginsPipeline;
  // A ping-pong loop with stages = 4 keeps three slots: a wave reads its
  // block's K (the first product's operand) in its softmax phase, while the
  // other half's matrix phase writes the slot of the block after next.
  int64_t slots = phased && stages >= 4 ? 3 : 2;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
  Value step = loop.getStep();
  Value iv = loop.getInductionVar();
  for (LocalStoreOp store : shape.stores)
    setSlots(store.getBuffer(), slots);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  Value slotCount =
      slots == 2 ? two
                 : arith::ConstantIndexOp::create(b, loc, slots).getResult();
  // The slots a ping-pong loop (or one of three slots) reads and writes
  // rotate as two loop-carried scalars; a two-slot loop of four waves
  // derives them from its induction variable.
  bool carriedSlots = phased || slots > 2;
  Value lastSlot =
      slots == 2
          ? one
          : arith::ConstantIndexOp::create(b, loc, slots - 1).getResult();
  // Step k's first block: lb + k * step.
  auto stepAt = [&](int64_t k) -> Value {
    if (k == 0)
      return lb;
    Value offset =
        k == 1 ? step
               : arith::MulIOp::create(
                     b, loc, step, arith::ConstantIndexOp::create(b, loc, k))
                     .getResult();
    return arith::AddIOp::create(b, loc, lb, offset);
  };
  Value lastStep = getLastStepStart(
      b, loop, continuation ? continuation.getUpperBound() : Value());
  // Before the loop, which may run no step (or one), the loads are masked.
  auto maskedLoadAt = [&](Value k) {
    return cloneMaskedLoadsAt(b, loop, shape, k);
  };
  // The accesses at a run-time slot share address registers
  // (kLdsSharedAddressesAttrName).
  auto storeAll = [&](ValueRange tiles, Value slot) {
    for (LocalStoreOp store : shape.stores) {
      auto it =
          llvm::find(shape.loads, store.getValue().getDefiningOp<LoadOp>());
      auto write = LocalStoreOp::create(b, store.getLoc(),
                                        tiles[it - shape.loads.begin()],
                                        store.getBuffer(), slot);
      if (!matchPattern(slot, m_Constant()))
        write->setAttr(kLdsSharedAddressesAttrName, b.getUnitAttr());
    }
  };
  SmallVector<Value> inits(loop.getInitArgs());
  unsigned numOld = inits.size();
  if (chain) {
    // The first loop left this one's first block in the slot after its
    // last and loaded the next: the halves of a ping-pong workgroup stay a
    // phase apart from one loop into the other (the barriers only one half
    // waits at between them go).
    inits.append(chain->carried);
    if (stagger && chain->catchUp) {
      stagger->erase();
      chain->catchUp->erase();
    }
  } else {
    // Reads of the slots before the loop (a masked loop over a window's
    // left edge, stream-K's previous query block) come before this store.
    gpu::BarrierOp::create(b, loc);
    storeAll(maskedLoadAt(lb), zero);
    for (int64_t k = 1; k + 1 < slots; ++k)
      storeAll(maskedLoadAt(stepAt(k)),
               arith::ConstantIndexOp::create(b, loc, k));
    // The lower half reads its first K before any barrier the upper half
    // waits at: every wave's stores come first.
    if (slots > 2)
      gpu::BarrierOp::create(b, loc);
    inits.append(maskedLoadAt(stepAt(slots - 1)));
    // Carried slots start at the read slot 0 and the written slot
    // slots - 1 (a division by 3 of the step index took 12 scalar
    // instructions an iteration).
    if (carriedSlots)
      inits.append({zero, lastSlot});
    if (stagger)
      stagger->moveBefore(loop);
  }
  auto pipelined = scf::ForOp::create(b, loc, lb, ub, step, inits);
  b.setInsertionPointToStart(pipelined.getBody());
  Value newIv = pipelined.getInductionVar();
  ValueRange iters = pipelined.getRegionIterArgs();
  // The slot step k reads, and the one the carried tiles (of step k +
  // slots - 1) go to.
  Value slot, nextSlot;
  SmallVector<Value> rotatedSlots;
  if (!carriedSlots) {
    Value index = arith::DivUIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, newIv, chain ? chain->slotBase : lb),
        step);
    slot = arith::RemUIOp::create(b, loc, index, two);
    nextSlot = arith::SubIOp::create(b, loc, one, slot);
  } else {
    slot = iters[iters.size() - 2];
    nextSlot = iters.back();
    Value after = arith::AddIOp::create(b, loc, slot, one);
    Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, after,
                                        slotCount);
    rotatedSlots = {arith::SelectOp::create(b, loc, wraps, zero, after), slot};
  }
  // The phase barriers order a ping-pong loop's LDS accesses: each half's
  // matrix phase reads the block's slot and writes the other, and the two
  // halves' matrix phases alternate with a barrier between them.
  if (!phased)
    gpu::BarrierOp::create(b, loc);
  IRMapping mapping;
  mapping.map(iv, newIv);
  for (unsigned i = 0; i < numOld; ++i)
    mapping.map(loop.getRegionIterArgs()[i], iters[i]);
  // A ping-pong loop writes and loads in its matrix phase, its LDS stores
  // between the two products, where they complete under the second
  // product's MFMAs instead of holding up the barrier that closes the phase
  // (docs/performance.md, "Ping-pong stores between the products"). With
  // three slots the loads go there too (the phase reads only V^T from LDS,
  // its K was read in the softmax phase); with two they stay at the phase's
  // end, after the second product, whose MFMAs then run as one cluster
  // without the loads' address arithmetic and waits among them. Where the
  // second product's V^T is read with transposing LDS reads (gfx950), the
  // stores stay at the end as well: between the products they measured
  // slower there (head dim 64, 63.7 -> 62.5 %). The slot written is read by
  // neither half until a later phase either way.
  Operation *writePoint = getFirstOperandUse(loop, shape);
  Operation *storePoint = nullptr;
  if (phased) {
    auto barriers = loop.getBody()->getOps<PhaseBarrierOp>();
    Operation *last = *std::prev(barriers.end());
    writePoint = last->getPrevNode();
    Operation *firstProductEnd = getLastFirstProductDot(loop);
    if (firstProductEnd && slots > 2)
      writePoint = firstProductEnd;
    else if (firstProductEnd && !readsSecondOperandTransposed(loop))
      storePoint = firstProductEnd;
  }
  if (!storePoint)
    storePoint = writePoint;
  auto cloneRead = [&](LocalLoadOp localLoad) {
    auto read = LocalLoadOp::create(b, localLoad.getLoc(), localLoad.getType(),
                                    localLoad.getBuffer(), slot,
                                    localLoad.getTransposed());
    read->setAttr(kLdsSharedAddressesAttrName, b.getUnitAttr());
    mapping.map(localLoad.getResult(), read.getResult());
  };
  // With three slots, the first product's operand read from LDS (K, whose
  // product's other operand stays in registers for the whole loop) is read
  // in the softmax phase, ahead of the barrier that opens the matrix phase.
  auto readsEarly = [&](LocalLoadOp load) {
    return slots > 2 && llvm::any_of(load->getUsers(), [&](Operation *user) {
             auto dot = dyn_cast<DotOp>(user);
             return dot && dot.getA() == load.getResult() &&
                    loop.isDefinedOutsideOfLoop(dot.getB());
           });
  };
  bool readEarly = false;
  for (LocalLoadOp load : loop.getBody()->getOps<LocalLoadOp>())
    if (readsEarly(load)) {
      cloneRead(load);
      readEarly = true;
    }
  // A scheduling barrier keeps them at the top of the softmax phase, where
  // their latency hides under the whole phase: the backend's scheduler
  // moved six of gfx950's eight K reads at head dim 128 behind the phase's
  // exponentials (docs/performance.md, "K read in the softmax phase").
  if (readEarly && phased)
    amdgpu::SchedBarrierOp::create(b, loc,
                                   amdgpu::sched_barrier_opt_enum::none);
  SmallVector<Value> next;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (llvm::is_contained(shape.loads, dyn_cast<LoadOp>(op)) ||
        llvm::is_contained(shape.stores, dyn_cast<LocalStoreOp>(op)) ||
        &op == shape.before.getOperation() || &op == shape.after.getOperation())
      continue;
    if (auto localLoad = dyn_cast<LocalLoadOp>(op)) {
      if (!readsEarly(localLoad))
        cloneRead(localLoad);
    } else {
      b.clone(op, mapping);
    }
    // (A scheduling barrier keeps the stores and the loads where they are.)
    if (&op == storePoint) {
      if (phased)
        amdgpu::SchedBarrierOp::create(b, loc,
                                       amdgpu::sched_barrier_opt_enum::none);
      storeAll(iters.drop_front(numOld), nextSlot);
    }
    if (&op != writePoint)
      continue;
    if (phased && storePoint != writePoint)
      amdgpu::SchedBarrierOp::create(b, loc,
                                     amdgpu::sched_barrier_opt_enum::none);
    Value ahead = arith::AddIOp::create(
        b, loc, newIv, arith::MulIOp::create(b, loc, step, slotCount));
    // In 32 bits in a ping-pong loop (a scalar compare instead of a VALU
    // one in its matrix phase); the four-wave loops keep the index compare,
    // whose schedules measured mixed (docs/performance.md, "Ping-pong
    // attention").
    Value clamped =
        phased ? minIndexIn32Bits(b, loc, ahead, lastStep)
               : arith::MinUIOp::create(b, loc, ahead, lastStep).getResult();
    for (LoadOp load : shape.loads)
      next.push_back(cloneLoadAt(b, load, loop, clamped));
  }
  next.append(rotatedSlots);
  replacePipelinedLoop(b, loop, pipelined, mapping, next);
  if (unrolls)
    return unrollBySlots(pipelined, slots);
  if (unrollsByTwo)
    return unrollKeyLoop(pipelined, 2);
  return pipelined.getResults();
}

namespace {
struct PipelinePass
    : public tessel::impl::TesselPipelinePassBase<PipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    auto config = getOperation()->getAttrOfType<ConfigAttr>("tessel.config");
    if (!config || config.getStages() < 2)
      return;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    // Attention kernels (tile = [M, N]) take their own forms: the register
    // prefetch with one slot (stages = 2), whose LDS already bounds the
    // workgroups per CU, or the double buffer (stages >= 3).
    bool attention = config.getTile().size() == 2;
    llvm::DenseMap<Operation *, KeyLoopChain> chains;
    for (scf::ForOp loop : loops) {
      // The tiler leaves the loads' constant indices inside the loop.
      if (attention)
        hoistConstants(loop);
      if (!attention) {
        if (std::optional<CopyLoopShape> copyShape = matchCopyLoop(loop)) {
          pipelineCopies(loop, *copyShape);
          ++numPipelined;
          continue;
        }
      }
      std::optional<LoopShape> shape = matchLoop(loop);
      if (!shape)
        continue;
      if (attention && !isPipelinedKeyLoop(loop, *shape))
        continue;
      if (attention && config.getStages() >= 3) {
        scf::ForOp continuation = getContinuation(loop);
        auto chain = chains.find(loop);
        Value lb = loop.getLowerBound();
        unsigned numResults = loop.getNumResults();
        Operation *after = loop->getNextNode();
        while (after && isa<arith::ConstantOp>(after))
          after = after->getNextNode();
        auto catchUp = dyn_cast_or_null<PhaseBarrierOp>(after);
        SmallVector<Value> results = doubleBufferKeyLoop(
            loop, *shape, config.getStages(), config.getUnrolled(),
            continuation, chain == chains.end() ? nullptr : &chain->second);
        if (continuation) {
          KeyLoopChain &next = chains[continuation];
          next.slotBase = lb;
          llvm::append_range(next.carried,
                             ArrayRef(results).drop_front(numResults));
          if (catchUp && catchUp.getHalf() && *catchUp.getHalf() == 0)
            next.catchUp = catchUp;
        }
      } else if (attention)
        prefetchIntoRegisters(loop, *shape);
      else
        pipeline(loop, *shape);
      ++numPipelined;
    }
  }
};
} // namespace
