//===- LowerToGPU.cpp - Tile programs (L1) to GPU kernels (L2) --*- C++ -*-===//
//
// Each tile value becomes the vector of the elements the current lane holds:
// element r is register r of its layout, whose tile coordinates are
// layout(r, lane, wave). Since layouts are linear over GF(2), the
// coordinates are the XOR of a lane/wave part, computed once per layout at
// the top of the kernel, and a constant per register.
//
//===----------------------------------------------------------------------===//

#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Hsaco.h"

#include "mlir/Conversion/ArithToAMDGPU/ArithToAMDGPU.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

namespace tessel {
#define GEN_PASS_DEF_TESSELLOWERTOGPUPASS
#include "tessel/Conversion/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

namespace {

struct GlobalAccess;

/// A layout's per-lane part: the coordinates (or LDS offset) of register 0
/// for the current lane, and the constant part of each register.
struct LaneMap {
  LinearLayout layout;
  SmallVector<Value> laneCoords; // index values, one per output dimension
};

/// Lowers the body of one tile program into a gpu.func.
class KernelLowering {
public:
  KernelLowering(gpu::GPUFuncOp kernel, const Chip &chip)
      : kernel(kernel), chip(chip), b(kernel.getContext()) {}

  LogicalResult lower(func::FuncOp function);

private:
  /// Zero accumulators of the kernel's K loops (zeroPlacement) not created
  /// yet: they are written by the matrix pipe once the prologue's first
  /// global loads are issued.
  SmallVector<std::pair<Value, VectorType>> pendingZeroAccumulators;
  /// Zero accumulators that start a loop nested in another (zeroPlacement),
  /// by their lowered type: that loop takes a zero the matrix pipe writes
  /// right before it; their other uses (dots' C) keep the constant.
  DenseMap<Value, VectorType> loopStartZeros;
  Location loc() { return currentLoc; }
  Value constIndex(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc(), value);
  }
  Value xorIndex(Value lhs, int64_t constant) {
    if (constant == 0)
      return lhs;
    return arith::XOrIOp::create(b, loc(), lhs, constIndex(constant));
  }
  /// The LDS access of a register at `regOffset` from `start` (the lane's
  /// offset of register 0, plus the slot's base unless `slotBase` carries
  /// it), start XOR regOffset, plus `slotBase` if given. Where a
  /// wave has no AGPRs (the WMMA chips), as a view of `memory` at (start XOR
  /// the bits some lane or wave also sets) and a constant index, the other
  /// bits: the backend folds the constant into the LDS instruction's offset
  /// field, so registers that differ only in those bits share one address
  /// register instead of each holding its own across a loop (a gfx1100
  /// attention at head dim 128 takes 49 fewer VGPRs). The CDNA chips keep
  /// one address per register: with their 512 registers the backend
  /// schedules that form's loops better by the performance model
  /// (docs/performance.md). `shareAddresses` asks for the shared form on
  /// CDNA too: transposing reads, twice as many as 16-byte ones, whose
  /// addresses the backend otherwise recomputed in the loop (gfx950 NN
  /// 128x128x64: 57 VALU per iteration), and accesses marked
  /// kLdsSharedAddressesAttrName.
  std::pair<Value, Value> ldsAccess(Value memory, Value start,
                                    int64_t regOffset, int64_t laneBits,
                                    bool shareAddresses = false,
                                    Value slotBase = {}) {
    auto plusSlot = [&](Value offset) -> Value {
      return slotBase
                 ? arith::AddIOp::create(b, loc(), slotBase, offset).getResult()
                 : offset;
    };
    if (chip.maxAccVgprs > 0 && !shareAddresses)
      return {memory, plusSlot(xorIndex(start, regOffset))};
    auto type = cast<MemRefType>(memory.getType());
    Value offset = plusSlot(xorIndex(start, regOffset & laneBits));
    auto viewType = MemRefType::get(
        type.getShape(), type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}),
        type.getMemorySpace());
    Value view = memref::ReinterpretCastOp::create(
        b, loc(), viewType, memory, OpFoldResult(offset),
        ArrayRef<OpFoldResult>{b.getIndexAttr(type.getDimSize(0))},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    return {view, constIndex(regOffset & ~laneBits)};
  }
  /// The slot size of `buffer` where `slot` is a constant (a K loop
  /// unrolled by its slot count), else 0. The base of a constant slot added
  /// after the swizzle folds into the LDS instruction's offset field, and
  /// each access keeps one address register instead of one per slot. A
  /// slot that changes from one iteration to the next (a rolled loop)
  /// keeps its base inside the swizzle: added after it, every access
  /// would hold its own loop-invariant address register, which spilled
  /// gfx950's 256x256 GEMM (docs/performance.md, "Constant LDS slots:
  /// the base after the swizzle").
  int64_t constantSlotElements(Value slot, LdsType buffer) {
    return matchPattern(mapping.lookup(slot), m_Constant())
               ? buffer.getSlotElements()
               : 0;
  }
  /// Whether the base of a slot of `slotElements` elements (a multiple of
  /// the slot size) shares no bit with any offset `toOffset` gives: then
  /// (base + lane) XOR reg equals base + (lane XOR reg). Every offset is an
  /// XOR of some of the layout's bases, so none exceeds their OR. LdsType's
  /// verifier makes slots powers of two and the layouts bijections onto a
  /// slot, so this holds for every slot; the check keeps the rewrite exact
  /// should that change.
  static bool slotBaseAddsAfterSwizzle(const LinearLayout &toOffset,
                                       int64_t slotElements) {
    if (slotElements <= 0 || !llvm::isPowerOf2_64(slotElements))
      return false;
    int64_t bits = 0;
    for (const LinearLayout::InDim &in : toOffset.getInDims())
      for (const auto &basis : in.bases)
        bits |= basis[0];
    return bits < slotElements;
  }
  /// The start of a lane's LDS accesses (the lane's offset of register 0)
  /// and the slot base ldsAccess adds after the swizzle; or, where the
  /// base may not join after it, the start with the base included and no
  /// slot base.
  std::pair<Value, Value> accessStart(const LinearLayout &toOffset, Value base,
                                      int64_t slotElements) {
    Value laneOffset = laneCoordinates(toOffset)[0];
    if (slotBaseAddsAfterSwizzle(toOffset, slotElements))
      return {laneOffset, base};
    return {arith::AddIOp::create(b, loc(), base, laneOffset), Value()};
  }
  /// The bits of output `dim` (the offset of an LDS layout) that some lane
  /// or wave of `toOffset` sets.
  static int64_t laneOffsetBits(const LinearLayout &toOffset,
                                unsigned dim = 0) {
    int64_t bits = 0;
    for (StringRef name : {dims::kLane, dims::kWave})
      for (int32_t bit = 0; bit < toOffset.getInDimSizeLog2(name); ++bit)
        bits |= toOffset.getBasis(name, bit)[dim];
    return bits;
  }
  VectorType vectorTypeOf(RankedTensorType type, const LinearLayout &layout) {
    return VectorType::get({layout.getInDimSize(dims::kRegister)},
                           type.getElementType());
  }

  /// The lane part of `layout`: coordinates of register 0, built at the top
  /// of the kernel.
  SmallVector<Value> laneCoordinates(const LinearLayout &layout);
  /// Predicate "this lane is the one that writes", for layouts in which
  /// several lanes hold the same elements: their distinguishing bits are 0.
  Value canonicalHolder(const LinearLayout &layout);

  LogicalResult lowerBlock(Block &source);
  LogicalResult lowerOp(Operation &op);
  LogicalResult lowerLoad(LoadOp op);
  /// Whether loads of tiles of `tileShape` from `memref`, and its masked
  /// stores, go through a buffer resource. Transposed views of an
  /// argument only `throughViews` (kScalarOriginAttrName loads).
  bool usesBufferResource(Value memref, ArrayRef<int64_t> tileShape,
                          bool throughViews = false);
  /// One vector (or element, when `access.vector` is 1) at `viewIndices` of
  /// `access.view` through a buffer resource; a false `valid` reads zeros.
  /// `constantOffset` elements are added to the offset as a constant.
  /// `sgprOffset` (elements, wave-uniform) goes into the instruction's
  /// scalar offset.
  Value loadFromBuffer(const GlobalAccess &access,
                       SmallVector<Value> viewIndices, Value valid,
                       Type element, int64_t constantOffset = 0,
                       Value sgprOffset = {});
  /// The element offset of `origin` in the static-strided `memref`, as an
  /// i32: the tile origin's part of every lane's offset.
  Value originOffset(Value memref, ArrayRef<Value> origin);
  /// Stores `slice` at `viewIndices` of `access.view` through a buffer
  /// resource; where `valid` is false the offset is past the buffer's end,
  /// and the hardware drops the store.
  void storeToBuffer(const GlobalAccess &access, SmallVector<Value> viewIndices,
                     Value valid, Value slice);
  /// `viewIndices` as the buffer's i32 indices, the outermost sent past
  /// the end where `valid` is false.
  SmallVector<Value> bufferIndices(const GlobalAccess &access,
                                   SmallVector<Value> viewIndices, Value valid);
  /// Whether the two innermost dimensions of `memref` (of `rank`) are
  /// nonzero, or null when the type proves it.
  Value nonEmptyCondition(Value memref, int64_t rank);
  LogicalResult lowerStore(StoreOp op);
  LogicalResult lowerLocalStore(LocalStoreOp op);
  LogicalResult lowerCopyToLocal(CopyToLocalOp op);
  LogicalResult lowerWaitCopies(WaitCopiesOp op);
  /// A raw buffer resource over `memref` (usesBufferResource's kind), built
  /// once after the lane computations, for the instructions the amdgpu
  /// dialect has no op for (buffer loads into LDS).
  Value bufferResourceOf(Value memref);
  /// The LDS address of element `index` of the workgroup memref `memory`
  /// as an LLVM pointer (the LDS side of a buffer load into LDS).
  Value ldsPointerAt(Value memory, Value index, Type element);
  /// The global-memory address of element `indices` of `memref` (its
  /// offset and strides applied) as an LLVM pointer.
  Value globalPointerAt(Value memref, ValueRange indices);
  LogicalResult lowerLocalLoad(LocalLoadOp op);
  LogicalResult lowerDot(DotOp op);
  vector::FromElementsOp loweredNextStepRead(DotOp dot, Value operand,
                                             scf::ForOp loop);
  bool pinStepSchedule(ArrayRef<Operation *> mfmas, bool unrolled);
  int64_t moveReadsAfterLastUse(vector::FromElementsOp next,
                                ArrayRef<int64_t> lastRead,
                                ArrayRef<Operation *> mfmas,
                                MutableArrayRef<int64_t> readsAfterMfma);
  Value zeroAccumulatorOnMatrixPipe(VectorType type);
  void emitPendingZeroAccumulators(ValueRange loopInits = {});
  /// A sched_barrier the backend's scheduler moves nothing across.
  void emitSchedFence() {
    amdgpu::SchedBarrierOp::create(b, loc(),
                                   amdgpu::sched_barrier_opt_enum::none);
  }
  /// The lowered start values of `op`: its zeros of the matrix pipe
  /// (pending ones, and loopStartZeros written right before it) and the
  /// mapped others.
  SmallVector<Value> lowerLoopInits(scf::ForOp op);
  LogicalResult lowerConvert(ConvertLayoutOp op);
  LogicalResult lowerFor(scf::ForOp op);
  LogicalResult lowerLoop(scf::ForOp op);
  /// Lowers `op` (marked kFreshLanesAttrName) with lane and wave ids read
  /// again before it, its lane coordinates computed from them there.
  LogicalResult lowerWithFreshLanes(scf::ForOp op);
  LLVM::LoopAnnotationAttr getTileLoopAnnotation();
  LogicalResult lowerIf(scf::IfOp op);
  LogicalResult lowerSplitArrive(SplitArriveOp op);
  LogicalResult lowerReduce(ReduceOp op);
  /// The reduction's per-lane partial results (`partial`, by the register
  /// that represents each) combined across the lanes that share the axis,
  /// then assembled in the reduced layout.
  LogicalResult finishReduce(ReduceOp op, const LinearLayout &layout,
                             const LinearLayout &reduced,
                             llvm::SmallMapVector<int64_t, Value, 16> partial,
                             llvm::function_ref<Value(Value, Value)> combine);
  /// `combine` (commutative) of the 32-bit `value` and the same register
  /// of the lane 32 away, with one v_permlane32_swap (gfx950).
  Value combineWithOtherHalf(Value value,
                             llvm::function_ref<Value(Value, Value)> combine);
  /// The f32 sum of the f16 elements `registers` of `halves`, a pair of
  /// neighbours at a time with `llvm.amdgcn.fdot2` (v_dot2_f32_f16).
  Value sumHalvesByPairs(Value halves, ArrayRef<int64_t> registers);
  LogicalResult lowerBroadcast(BroadcastOp op);
  LogicalResult lowerWaveAny(WaveAnyOp op);
  Value anyAboveBroadcastLimit(arith::CmpFOp cmp);
  LogicalResult lowerPhaseBarrier(PhaseBarrierOp op);
  LogicalResult lowerIota(IotaOp op);
  LogicalResult lowerElementwise(Operation &op);
  /// `lhs + rhs` (lane vectors of i32) as 64-bit adds of register pairs
  /// (kPairedAddAttrName), or null for vectors it does not take.
  Value lowerPairedAdd(Value lhs, Value rhs);
  LogicalResult lowerNativeTranscendental(Operation *op);
  FailureOr<bool> lowerIotaBound(arith::CmpIOp op);
  bool lowerSelectOnIotaBound(arith::SelectOp op);

  /// Stores `vector` (in `layout`) to LDS at the offsets of `toOffset`
  /// (register/lane/wave -> offset) from `base`, and loads back.
  /// `base` is the slot's first element; `slotElements` the slot size where
  /// the slot is a constant (its base then joins after the swizzle), else 0.
  void storeToLds(Value memory, Value base, Value vector,
                  const LinearLayout &toOffset, Type element,
                  bool shareAddresses = false, int64_t slotElements = 0);
  /// With `transposed`, `toOffset` is the address layout of transposing
  /// reads (getLdsAccessOffsets) and each four-element run is one
  /// ds_read_b64_tr_b16.
  Value loadFromLds(Value memory, Value base, const LinearLayout &toOffset,
                    VectorType type, bool transposed = false,
                    bool shareAddresses = false, int64_t slotElements = 0);
  FailureOr<LinearLayout> offsetsOf(Operation *op, RankedTensorType tile,
                                    LdsType buffer, bool transposed = false);

  gpu::GPUFuncOp kernel;
  const Chip &chip;
  OpBuilder b;
  Location currentLoc = UnknownLoc::get(kernel.getContext());
  IRMapping mapping;
  Value lane, wave;                 // index
  int64_t workgroupWaves = 1;       // tessel.workgroup_size in waves
  Operation *prologueEnd = nullptr; // last op of the lane computations
  DenseMap<Value, Value> ldsMemory; // local_alloc result -> workgroup memref
  /// An iota bound's tile -> its lowered complement (the elements out of
  /// bounds), for selects on it in kernels that keep scalar state around
  /// their key loops (lowerIotaBound).
  DenseMap<Value, Value> outOfBounds;
};

} // namespace

//===----------------------------------------------------------------------===//
// Lane parts of layouts
//===----------------------------------------------------------------------===//

SmallVector<Value> KernelLowering::laneCoordinates(const LinearLayout &layout) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(prologueEnd);
  SmallVector<Value> coords;
  for (unsigned d = 0; d < layout.getOutDims().size(); ++d) {
    Value coord = constIndex(0);
    for (auto [name, id] :
         {std::pair{dims::kLane, lane}, {dims::kWave, wave}}) {
      for (int32_t bit = 0; bit < layout.getInDimSizeLog2(name); ++bit) {
        int32_t basis = layout.getBasis(name, bit)[d];
        if (basis == 0)
          continue;
        // ((id >> bit) & 1) * basis
        Value shifted = arith::ShRUIOp::create(b, loc(), id, constIndex(bit));
        Value bitValue =
            arith::AndIOp::create(b, loc(), shifted, constIndex(1));
        Value term =
            arith::MulIOp::create(b, loc(), bitValue, constIndex(basis));
        coord = arith::XOrIOp::create(b, loc(), coord, term);
      }
    }
    coords.push_back(coord);
    prologueEnd = coord.getDefiningOp();
  }
  return coords;
}

Value KernelLowering::canonicalHolder(const LinearLayout &layout) {
  Value holder;
  for (auto [name, id] : {std::pair{dims::kLane, lane}, {dims::kWave, wave}}) {
    int64_t mask = 0;
    for (int32_t bit = 0; bit < layout.getInDimSizeLog2(name); ++bit)
      if (llvm::all_of(layout.getBasis(name, bit),
                       [](int32_t v) { return v == 0; }))
        mask |= int64_t(1) << bit;
    if (!mask)
      continue;
    Value bits = arith::AndIOp::create(b, loc(), id, constIndex(mask));
    Value zero = arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::eq, bits,
                                       constIndex(0));
    holder = holder ? arith::AndIOp::create(b, loc(), holder, zero).getResult()
                    : zero;
  }
  return holder;
}

/// The largest power-of-two run of registers 0..v-1 that `layout` maps to
/// consecutive positions along output `dim` (and nowhere else), with every
/// other basis a multiple of v along `dim`, up to `maxElements`.
static int64_t contiguousRun(const LinearLayout &layout, unsigned dim,
                             int64_t maxElements) {
  int64_t run = 1;
  int32_t registerBits = layout.getInDimSizeLog2(dims::kRegister);
  for (int32_t bit = 0; bit < registerBits && run * 2 <= maxElements; ++bit) {
    ArrayRef<int32_t> basis = layout.getBasis(dims::kRegister, bit);
    bool next = true;
    for (auto [d, value] : llvm::enumerate(basis))
      next &= d == dim ? value == (1 << bit) : value == 0;
    if (!next)
      break;
    run *= 2;
  }
  // Everything else must keep runs aligned.
  auto aligned = [&](ArrayRef<int32_t> basis) { return basis[dim] % run == 0; };
  while (run > 1) {
    bool ok = true;
    for (const LinearLayout::InDim &in : layout.getInDims())
      for (auto [bit, basis] : llvm::enumerate(in.bases))
        if (!(in.name == dims::kRegister && int64_t(1) << bit < run) &&
            !aligned(basis))
          ok = false;
    if (ok)
      break;
    run /= 2;
  }
  return run;
}

//===----------------------------------------------------------------------===//
// Global memory
//===----------------------------------------------------------------------===//

namespace {
/// The register bits whose bases step 1, 2, 4, ... along output `dim` (and
/// nowhere else), in that order, for a run of at most `maxElements`, with
/// every other basis a multiple of the run along `dim`: the registers
/// r | deposit(i, bits) for i < 2^bits.size() are one vector access. Unlike
/// contiguousRun, the bits need not be the lowest: a lane holding runs
/// along both dimensions of a tile (attention's V^T) stores its runs along
/// the second one, which LDS keeps contiguous.
static SmallVector<int32_t> contiguousRunBits(const LinearLayout &layout,
                                              unsigned dim,
                                              int64_t maxElements) {
  SmallVector<int32_t> bits;
  int32_t registerBits = layout.getInDimSizeLog2(dims::kRegister);
  auto isStep = [&](ArrayRef<int32_t> basis, int64_t step) {
    for (auto [d, value] : llvm::enumerate(basis))
      if (d == dim ? value != step : value != 0)
        return false;
    return true;
  };
  while ((int64_t(2) << bits.size()) <= maxElements) {
    int64_t step = int64_t(1) << bits.size();
    int32_t found = -1;
    for (int32_t bit = 0; bit < registerBits && found < 0; ++bit)
      if (isStep(layout.getBasis(dims::kRegister, bit), step))
        found = bit;
    if (found < 0)
      break;
    bits.push_back(found);
  }
  // Everything else must keep runs aligned.
  while (!bits.empty()) {
    int64_t run = int64_t(1) << bits.size();
    bool ok = true;
    for (const LinearLayout::InDim &in : layout.getInDims())
      for (auto [bit, basis] : llvm::enumerate(in.bases))
        if (!(in.name == dims::kRegister && llvm::is_contained(bits, bit)) &&
            basis[dim] % run != 0)
          ok = false;
    if (ok)
      break;
    bits.pop_back();
  }
  return bits;
}

/// Register `base` with element `i` of a run spread over register `bits`.
static int64_t runRegister(int64_t base, ArrayRef<int32_t> bits, int64_t i) {
  for (auto [position, bit] : llvm::enumerate(bits))
    if (i & (int64_t(1) << position))
      base |= int64_t(1) << bit;
  return base;
}

/// Addressing of a tile access to a memref: which dimension is contiguous,
/// how many elements one vector access covers, and the bounds.
struct GlobalAccess {
  int64_t rank;
  unsigned tileContiguous; // tile dimension along the memref's unit stride
  int64_t vector;          // elements per access
  SmallVector<Value> sizes;
  /// The memref to access, with the contiguous dimension last (a transposed
  /// view when it is the second to last), and whether it is transposed.
  Value view;
  bool transposed = false;
  /// The dimension of `view` with the largest size * stride: an index equal
  /// to its size is past the buffer's end (buffer loads only).
  unsigned outermost = 0;

  /// `indices` (in the memref's order) for the view.
  SmallVector<Value> forView(SmallVector<Value> indices) const {
    if (transposed)
      std::swap(indices[rank - 2], indices[rank - 1]);
    return indices;
  }
};
} // namespace

static GlobalAccess analyzeGlobalAccess(OpBuilder &b, Location loc,
                                        Value memref,
                                        const LinearLayout &layout,
                                        unsigned elementBytes) {
  auto type = cast<MemRefType>(memref.getType());
  GlobalAccess access;
  access.rank = type.getRank();
  SmallVector<int64_t> strides;
  int64_t offset;
  bool strided = succeeded(type.getStridesAndOffset(strides, offset));
  int64_t last = access.rank - 1;
  access.tileContiguous = 1;
  if (strided && strides[last - 1] == 1 && strides[last] != 1)
    access.tileContiguous = 0;
  int64_t memrefDim = last - 1 + access.tileContiguous;
  bool unitStride = strided && strides[memrefDim] == 1;
  access.vector = unitStride
                      ? contiguousRun(layout, access.tileContiguous,
                                      std::max<unsigned>(1, 16 / elementBytes))
                      : 1;
  // Whole vectors must be in or out of bounds: the size along the
  // contiguous dimension must be a multiple of the vector.
  int64_t size = type.getDimSize(memrefDim);
  while (access.vector > 1 &&
         (ShapedType::isDynamic(size) || size % access.vector))
    access.vector /= 2;
  for (int64_t d = 0; d < access.rank; ++d)
    access.sizes.push_back(memref::DimOp::create(b, loc, memref, d));
  access.view = memref;
  if (access.vector > 1 && access.tileContiguous == 0) {
    SmallVector<unsigned> permutation;
    for (int64_t d = 0; d < access.rank; ++d)
      permutation.push_back(d);
    std::swap(permutation[last - 1], permutation[last]);
    access.view = memref::TransposeOp::create(
        b, loc, memref,
        AffineMapAttr::get(
            AffineMap::getPermutationMap(permutation, b.getContext())));
    access.transposed = true;
  }
  SmallVector<int64_t> viewStrides;
  auto viewType = cast<MemRefType>(access.view.getType());
  if (succeeded(viewType.getStridesAndOffset(viewStrides, offset))) {
    int64_t largest = -1;
    for (int64_t d = 0; d < access.rank; ++d) {
      int64_t size = viewType.getDimSize(d);
      if (ShapedType::isDynamic(size) || ShapedType::isDynamic(viewStrides[d]))
        continue;
      if (size * viewStrides[d] > largest) {
        largest = size * viewStrides[d];
        access.outermost = d;
      }
    }
  }
  return access;
}

bool KernelLowering::usesBufferResource(Value memref,
                                        ArrayRef<int64_t> tileShape,
                                        bool throughViews) {
  // A kernel argument of static shape and strides, so that the resource is
  // built once (the backend hoists it) and every byte offset, including
  // the one-past-the-end index a masked vector is sent to, fits the 32-bit
  // offset. Matmul operands (rank 2, or 3 with a batch) and attention's
  // (rank 4).
  // Or, with `throughViews`, a transposed view of one (attention's V^T, a
  // matmul operand stored transposed): its type carries the permuted static
  // strides.
  Value source = memref;
  while (auto transpose = source.getDefiningOp<memref::TransposeOp>()) {
    if (!throughViews)
      return false;
    source = transpose.getIn();
  }
  auto argument = dyn_cast<BlockArgument>(source);
  if (!argument || argument.getOwner() != &kernel.getBody().front())
    return false;
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() > 4)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) || offset != 0 ||
      llvm::any_of(strides, ShapedType::isDynamic) || type.getMemorySpace())
    return false;
  // Bound every offset a load can form, masked-off vectors included: an
  // index of the tile's two dimensions is at most a tile past the end, any
  // index at most the size (where a masked vector is sent), so that the
  // 32-bit byte offset stays below 2^31 and never wraps back into the
  // buffer.
  const int64_t limit = (int64_t(1) << 31) - 1;
  int64_t bytesPerElement = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  int64_t rank = type.getRank(), largestOffset = 0;
  for (auto [d, size, stride] : llvm::enumerate(type.getShape(), strides)) {
    int64_t tile = int64_t(d) >= rank - 2 ? tileShape[d - (rank - 2)] : 0;
    int64_t index = size + tile;
    if (stride < 0 || index > limit ||
        (stride && index > limit / stride / bytesPerElement))
      return false;
    largestOffset += index * stride * bytesPerElement;
    if (largestOffset > limit)
      return false;
  }
  return true;
}

LogicalResult KernelLowering::lowerLoad(LoadOp op) {
  RankedTensorType tile = op.getResult().getType();
  auto emitError = [&] { return op.emitOpError(); };
  FailureOr<LinearLayout> layout = getTileLayout(tile, emitError);
  if (failed(layout))
    return failure();
  Value memref = mapping.lookup(op.getSource());
  Type element = tile.getElementType();
  unsigned elementBytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  GlobalAccess access =
      analyzeGlobalAccess(b, loc(), memref, *layout, elementBytes);
  SmallVector<Value> laneCoords = laneCoordinates(*layout);
  SmallVector<Value> base = llvm::map_to_vector(
      op.getIndices(), [&](Value v) { return mapping.lookup(v); });

  VectorType resultType = vectorTypeOf(tile, *layout);
  Value zeroTile = arith::ConstantOp::create(b, loc(), resultType,
                                             b.getZeroAttr(resultType));
  // Through a buffer resource, the hardware returns zeros past the end of
  // the memref: a masked-off vector reads index `size` of the outermost
  // dimension, one select per vector and no clamping, and an empty memref
  // needs no branch. Otherwise masked-off vectors read a clamped address,
  // which does not exist in an empty memref (K = 0): a tile of a possibly
  // empty memref is loaded only when it is not, behind one wave-uniform
  // branch (sizes are arguments). An in-bounds tile needs neither masks nor
  // the branch.
  bool inBoundsTile = op.getInBounds();
  bool scalarOrigin = inBoundsTile && op->hasAttr(kScalarOriginAttrName);
  bool buffer = usesBufferResource(memref, tile.getShape(),
                                   /*throughViews=*/scalarOrigin);
  Value nonEmpty =
      inBoundsTile || buffer ? Value() : nonEmptyCondition(memref, access.rank);
  scf::IfOp guard;
  OpBuilder::InsertionGuard insertion(b);
  if (nonEmpty) {
    guard = scf::IfOp::create(b, loc(), resultType, nonEmpty,
                              /*withElseRegion=*/true);
    b.setInsertionPointToStart(&guard.getElseRegion().front());
    scf::YieldOp::create(b, loc(), zeroTile);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
  }
  auto sliceType = VectorType::get({access.vector}, element);
  Value zeros =
      arith::ConstantOp::create(b, loc(), sliceType, b.getZeroAttr(sliceType));
  Value result = zeroTile;
  int64_t registers = resultType.getNumElements();
  // With tessel.constant_row_offsets (in-bounds buffer loads of runs across
  // rows) or tessel.scalar_origin, register bits no lane sets become a
  // constant offset: the registers share the index of the lane (origin plus
  // lane coordinates, or the coordinates alone with the origin in the
  // scalar offset) instead of each row's index being multiplied by the
  // stride.
  bool constantRows =
      inBoundsTile && buffer &&
      (op->hasAttr(kConstantRowOffsetsAttrName) || scalarOrigin);
  SmallVector<int64_t> strides;
  int64_t memrefOffset;
  if (constantRows && failed(cast<MemRefType>(memref.getType())
                                 .getStridesAndOffset(strides, memrefOffset)))
    constantRows = false;
  // kScalarOriginAttrName: the origin's part of the offset goes into the
  // instruction's scalar offset (the origin is wave-uniform), each lane's
  // offset is its coordinates' alone, computed once outside the loops.
  // Only in bounds: whether the hardware's range check counts the scalar
  // offset does not matter there.
  Value sgprOffset =
      scalarOrigin && buffer ? originOffset(memref, base) : Value();
  Value zeroIndex = sgprOffset ? constIndex(0) : Value();
  auto fromOrigin = [&](unsigned memrefDim, Value coord) -> Value {
    if (sgprOffset)
      return coord;
    return arith::AddIOp::create(b, loc(), base[memrefDim], coord);
  };
  std::array<Value, 2> laneIndices;
  for (int64_t r = 0; r < registers; r += access.vector) {
    SmallVector<int32_t, 4> regCoords = layout->apply({int32_t(r), 0, 0});
    SmallVector<Value> indices(base.begin(), base.end() - 2);
    if (sgprOffset)
      std::fill(indices.begin(), indices.end(), zeroIndex);
    Value valid;
    int64_t constantOffset = 0;
    for (unsigned d = 0; d < 2; ++d) {
      int64_t memrefDim = access.rank - 2 + d;
      if (constantRows && (regCoords[d] & laneOffsetBits(*layout, d)) == 0) {
        constantOffset += int64_t(regCoords[d]) * strides[memrefDim];
        if (!laneIndices[d])
          laneIndices[d] = fromOrigin(memrefDim, laneCoords[d]);
        indices.push_back(laneIndices[d]);
        continue;
      }
      Value coord = xorIndex(laneCoords[d], regCoords[d]);
      Value index = fromOrigin(memrefDim, coord);
      if (inBoundsTile) {
        indices.push_back(index);
        continue;
      }
      Value inBounds = arith::CmpIOp::create(
          b, loc(), arith::CmpIPredicate::ult, index, access.sizes[memrefDim]);
      valid = valid
                  ? arith::AndIOp::create(b, loc(), valid, inBounds).getResult()
                  : inBounds;
      if (buffer) {
        indices.push_back(index);
        continue;
      }
      // Read a clamped, always in-bounds address and select zero.
      int64_t span = d == access.tileContiguous ? access.vector : 1;
      Value limit = arith::SubIOp::create(b, loc(), access.sizes[memrefDim],
                                          constIndex(span));
      limit = arith::MaxSIOp::create(b, loc(), limit, constIndex(0));
      indices.push_back(arith::MinUIOp::create(b, loc(), index, limit));
    }
    Value slice;
    if (buffer) {
      slice = loadFromBuffer(access, access.forView(indices), valid, element,
                             constantOffset, sgprOffset);
      if (access.vector == 1)
        slice = vector::BroadcastOp::create(b, loc(), sliceType, slice);
    } else if (access.vector == 1) {
      Value scalar = memref::LoadOp::create(b, loc(), memref, indices);
      slice = vector::BroadcastOp::create(b, loc(), sliceType, scalar);
    } else {
      slice = vector::LoadOp::create(b, loc(), sliceType, access.view,
                                     access.forView(indices));
    }
    if (valid && !buffer)
      slice = arith::SelectOp::create(b, loc(), valid, slice, zeros);
    result = vector::InsertStridedSliceOp::create(
        b, loc(), slice, result, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{1});
  }
  if (guard) {
    scf::YieldOp::create(b, loc(), result);
    result = guard.getResult(0);
  }
  mapping.map(op.getResult(), result);
  return success();
}

SmallVector<Value> KernelLowering::bufferIndices(const GlobalAccess &access,
                                                 SmallVector<Value> viewIndices,
                                                 Value valid) {
  if (valid) {
    Value pastEnd =
        access.sizes[access.transposed && access.outermost >= access.rank - 2
                         ? 2 * access.rank - 3 - access.outermost
                         : access.outermost];
    viewIndices[access.outermost] = arith::SelectOp::create(
        b, loc(), valid, viewIndices[access.outermost], pastEnd);
  }
  return llvm::map_to_vector(viewIndices, [&](Value v) {
    return arith::IndexCastOp::create(b, loc(), b.getI32Type(), v).getResult();
  });
}

Value KernelLowering::originOffset(Value memref, ArrayRef<Value> origin) {
  SmallVector<int64_t> strides;
  int64_t offset;
  auto type = cast<MemRefType>(memref.getType());
  (void)type.getStridesAndOffset(strides, offset); // static: a buffer's
  Value sum;
  for (auto [index, stride] : llvm::zip_equal(origin, strides)) {
    if (matchPattern(index, m_Zero()) || stride == 0)
      continue;
    Value term = arith::MulIOp::create(b, loc(), index, constIndex(stride));
    sum = sum ? arith::AddIOp::create(b, loc(), sum, term).getResult() : term;
  }
  if (!sum)
    sum = constIndex(0);
  return arith::IndexCastOp::create(b, loc(), b.getI32Type(), sum);
}

Value KernelLowering::loadFromBuffer(const GlobalAccess &access,
                                     SmallVector<Value> viewIndices,
                                     Value valid, Type element,
                                     int64_t constantOffset, Value sgprOffset) {
  SmallVector<Value> indices = bufferIndices(access, viewIndices, valid);
  Type type = access.vector == 1
                  ? element
                  : Type(VectorType::get({access.vector}, element));
  IntegerAttr indexOffset = constantOffset
                                ? b.getI32IntegerAttr(int32_t(constantOffset))
                                : IntegerAttr();
  return amdgpu::RawBufferLoadOp::create(b, loc(), type, access.view, indices,
                                         /*boundsCheck=*/true, indexOffset,
                                         sgprOffset)
      .getResult();
}

void KernelLowering::storeToBuffer(const GlobalAccess &access,
                                   SmallVector<Value> viewIndices, Value valid,
                                   Value slice) {
  SmallVector<Value> indices = bufferIndices(access, viewIndices, valid);
  amdgpu::RawBufferStoreOp::create(b, loc(), slice, access.view, indices,
                                   /*boundsCheck=*/true,
                                   /*indexOffset=*/IntegerAttr(),
                                   /*sgprOffset=*/nullptr);
}

Value KernelLowering::nonEmptyCondition(Value memref, int64_t rank) {
  auto type = cast<MemRefType>(memref.getType());
  Value condition;
  for (int64_t d = rank - 2; d < rank; ++d) {
    int64_t size = type.getDimSize(d);
    if (!ShapedType::isDynamic(size) && size > 0)
      continue;
    Value positive = arith::CmpIOp::create(
        b, loc(), arith::CmpIPredicate::sgt,
        memref::DimOp::create(b, loc(), memref, d), constIndex(0));
    condition =
        condition
            ? arith::AndIOp::create(b, loc(), condition, positive).getResult()
            : positive;
  }
  return condition;
}

LogicalResult KernelLowering::lowerStore(StoreOp op) {
  RankedTensorType tile = op.getValue().getType();
  auto emitError = [&] { return op.emitOpError(); };
  FailureOr<LinearLayout> layout = getTileLayout(tile, emitError);
  if (failed(layout))
    return failure();
  Value memref = mapping.lookup(op.getDest());
  Value value = mapping.lookup(op.getValue());
  Type element = tile.getElementType();
  unsigned elementBytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  GlobalAccess access =
      analyzeGlobalAccess(b, loc(), memref, *layout, elementBytes);
  SmallVector<Value> laneCoords = laneCoordinates(*layout);
  SmallVector<Value> base = llvm::map_to_vector(
      op.getIndices(), [&](Value v) { return mapping.lookup(v); });
  Value holder = canonicalHolder(*layout);
  // A masked store through a buffer resource needs no branch: a masked-off
  // vector's offset is sent past the end, where the hardware drops it. A
  // store to a memref the resource cannot cover is guarded by a branch.
  bool buffer = (!op.getInBounds() || holder) &&
                usesBufferResource(memref, tile.getShape());
  int64_t registers = layout->getInDimSize(dims::kRegister);
  for (int64_t r = 0; r < registers; r += access.vector) {
    SmallVector<int32_t, 4> regCoords = layout->apply({int32_t(r), 0, 0});
    // A register holding what a lower one holds is not stored twice.
    bool duplicate = false;
    for (int64_t earlier = 0; earlier < r; earlier += access.vector)
      duplicate |= layout->apply({int32_t(earlier), 0, 0}) == regCoords;
    if (duplicate)
      continue;
    SmallVector<Value> indices(base.begin(), base.end() - 2);
    Value valid = holder;
    for (unsigned d = 0; d < 2; ++d) {
      int64_t memrefDim = access.rank - 2 + d;
      Value index = arith::AddIOp::create(
          b, loc(), base[memrefDim], xorIndex(laneCoords[d], regCoords[d]));
      indices.push_back(index);
      if (op.getInBounds())
        continue;
      Value inBounds = arith::CmpIOp::create(
          b, loc(), arith::CmpIPredicate::ult, index, access.sizes[memrefDim]);
      valid = valid
                  ? arith::AndIOp::create(b, loc(), valid, inBounds).getResult()
                  : inBounds;
    }
    Value slice = vector::ExtractStridedSliceOp::create(
        b, loc(), value, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{access.vector},
        ArrayRef<int64_t>{1});
    if (buffer) {
      if (access.vector == 1)
        slice =
            vector::ExtractOp::create(b, loc(), slice, ArrayRef<int64_t>{0});
      storeToBuffer(access, access.forView(indices), valid, slice);
      continue;
    }
    OpBuilder::InsertionGuard guard(b);
    if (valid) {
      auto ifOp = scf::IfOp::create(b, loc(), valid, /*withElseRegion=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    if (access.vector == 1) {
      Value scalar =
          vector::ExtractOp::create(b, loc(), slice, ArrayRef<int64_t>{0});
      memref::StoreOp::create(b, loc(), scalar, memref, indices);
    } else {
      vector::StoreOp::create(b, loc(), slice, access.view,
                              access.forView(indices));
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LDS
//===----------------------------------------------------------------------===//

FailureOr<LinearLayout> KernelLowering::offsetsOf(Operation *op,
                                                  RankedTensorType tile,
                                                  LdsType buffer,
                                                  bool transposed) {
  auto emitError = [&] { return op->emitOpError(); };
  return getLdsAccessOffsets(tile, buffer, transposed, emitError);
}

void KernelLowering::storeToLds(Value memory, Value base, Value vector,
                                const LinearLayout &toOffset, Type element,
                                bool shareAddresses, int64_t slotElements) {
  unsigned elementBytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  SmallVector<int32_t> runBits =
      contiguousRunBits(toOffset, 0, 16 / elementBytes);
  int64_t run = int64_t(1) << runBits.size(), runMask = 0;
  for (int32_t bit : runBits)
    runMask |= int64_t(1) << bit;
  auto [start, slotBase] = accessStart(toOffset, base, slotElements);
  int64_t laneBits = laneOffsetBits(toOffset);
  Value holder = canonicalHolder(toOffset);
  scf::IfOp guard;
  OpBuilder::InsertionGuard insertion(b);
  if (holder) {
    guard = scf::IfOp::create(b, loc(), holder, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
  }
  int64_t registers = toOffset.getInDimSize(dims::kRegister);
  llvm::SmallDenseSet<int32_t> written;
  for (int64_t r = 0; r < registers; ++r) {
    if (r & runMask)
      continue; // part of the run starting at a lower register
    int32_t regOffset = toOffset.apply({int32_t(r), 0, 0})[0];
    if (!written.insert(regOffset).second)
      continue; // a register repeating a lower one
    auto [view, index] =
        ldsAccess(memory, start, regOffset, laneBits, shareAddresses, slotBase);
    SmallVector<int64_t> lanes;
    for (int64_t i = 0; i < run; ++i)
      lanes.push_back(runRegister(r, runBits, i));
    Value slice =
        vector::ShuffleOp::create(b, loc(), vector, vector, lanes).getResult();
    vector::StoreOp::create(b, loc(), slice, view, ValueRange{index},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(run * elementBytes));
  }
}

Value KernelLowering::loadFromLds(Value memory, Value base,
                                  const LinearLayout &toOffset, VectorType type,
                                  bool transposed, bool shareAddresses,
                                  int64_t slotElements) {
  unsigned elementBytes =
      llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
  // A transposing read moves four elements per lane (the verifier checked
  // that registers 0-1 are that run).
  SmallVector<int32_t> runBits =
      contiguousRunBits(toOffset, 0, transposed ? 4 : 16 / elementBytes);
  int64_t run = int64_t(1) << runBits.size(), runMask = 0;
  for (int32_t bit : runBits)
    runMask |= int64_t(1) << bit;
  auto [start, slotBase] = accessStart(toOffset, base, slotElements);
  int64_t laneBits = laneOffsetBits(toOffset);
  auto sliceType = VectorType::get({run}, type.getElementType());
  SmallVector<Value> elements(type.getNumElements());
  for (int64_t r = 0; r < type.getNumElements(); ++r) {
    if (r & runMask)
      continue;
    int32_t regOffset = toOffset.apply({int32_t(r), 0, 0})[0];
    auto [view, index] = ldsAccess(memory, start, regOffset, laneBits,
                                   transposed || shareAddresses, slotBase);
    Value slice = transposed ? amdgpu::TransposeLoadOp::create(
                                   b, loc(), sliceType, view, ValueRange{index})
                                   .getResult()
                             : vector::LoadOp::create(
                                   b, loc(), sliceType, view, ValueRange{index},
                                   /*nontemporal=*/false,
                                   llvm::MaybeAlign(run * elementBytes))
                                   .getResult();
    for (int64_t i = 0; i < run; ++i)
      elements[runRegister(r, runBits, i)] =
          vector::ExtractOp::create(b, loc(), slice, ArrayRef<int64_t>{i});
  }
  return vector::FromElementsOp::create(b, loc(), type, elements);
}

LogicalResult KernelLowering::lowerLocalStore(LocalStoreOp op) {
  emitPendingZeroAccumulators();
  LdsType buffer = op.getBuffer().getType();
  FailureOr<LinearLayout> toOffset =
      offsetsOf(op, op.getValue().getType(), buffer);
  if (failed(toOffset))
    return failure();
  Value slotBase = arith::MulIOp::create(b, loc(), mapping.lookup(op.getSlot()),
                                         constIndex(buffer.getSlotElements()));
  storeToLds(ldsMemory.lookup(op.getBuffer()), slotBase,
             mapping.lookup(op.getValue()), *toOffset, buffer.getElementType(),
             op->hasAttr(kLdsSharedAddressesAttrName),
             constantSlotElements(op.getSlot(), buffer));
  return success();
}

LogicalResult KernelLowering::lowerCopyToLocal(CopyToLocalOp op) {
  emitPendingZeroAccumulators();
  if (!chip.hasLdsDirectLoads16())
    return op.emitOpError() << "copies to LDS need 16-byte direct loads "
                               "(global_load_lds_dwordx4, "
                               "gfx950); "
                            << chip.name << " has none";
  LdsType buffer = op.getBuffer().getType();
  auto emitError = [&] { return op.emitOpError(); };
  FailureOr<LinearLayout> layout =
      getCopyLayout(buffer, workgroupWaves, emitError);
  if (failed(layout))
    return failure();
  Value memref = mapping.lookup(op.getSource());
  Type element = buffer.getElementType();
  int64_t run = kCopyBytesPerLane * 8 / element.getIntOrFloatBitWidth();
  int64_t instructionElements = run * kCopyWaveSize * workgroupWaves;
  SmallVector<Value> laneCoords = laneCoordinates(*layout);
  SmallVector<Value> base = llvm::map_to_vector(
      op.getIndices(), [&](Value v) { return mapping.lookup(v); });
  // The LDS side is one address per wave and instruction (M0): the wave's
  // first run of the slot, read into a scalar register once.
  Value uniformWave;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(prologueEnd);
    Value wave32 = arith::IndexCastOp::create(b, loc(), b.getI32Type(), wave);
    uniformWave = arith::IndexCastOp::create(
        b, loc(), b.getIndexType(),
        ROCDL::ReadfirstlaneOp::create(b, loc(), b.getI32Type(), wave32));
    prologueEnd = uniformWave.getDefiningOp();
  }
  Value waveStart = arith::AddIOp::create(
      b, loc(),
      arith::MulIOp::create(b, loc(), mapping.lookup(op.getSlot()),
                            constIndex(buffer.getSlotElements())),
      arith::MulIOp::create(b, loc(), uniformWave,
                            constIndex(run * kCopyWaveSize)));
  Value memory = ldsMemory.lookup(op.getBuffer());
  int64_t rank = cast<MemRefType>(memref.getType()).getRank();
  // Through a buffer resource (a kernel argument of static shape, or a
  // transposed view of one): each lane's offset is its coordinates' alone,
  // loop-invariant, and the origin's part, wave-uniform, goes into the
  // scalar offset. A K loop's copies then take no VALU instruction, where
  // a 64-bit global address took three (docs/performance.md, "Built, not
  // chosen yet: direct copies into LDS").
  if (usesBufferResource(memref, buffer.getShape(), /*throughViews=*/true)) {
    int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    auto i32Constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(b, loc(), b.getI32Type(), value);
    };
    Value rsrc = bufferResourceOf(memref);
    Value scalarOffset = arith::MulIOp::create(
        b, loc(), originOffset(memref, base), i32Constant(elementBytes));
    SmallVector<int64_t> strides;
    int64_t memrefOffset;
    (void)cast<MemRefType>(memref.getType())
        .getStridesAndOffset(strides, memrefOffset);
    for (int64_t first = 0, end = buffer.getSlotElements(); first < end;
         first += instructionElements) {
      int64_t r = first / instructionElements * run;
      SmallVector<int32_t, 4> regCoords = layout->apply({int32_t(r), 0, 0});
      Value laneOffset = constIndex(0);
      for (unsigned d = 0; d < 2; ++d)
        laneOffset = arith::AddIOp::create(
            b, loc(), laneOffset,
            arith::MulIOp::create(
                b, loc(), xorIndex(laneCoords[d], regCoords[d]),
                constIndex(strides[rank - 2 + d] * elementBytes)));
      Value ldsIndex =
          arith::AddIOp::create(b, loc(), waveStart, constIndex(first));
      ROCDL::RawPtrBufferLoadLdsOp::create(
          b, loc(), rsrc, ldsPointerAt(memory, ldsIndex, element),
          i32Constant(kCopyBytesPerLane),
          arith::IndexCastOp::create(b, loc(), b.getI32Type(), laneOffset),
          scalarOffset, i32Constant(0), i32Constant(0),
          /*alias_scopes=*/nullptr, /*noalias_scopes=*/nullptr,
          /*tbaa=*/nullptr);
    }
    return success();
  }
  auto transferType = VectorType::get({run}, element);
  for (int64_t first = 0, end = buffer.getSlotElements(); first < end;
       first += instructionElements) {
    int64_t r = first / instructionElements * run;
    SmallVector<int32_t, 4> regCoords = layout->apply({int32_t(r), 0, 0});
    SmallVector<Value> indices(base.begin(), base.end() - 2);
    for (unsigned d = 0; d < 2; ++d)
      indices.push_back(arith::AddIOp::create(
          b, loc(), base[rank - 2 + d], xorIndex(laneCoords[d], regCoords[d])));
    Value ldsIndex =
        arith::AddIOp::create(b, loc(), waveStart, constIndex(first));
    amdgpu::GatherToLDSOp::create(b, loc(), memref, indices, memory,
                                  ValueRange{ldsIndex}, transferType);
  }
  return success();
}

Value KernelLowering::bufferResourceOf(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)type.getStridesAndOffset(strides, offset);
  // The bytes from the first element to past the last (static sizes).
  int64_t extent = 1;
  for (auto [size, stride] : llvm::zip_equal(type.getShape(), strides))
    extent += (size - 1) * stride;
  int64_t bytes = extent * type.getElementTypeBitWidth() / 8;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(prologueEnd);
  Value address = arith::IndexCastOp::create(
      b, loc(), b.getI64Type(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), memref));
  Value base = LLVM::IntToPtrOp::create(
      b, loc(), LLVM::LLVMPointerType::get(b.getContext(), 1), address,
      /*dereferenceable=*/nullptr);
  // Word 3 as MLIR's amdgpu lowering sets it on gfx9: a raw buffer (stride
  // 0, no thread-id term) whose data format is 32 bits of float, since
  // gfx9 treats the invalid format 0 as no data.
  constexpr int64_t kGfx9RawBufferFlags = (7 << 12) | (4 << 15);
  Value rsrc = ROCDL::MakeBufferRsrcOp::create(
      b, loc(), LLVM::LLVMPointerType::get(b.getContext(), 8), base,
      arith::ConstantIntOp::create(b, loc(), b.getI16Type(), 0),
      arith::ConstantIntOp::create(b, loc(), b.getI64Type(), bytes),
      arith::ConstantIntOp::create(b, loc(), b.getI32Type(),
                                   kGfx9RawBufferFlags));
  prologueEnd = rsrc.getDefiningOp();
  return rsrc;
}

Value KernelLowering::ldsPointerAt(Value memory, Value index, Type element) {
  Value address = arith::AddIOp::create(
      b, loc(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(), memory),
      arith::MulIOp::create(b, loc(), index,
                            constIndex(element.getIntOrFloatBitWidth() / 8)));
  return LLVM::IntToPtrOp::create(
      b, loc(), LLVM::LLVMPointerType::get(b.getContext(), 3),
      arith::IndexCastOp::create(b, loc(), b.getI64Type(), address),
      /*dereferenceable=*/nullptr);
}

Value KernelLowering::globalPointerAt(Value memref, ValueRange indices) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc(), memref);
  Value element = metadata.getOffset();
  for (auto [index, stride] : llvm::zip_equal(indices, metadata.getStrides()))
    element = arith::AddIOp::create(
        b, loc(), element, arith::MulIOp::create(b, loc(), index, stride));
  unsigned bytes =
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  Value address = arith::AddIOp::create(
      b, loc(),
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc(),
                                                     metadata.getBaseBuffer()),
      arith::MulIOp::create(b, loc(), element, constIndex(bytes)));
  return LLVM::IntToPtrOp::create(
      b, loc(), LLVM::LLVMPointerType::get(b.getContext(), 1),
      arith::IndexCastOp::create(b, loc(), b.getI64Type(), address),
      /*dereferenceable=*/nullptr);
}

/// The wave's copies have landed once its vector-memory counter is 0.
LogicalResult KernelLowering::lowerWaitCopies(WaitCopiesOp op) {
  amdgpu::MemoryCounterWaitOp::create(b, loc(), b.getI32IntegerAttr(0),
                                      IntegerAttr(), IntegerAttr(),
                                      IntegerAttr(), IntegerAttr());
  return success();
}

LogicalResult KernelLowering::lowerLocalLoad(LocalLoadOp op) {
  LdsType buffer = op.getBuffer().getType();
  RankedTensorType tile = op.getResult().getType();
  if (op.getTransposed() && !chip.hasLdsTransposeReads())
    return op.emitOpError() << "transposed LDS reads need a chip that has "
                               "them (gfx950), not "
                            << chip.name;
  FailureOr<LinearLayout> toOffset =
      offsetsOf(op, tile, buffer, op.getTransposed());
  if (failed(toOffset))
    return failure();
  Value slotBase = arith::MulIOp::create(b, loc(), mapping.lookup(op.getSlot()),
                                         constIndex(buffer.getSlotElements()));
  VectorType type = VectorType::get({toOffset->getInDimSize(dims::kRegister)},
                                    tile.getElementType());
  mapping.map(op.getResult(),
              loadFromLds(ldsMemory.lookup(op.getBuffer()), slotBase, *toOffset,
                          type, op.getTransposed(),
                          op->hasAttr(kLdsSharedAddressesAttrName),
                          constantSlotElements(op.getSlot(), buffer)));
  return success();
}

LogicalResult KernelLowering::lowerConvert(ConvertLayoutOp op) {
  RankedTensorType source = op.getSource().getType();
  RankedTensorType result = op.getResult().getType();
  auto emitError = [&] { return op.emitOpError(); };
  FailureOr<LinearLayout> from = getTileLayout(source, emitError);
  FailureOr<LinearLayout> to = getTileLayout(result, emitError);
  if (failed(from) || failed(to))
    return failure();
  if (*from == *to) {
    mapping.map(op.getResult(), mapping.lookup(op.getSource()));
    return success();
  }
  // Through a scratch tile in LDS, row-major.
  auto ldsType = LdsType::get(
      b.getContext(), 1, source.getShape(), source.getElementType(),
      SwizzleAttr::get(b.getContext(), 1, 1, 1, {}, false));
  auto scratchType = MemRefType::get(
      {ldsType.getSlotElements()}, source.getElementType(), AffineMap(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  Value scratch = kernel.addWorkgroupAttribution(scratchType, op.getLoc());
  FailureOr<LinearLayout> storeOffsets = offsetsOf(op, source, ldsType);
  FailureOr<LinearLayout> loadOffsets = offsetsOf(op, result, ldsType);
  if (failed(storeOffsets) || failed(loadOffsets))
    return failure();
  gpu::BarrierOp::create(b, loc());
  storeToLds(scratch, constIndex(0), mapping.lookup(op.getSource()),
             *storeOffsets, source.getElementType());
  gpu::BarrierOp::create(b, loc());
  mapping.map(op.getResult(), loadFromLds(scratch, constIndex(0), *loadOffsets,
                                          vectorTypeOf(result, *to)));
  return success();
}

//===----------------------------------------------------------------------===//
// Dot
//===----------------------------------------------------------------------===//

namespace {
/// The memory instructions of one pipelined K step, as lowered so far.
struct StepMemoryOps {
  int64_t ldsStores = 0, globalLoads = 0, ldsLoads = 0;
  /// A scheduling barrier starts the step (tessel-pipeline's K loop).
  bool fenced = false;
};
} // namespace

/// The LDS stores, global loads and LDS loads lowered into `block` since its
/// last scheduling barrier: one pipelined K step's.
static StepMemoryOps countStepMemoryOps(Block *block) {
  StepMemoryOps ops;
  for (Operation &op : *block) {
    if (isa<amdgpu::SchedBarrierOp>(op)) {
      ops = {};
      ops.fenced = true;
      continue;
    }
    if (auto store = dyn_cast<vector::StoreOp>(op)) {
      ops.ldsStores += store.getBase().getType().getMemorySpace() != nullptr;
    } else if (isa<amdgpu::RawBufferLoadOp>(op)) {
      ++ops.globalLoads;
    } else if (isa<amdgpu::TransposeLoadOp>(op)) {
      ++ops.ldsLoads;
    } else if (auto load = dyn_cast<vector::LoadOp>(op)) {
      bool lds = load.getBase().getType().getMemorySpace() != nullptr;
      ++(lds ? ops.ldsLoads : ops.globalLoads);
    }
  }
  return ops;
}

/// Where the matrix pipe writes a zero accumulator instead of LLVM
/// materializing the constant: nowhere, at the kernel's entry, or right
/// before the loop nested in another that it starts.
enum class ZeroPlacement { None, KernelEntry, BeforeLoop };

/// Where `constant`, if an f32 or i32 MFMA accumulator of zeros (all bits
/// clear) at the function's top level, is written by the matrix pipe:
/// - at the kernel's entry if its one use starts a K loop at the top level,
///   whose iterations take the accumulator straight into a dot (attention's
///   loop rescales its output first, and its kernels measured mixed:
///   docs/performance.md, "Accumulators zeroed by the matrix pipe");
/// - right before the loop if it starts a loop nested in another (stream-K's
///   pieces) and is otherwise only dots' C (an inline 0 of their MFMAs;
///   attention's S^T at head dim 64 has O^T's type, and CSE merges the two
///   zeros): LLVM would write the constant into scalar registers on every
///   trip of the outer loop, 32 at once for 32 values, and copy them over,
///   which is what spilled scalar registers in causal stream-K attention.
///   A zero created at the kernel's entry instead would stay live across
///   the outer loop.
static ZeroPlacement zeroPlacement(arith::ConstantOp constant) {
  auto tile = dyn_cast<RankedTensorType>(constant.getType());
  auto layout = tile ? dyn_cast_or_null<MmaAttr>(tile.getEncoding()) : nullptr;
  auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
  if (!layout || layout.getInstruction().isWmma() || !splat ||
      !isa<func::FuncOp>(constant->getParentOp()))
    return ZeroPlacement::None;
  Type element = tile.getElementType();
  bool allBitsClear =
      element.isF32()         ? splat.getSplatValue<APFloat>().isPosZero()
      : element.isInteger(32) ? splat.getSplatValue<APInt>().isZero()
                              : false;
  if (!allBitsClear)
    return ZeroPlacement::None;
  auto loopInit = [](OpOperand &use) -> scf::ForOp {
    auto loop = dyn_cast<scf::ForOp>(use.getOwner());
    return loop && use.getOperandNumber() >= loop.getNumControlOperands()
               ? loop
               : scf::ForOp();
  };
  auto isDotC = [](OpOperand &use) {
    auto dot = dyn_cast<DotOp>(use.getOwner());
    return dot && dot.getC() == use.get();
  };
  SmallVector<OpOperand *> inits;
  for (OpOperand &use : constant->getUses()) {
    if (loopInit(use))
      inits.push_back(&use);
    else if (!isDotC(use))
      return ZeroPlacement::None;
  }
  if (inits.size() != 1)
    return ZeroPlacement::None;
  scf::ForOp loop = loopInit(*inits.front());
  if (loop->getParentOfType<scf::ForOp>())
    return ZeroPlacement::BeforeLoop;
  Value iterArg = loop.getTiedLoopRegionIterArg(inits.front());
  bool startsKLoop =
      constant->hasOneUse() && loop->getBlock() == constant->getBlock() &&
      !iterArg.use_empty() &&
      llvm::all_of(iterArg.getUses(),
                   [&](OpOperand &inner) { return isDotC(inner); });
  return startsKLoop ? ZeroPlacement::KernelEntry : ZeroPlacement::None;
}

/// A vector of zeros of `type` (f32 or i32, whose zero has the same bits;
/// one MFMA accumulator per 16 values) written by the matrix pipe: 32x32x8 f16
/// products of zero operands, each accumulating onto the previous one (so that
/// no two are the same value for LLVM to merge, and none is a constant for it
/// to rematerialize next to the loop). One instruction per 16 registers instead
/// of 16 VALU moves after the prologue's first wait; the matrix pipe is idle
/// until the K loop starts.
Value KernelLowering::zeroAccumulatorOnMatrixPipe(VectorType type) {
  constexpr int64_t kBlock = 16;
  int64_t blocks = type.getRank() == 1 ? type.getNumElements() / kBlock : 0;
  if (blocks == 0)
    return arith::ConstantOp::create(b, loc(), type, b.getZeroAttr(type));
  auto floatType = VectorType::get(type.getShape(), b.getF32Type());
  Value zeros =
      arith::ConstantOp::create(b, loc(), floatType, b.getZeroAttr(floatType));
  auto blockType = VectorType::get({kBlock}, b.getF32Type());
  auto operandType = VectorType::get({4}, b.getF16Type());
  Value operand = arith::ConstantOp::create(b, loc(), operandType,
                                            b.getZeroAttr(operandType));
  Value block =
      arith::ConstantOp::create(b, loc(), blockType, b.getZeroAttr(blockType));
  Value result = zeros;
  for (int64_t i = 0; i < blocks; ++i) {
    block =
        amdgpu::MFMAOp::create(b, loc(), blockType, /*m=*/32, /*n=*/32,
                               /*k=*/8, /*blocks=*/1, operand, operand, block)
            .getResult();
    result = vector::InsertStridedSliceOp::create(b, loc(), block, result,
                                                  ArrayRef<int64_t>{i * kBlock},
                                                  ArrayRef<int64_t>{1});
  }
  if (type != floatType)
    result = vector::BitCastOp::create(b, loc(), type, result);
  return result;
}

/// Creates pending zero accumulators at the insertion point: all of them
/// at the kernel's top level, before its first LDS store (which waits for
/// the prologue's first global loads, issued just before) or its first
/// loop; elsewhere only those among `loopInits` (the loop about to be
/// lowered takes them). Fences on both sides keep the backend's scheduler
/// from moving the MFMAs above the loads (the wave would issue them first
/// and the loads a chain later) or below the wait.
void KernelLowering::emitPendingZeroAccumulators(ValueRange loopInits) {
  bool topLevel = b.getInsertionBlock() == &kernel.getBody().front();
  SmallVector<std::pair<Value, VectorType>> now, later;
  for (const auto &pending : pendingZeroAccumulators)
    (topLevel || llvm::is_contained(loopInits, pending.first) ? now : later)
        .push_back(pending);
  if (now.empty())
    return;
  emitSchedFence();
  for (auto [constant, type] : now)
    mapping.map(constant, zeroAccumulatorOnMatrixPipe(type));
  emitSchedFence();
  pendingZeroAccumulators = std::move(later);
}

SmallVector<Value> KernelLowering::lowerLoopInits(scf::ForOp op) {
  emitPendingZeroAccumulators(op.getInitArgs());
  SmallVector<Value> inits = llvm::map_to_vector(
      op.getInitArgs(), [&](Value v) { return mapping.lookup(v); });
  if (llvm::none_of(op.getInitArgs(),
                    [&](Value v) { return loopStartZeros.contains(v); }))
    return inits;
  // Fenced on both sides, as the kernel entry's zeros are.
  emitSchedFence();
  for (auto [index, init] : llvm::enumerate(op.getInitArgs()))
    if (auto zero = loopStartZeros.find(init); zero != loopStartZeros.end())
      inits[index] = zeroAccumulatorOnMatrixPipe(zero->second);
  emitSchedFence();
  return inits;
}

/// The LDS buffer a dot operand of a pipelined K loop was read from: that of
/// the local_load producing it, or, for a loop-carried operand, of the
/// local_load the loop yields into it.
static Value operandBuffer(Value operand, scf::ForOp loop) {
  if (auto iterArg = dyn_cast<BlockArgument>(operand)) {
    if (iterArg.getOwner() != loop.getBody() ||
        !llvm::is_contained(loop.getRegionIterArgs(), iterArg))
      return {};
    operand = loop.getTiedLoopYieldedValue(iterArg)->get();
  }
  auto read = operand.getDefiningOp<LocalLoadOp>();
  return read ? read.getBuffer() : Value();
}

/// The LDS read of a later K step that can take the registers of `operand`
/// (used by `dot` alone) in a pipelined K loop, as lowered: a
/// vector.from_elements of pieces of LDS loads of the same buffer, lowered
/// before `dot` and used once after it (by the next dot of a loop unrolled
/// by two, or by the yield). Null when there is none.
vector::FromElementsOp
KernelLowering::loweredNextStepRead(DotOp dot, Value operand, scf::ForOp loop) {
  Value buffer = operandBuffer(operand, loop);
  if (!buffer || !operand.hasOneUse())
    return {};
  for (auto read : dot->getBlock()->getOps<LocalLoadOp>()) {
    if (!read->isBeforeInBlock(dot))
      break;
    if (read.getBuffer() != buffer || read.getResult() == operand ||
        read.getType() != operand.getType() || !read->hasOneUse())
      continue;
    Operation *user = *read->user_begin();
    if (user == dot || user->isBeforeInBlock(dot))
      continue;
    return mapping.lookup(read.getResult())
        .getDefiningOp<vector::FromElementsOp>();
  }
  return {};
}

/// Whether `op` leaves memory as it found it (reads at most; a scheduling
/// barrier is a hint to the backend's scheduler), nested ops included.
static bool writesNoMemory(Operation *op) {
  if (isMemoryEffectFree(op) || isa<ROCDL::SchedBarrier>(op))
    return true;
  if (op->getNumRegions() > 0 &&
      op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return llvm::all_of(op->getRegions(), [](Region &region) {
      return llvm::all_of(region.getOps(), [](Operation &nested) {
        return writesNoMemory(&nested);
      });
    });
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::all_of(instances, [](MemoryEffects::EffectInstance &instance) {
    return isa<MemoryEffects::Read>(instance.getEffect());
  });
}

/// Moves each LDS load behind `next` (the next step's operand, lowered
/// earlier in this block) to just after the MFMA that reads the elements
/// it fills for the last time (`lastRead`, by element of `next`), so that
/// the two steps' values can share registers, and `next` to the end of the
/// block. Counts the moved loads per MFMA into `readsAfterMfma` and returns
/// how many moved; nothing moves when the loads cannot (another use, or a
/// memory write between them and the MFMAs).
int64_t KernelLowering::moveReadsAfterLastUse(
    vector::FromElementsOp next, ArrayRef<int64_t> lastRead,
    ArrayRef<Operation *> mfmas, MutableArrayRef<int64_t> readsAfterMfma) {
  Block *block = next->getBlock();
  llvm::MapVector<Operation *, int64_t> releasedAfter;
  for (auto [r, element] : llvm::enumerate(next.getElements())) {
    auto extract = element.getDefiningOp<vector::ExtractOp>();
    Operation *load = extract ? extract.getSource().getDefiningOp() : nullptr;
    if (!load || !isa<vector::LoadOp, amdgpu::TransposeLoadOp>(load) ||
        load->getBlock() != block || !extract->hasOneUse())
      return 0;
    int64_t &at = releasedAfter.try_emplace(load, -1).first->second;
    at = std::max(at, lastRead[r]);
  }
  if (releasedAfter.empty())
    return 0;
  Operation *first = releasedAfter.front().first;
  for (auto &[load, at] : releasedAfter) {
    if (load->isBeforeInBlock(first))
      first = load;
    if (!llvm::all_of(load->getUsers(), [&](Operation *user) {
          return isa<vector::ExtractOp>(user) && user->hasOneUse() &&
                 *user->user_begin() == next;
        }))
      return 0;
  }
  for (Operation *op = first; op; op = op->getNextNode())
    if (!writesNoMemory(op))
      return 0;
  SmallVector<Operation *> lastMoved(mfmas);
  int64_t moved = 0;
  for (auto &[load, at] : releasedAfter) {
    if (at < 0)
      continue;
    load->moveAfter(lastMoved[at]);
    lastMoved[at] = load;
    for (Operation *extract : llvm::make_early_inc_range(load->getUsers()))
      extract->moveAfter(load);
    ++readsAfterMfma[at];
    ++moved;
  }
  next->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
  return moved;
}

/// The instruction classes a rocdl.sched.barrier of this mask lets the
/// backend's scheduler move across it: VALU, SALU and transcendental
/// instructions (address arithmetic, loop bookkeeping), not the MFMAs or
/// the memory instructions.
constexpr uint32_t kScalarAndVectorAluMask = 0x406;

/// Whether `op` reads workgroup memory (LDS), nested ops included.
static bool readsLds(Operation *op) {
  WalkResult result = op->walk([](Operation *nested) {
    Value base;
    if (auto load = dyn_cast<vector::LoadOp>(nested))
      base = load.getBase();
    else if (auto load = dyn_cast<memref::LoadOp>(nested))
      base = load.getMemRef();
    bool lds = isa<amdgpu::TransposeLoadOp>(nested) ||
               (base && cast<MemRefType>(base.getType()).getMemorySpace());
    return lds ? WalkResult::interrupt() : WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Whether `op` is an LDS store, a global load (a masked one: an scf.if
/// that only reads global memory) or a workgroup barrier.
static bool isStepStoreLoadOrBarrier(Operation *op) {
  if (auto store = dyn_cast<vector::StoreOp>(op))
    return store.getBase().getType().getMemorySpace() != nullptr;
  if (auto load = dyn_cast<vector::LoadOp>(op))
    return load.getBase().getType().getMemorySpace() == nullptr;
  if (isa<scf::IfOp>(op))
    return writesNoMemory(op) && !readsLds(op);
  return isa<amdgpu::RawBufferLoadOp, gpu::BarrierOp>(op);
}

/// Fixes the order of a K step whose next operands are read in place
/// (moveReadsAfterLastUse put each LDS read after the MFMA that frees its
/// registers): the step's global loads and LDS stores (loads first in a loop
/// unrolled by two, whose loads fill the other step's tile registers, so that
/// the stores a step later find them a whole step old) go after the MFMAs of
/// the step's first half, evenly, and the barrier behind them; reads freed
/// before the barrier follow it. A scheduling barrier between MFMAs keeps
/// the MFMAs and memory instructions where they were put (address and loop
/// arithmetic may cross). The backend's scheduler, left to interleave
/// freely (sched_group_barrier), reorders the MFMAs and moves the reads
/// (and so the barrier) to the end of the step. False, changing nothing,
/// when the step holds other memory operations before its MFMAs.
bool KernelLowering::pinStepSchedule(ArrayRef<Operation *> mfmas,
                                     bool unrolled) {
  // The step's memory operations, walking back from its first MFMA to the
  // scheduling barrier that starts it: its LDS stores must all precede its
  // barrier (they go back in front of it).
  SmallVector<Operation *> stores, loads, barriers;
  for (Operation *op = mfmas.front()->getPrevNode();
       op && !isa<amdgpu::SchedBarrierOp>(op); op = op->getPrevNode()) {
    if (!isStepStoreLoadOrBarrier(op)) {
      if (!isMemoryEffectFree(op))
        return false;
      continue;
    }
    if (isa<gpu::BarrierOp>(op)) {
      barriers.push_back(op);
    } else if (isa<vector::StoreOp>(op)) {
      if (barriers.empty())
        return false;
      stores.push_back(op);
    } else {
      loads.push_back(op);
    }
  }
  if (barriers.size() != 1)
    return false;
  std::reverse(stores.begin(), stores.end());
  std::reverse(loads.begin(), loads.end());
  SmallVector<Operation *> sequence(unrolled ? loads : stores);
  sequence.append(unrolled ? stores : loads);
  // The first half of the MFMAs carries them (the reads freed before the
  // barrier wait for it); the reads then have at least half a step to land.
  int64_t half = std::max<int64_t>(1, mfmas.size() / 2);
  int64_t perMfma =
      std::max<int64_t>(1, llvm::divideCeil(sequence.size(), half));
  // Moves `op` after `*after`, then the pure ops unpacking its value that
  // it would now follow; `*after` becomes the last op moved.
  auto moveWithUsers = [](Operation *op, Operation *&after) {
    Block *block = op->getBlock();
    op->moveAfter(after);
    after = op;
    SmallVector<Operation *> users(op->getUsers());
    while (!users.empty()) {
      // A user nested in another op of the block moves with that op.
      Operation *user = block->findAncestorOpInBlock(*users.pop_back_val());
      if (!user || !user->isBeforeInBlock(op))
        continue;
      user->moveAfter(after);
      after = user;
      llvm::append_range(users, user->getUsers());
    }
  };
  // Each op goes after its MFMA and the ops put there before it, ahead of
  // the reads moveReadsAfterLastUse put there.
  SmallVector<Operation *> lastPlaced(mfmas);
  for (auto [index, op] : llvm::enumerate(sequence))
    moveWithUsers(op, lastPlaced[int64_t(index) / perMfma]);
  int64_t last = sequence.empty() ? 0 : (sequence.size() - 1) / perMfma;
  Operation *barrier = barriers.front();
  barrier->moveAfter(lastPlaced[last]);
  // The reads of the next step's slot follow the barrier.
  SmallVector<Operation *> earlyReads;
  for (Operation *op = mfmas.front(); op != barrier; op = op->getNextNode())
    if (isa<vector::LoadOp, amdgpu::TransposeLoadOp>(op) &&
        !isStepStoreLoadOrBarrier(op))
      earlyReads.push_back(op);
  Operation *afterBarrier = barrier;
  for (Operation *read : earlyReads)
    moveWithUsers(read, afterBarrier);
  for (Operation *mfma : mfmas.drop_front()) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(mfma);
    ROCDL::SchedBarrier::create(b, loc(), kScalarAndVectorAluMask);
  }
  return true;
}

namespace {
/// One MFMA of a dot: the accumulator tile (m, n) and the K slice j.
struct MfmaSlot {
  int64_t m, n, j;
};
} // namespace

/// The order of a dot's MFMAs: tile by tile, each tile's `slices` back to
/// back; or, for operands read in place, K slice by K slice with the
/// operand of fewer blocks outermost, so that every register is read for
/// the last time early in the step.
static SmallVector<MfmaSlot> orderMfmas(int64_t repM, int64_t repN,
                                        int64_t slices, bool inPlace) {
  SmallVector<MfmaSlot> order;
  if (!inPlace) {
    for (int64_t m = 0; m < repM; ++m)
      for (int64_t n = 0; n < repN; ++n)
        for (int64_t j = 0; j < slices; ++j)
          order.push_back({m, n, j});
    return order;
  }
  for (int64_t j = 0; j < slices; ++j)
    for (int64_t outer = 0; outer < std::min(repM, repN); ++outer)
      for (int64_t inner = 0; inner < std::max(repM, repN); ++inner)
        order.push_back(repM <= repN ? MfmaSlot{outer, inner, j}
                                     : MfmaSlot{inner, outer, j});
  return order;
}

/// For each of the `elements` elements of A's operand vector (`isA`) or
/// B's, the index in `order` of the MFMA that reads it last (-1: none); the
/// slice j of block b starts at b * rowElements + j * perLane.
static SmallVector<int64_t> lastReaders(ArrayRef<MfmaSlot> order,
                                        int64_t elements, bool isA,
                                        int64_t rowElements, int64_t perLane) {
  SmallVector<int64_t> last(elements, -1);
  for (auto [index, slot] : llvm::enumerate(order)) {
    int64_t offset = (isA ? slot.m : slot.n) * rowElements + slot.j * perLane;
    for (int64_t e = offset; e < std::min(offset + perLane, elements); ++e)
      last[e] = index;
  }
  return last;
}

LogicalResult KernelLowering::lowerDot(DotOp op) {
  auto accLayout = cast<MmaAttr>(op.getC().getType().getEncoding());
  auto aLayout = dyn_cast<MmaOperandAttr>(op.getA().getType().getEncoding());
  auto bLayout = dyn_cast<MmaOperandAttr>(op.getB().getType().getEncoding());
  if (!aLayout || !bLayout || aLayout.getKWidth() != bLayout.getKWidth())
    return op.emitOpError()
           << "operands must be in matching #tessel.mma_operand layouts: run "
              "tessel-select-mfma";
  const MmaInstr &instr = accLayout.getInstruction();
  unsigned waveSize = accLayout.getEffectiveWaveSize();
  int64_t kWidth = aLayout.getKWidth();
  int64_t perLane = instr.getOperandElementsPerLane(waveSize);
  int64_t accPerLane = instr.getAccumulatorElementsPerLane(waveSize);
  ArrayRef<int64_t> waves = accLayout.getWaves();
  RankedTensorType cType = op.getC().getType();
  int64_t tileK = op.getA().getType().getDimSize(1);
  // The K elements one register row of the wave covers: kWidth per lane
  // times the lane groups along K for MFMA; a WMMA operand's lanes cover
  // exactly the instruction's K (gfx11 replicates it in both half-waves).
  int64_t groupK = instr.isWmma() ? instr.k : kWidth * (waveSize / instr.m);
  int64_t repM = cType.getDimSize(0) / (instr.m * waves[0]);
  int64_t repN = cType.getDimSize(1) / (instr.n * waves[1]);
  int64_t repK = tileK / groupK;
  // Each instruction takes `perLane` consecutive registers of a row of
  // repK * kWidth: part of a K group when kWidth is a multiple of perLane,
  // several groups when it is a fraction (an accumulator's K order).
  int64_t mfmasPerRow = repK * kWidth / perLane;

  Value a = mapping.lookup(op.getA()), bVector = mapping.lookup(op.getB());
  Value acc = mapping.lookup(op.getC());
  Type aElement = op.getA().getType().getElementType();
  auto operandSlice = [&](Value vector, int64_t offset) -> Value {
    Value slice = vector::ExtractStridedSliceOp::create(
        b, loc(), vector, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{perLane},
        ArrayRef<int64_t>{1});
    if (perLane == 1)
      return vector::ExtractOp::create(b, loc(), slice, ArrayRef<int64_t>{0});
    return slice;
  };
  // In a pipelined K loop the next step's operands are read from LDS while
  // this step's MFMAs run. In one marked tessel.reads_in_place, each LDS
  // read goes right after the last MFMA that reads the registers it
  // replaces, so that both steps share one set of operand registers, and
  // the MFMAs run K group by K group, the operand with fewer blocks
  // outermost, so that every register is freed early in the step and its
  // reload has most of a step to land (moveReadsAfterLastUse, pinStepSchedule).
  Block *block = op->getBlock();
  auto sourceLoop = dyn_cast<scf::ForOp>(op->getParentOp());
  bool readsAhead =
      sourceLoop &&
      llvm::any_of(block->getOps<LocalLoadOp>(),
                   [&](LocalLoadOp load) { return load->isBeforeInBlock(op); });
  StepMemoryOps ops = countStepMemoryOps(b.getInsertionBlock());
  vector::FromElementsOp nextA, nextB;
  if (readsAhead && ops.fenced && !instr.isWmma() &&
      sourceLoop->hasAttr(kReadsInPlaceAttrName)) {
    nextA = loweredNextStepRead(op, op.getA(), sourceLoop);
    nextB = loweredNextStepRead(op, op.getB(), sourceLoop);
  }
  bool inPlace = nextA || nextB;
  SmallVector<MfmaSlot> order = orderMfmas(repM, repN, mfmasPerRow, inPlace);
  // Each accumulator tile is taken out of `acc` before its first MFMA and
  // put back after its last.
  SmallVector<Value> tileAccs(repM * repN);
  SmallVector<int64_t> remaining(repM * repN, mfmasPerRow);
  SmallVector<Operation *> mfmaOps;
  for (const MfmaSlot &slot : order) {
    int64_t tile = slot.m * repN + slot.n;
    int64_t accOffset = tile * accPerLane;
    if (!tileAccs[tile])
      tileAccs[tile] = vector::ExtractStridedSliceOp::create(
          b, loc(), acc, ArrayRef<int64_t>{accOffset},
          ArrayRef<int64_t>{accPerLane}, ArrayRef<int64_t>{1});
    Value aSlice = operandSlice(a, slot.m * repK * kWidth + slot.j * perLane);
    Value bSlice =
        operandSlice(bVector, slot.n * repK * kWidth + slot.j * perLane);
    Value &tileAcc = tileAccs[tile];
    if (instr.isWmma()) {
      auto wmma =
          amdgpu::WMMAOp::create(b, loc(), tileAcc.getType(), instr.m, instr.n,
                                 instr.k, aSlice, bSlice, tileAcc);
      tileAcc = wmma.getResult();
      mfmaOps.push_back(wmma);
    } else {
      // A transposed accumulator is the product of the swapped operands.
      if (accLayout.getTransposed())
        std::swap(aSlice, bSlice);
      auto mfma = amdgpu::MFMAOp::create(b, loc(), tileAcc.getType(), instr.m,
                                         instr.n, instr.k,
                                         /*blocks=*/1, aSlice, bSlice, tileAcc);
      if (op.getXf32())
        mfma.setReducePrecision(true);
      tileAcc = mfma.getResult();
      mfmaOps.push_back(mfma);
    }
    if (--remaining[tile] == 0)
      acc = vector::InsertStridedSliceOp::create(b, loc(), tileAcc, acc,
                                                 ArrayRef<int64_t>{accOffset},
                                                 ArrayRef<int64_t>{1});
  }
  SmallVector<int64_t> readsAfterMfma(mfmaOps.size(), 0);
  int64_t movedReads = 0;
  for (auto [next, isA] : {std::pair{nextA, true}, std::pair{nextB, false}}) {
    if (!next)
      continue;
    SmallVector<int64_t> last =
        lastReaders(order, next.getNumOperands(), isA, repK * kWidth, perLane);
    movedReads += moveReadsAfterLastUse(next, last, mfmaOps, readsAfterMfma);
  }
  (void)aElement;
  mapping.map(op.getResult(), acc);
  if (movedReads > 0 &&
      pinStepSchedule(mfmaOps, llvm::range_size(block->getOps<DotOp>()) > 1))
    return success();

  // In a pipelined K loop the step's memory instructions are independent of
  // these MFMAs: ask the backend's scheduler to interleave them, so that
  // they issue in the matrix pipe's shadow and their latency hides behind
  // it.
  if (readsAhead) {
    // Instruction classes of the backend's sched_group_barrier.
    constexpr uint32_t kMfmaMask = 0x8, kVmemReadMask = 0x20,
                       kDsReadMask = 0x100, kDsWriteMask = 0x200;
    int64_t mfmas = repM * repN * mfmasPerRow;
    // The step's LDS stores, the global loads two steps ahead and the next
    // step's LDS reads (after the barrier the stores precede), spread evenly
    // over the MFMAs, which depend on none of them. In a K loop unrolled by
    // two (two dots in the body) the loads write the other step's registers,
    // so they go first: the stores that wait for them a step later then
    // find them a whole step old. In a rolled loop they overwrite the
    // registers the stores read, so the stores go first.
    // Other loops (attention's) interleave one LDS read per MFMA.
    bool unrolled = llvm::range_size(block->getOps<DotOp>()) > 1;
    SmallVector<uint32_t> sequence;
    if (ops.fenced && unrolled)
      sequence.append(ops.globalLoads, kVmemReadMask);
    if (ops.fenced)
      sequence.append(ops.ldsStores, kDsWriteMask);
    if (ops.fenced && !unrolled)
      sequence.append(ops.globalLoads, kVmemReadMask);
    // LDS reads placed in place go where they were put (readsAfterMfma).
    sequence.append(ops.fenced ? ops.ldsLoads - movedReads : mfmas,
                    kDsReadMask);
    int64_t perMfma = llvm::divideCeil(int64_t(sequence.size()), mfmas);
    // On CDNA, a workgroup of at most four waves has one wave per SIMD: the
    // other waves sharing the SIMD belong to other workgroups and run out of
    // phase with it. Where the step's memory instructions fit two per MFMA into
    // the first half of its MFMAs, they go there: the next step's LDS reads
    // then have the second half to land before its first MFMA reads them.
    // (Workgroups of eight waves run their two waves per SIMD in phase, and
    // their memory instructions bunched together lose: docs/performance.md,
    // "Memory instructions in the first half of the step".)
    int64_t memoryOps = sequence.size();
    if (ops.fenced && !instr.isWmma() && waves[0] * waves[1] <= 4 &&
        memoryOps > mfmas / 2 && memoryOps <= mfmas)
      perMfma = 2;
    // Where pinStepSchedule could not fix the step: reads in place wait for
    // the barrier, which the stores and the global loads precede (the
    // barrier's fences keep them in front of it): they go in the groups of
    // the MFMAs up to the first that frees registers.
    if (inPlace) {
      int64_t firstFreeing =
          llvm::find_if(readsAfterMfma, [](int64_t n) { return n > 0; }) -
          readsAfterMfma.begin();
      perMfma = std::max(
          perMfma, int64_t(llvm::divideCeil(memoryOps, firstFreeing + 1)));
    }
    size_t next = 0;
    // A product whose B operand stays in registers for the whole loop
    // (attention's first product S^T = K Q^T, decode's, the backward's
    // products with a loop-invariant operand): its A operand's LDS reads go
    // ahead of the first MFMA. On the 8-deep MFMAs of gfx90a and gfx942 two
    // of them, so that each MFMA's operand was asked for two MFMAs before it
    // rather than one (docs/performance.md, "K read two MFMAs ahead"). On
    // gfx950's 16-deep instructions, whose MFMA takes half the clocks of an
    // LDS read's latency, all of them: one read ahead left a lone wave 1534
    // clocks an iteration for 672 of issue at head dim 128 (docs/
    // performance.md, "Scalar buffer offsets, byte LDS offsets, K read
    // ahead").
    bool firstProduct = !ops.fenced && !instr.isWmma() &&
                        sourceLoop.isDefinedOutsideOfLoop(op.getB());
    // In a ping-pong loop's matrix phase (tessel.phase_barrier) the other
    // wave of the SIMD runs its softmax and has no matrix work to fill the
    // pipe while this one waits: the phase's other LDS reads (V^T, for the
    // second product) are spread over the first product's MFMAs, so that
    // the second product finds all its operands. Where the first product's
    // operand was read in the softmax phase (three LDS slots), none of them
    // goes ahead of its first MFMA.
    bool pingPong = isPingPongLoop(sourceLoop);
    auto operandRead = op.getA().getDefiningOp<LocalLoadOp>();
    bool readInSoftmaxPhase =
        pingPong && operandRead &&
        llvm::any_of(block->getOps<PhaseBarrierOp>(), [&](PhaseBarrierOp bar) {
          return bar.getMatrix() && operandRead->isBeforeInBlock(bar) &&
                 bar->isBeforeInBlock(op);
        });
    int64_t leading = readInSoftmaxPhase ? 0 : instr.k <= 8 ? 2 : mfmas;
    if (firstProduct && pingPong) {
      sequence.assign(std::max<int64_t>(0, ops.ldsLoads - leading),
                      kDsReadMask);
      perMfma = llvm::divideCeil(int64_t(sequence.size()), mfmas);
    }
    if (firstProduct && leading > 0)
      ROCDL::SchedGroupBarrier::create(b, loc(), kDsReadMask, leading, 0);
    for (int64_t i = 0; i < mfmas; ++i) {
      ROCDL::SchedGroupBarrier::create(b, loc(), kMfmaMask, 1, 0);
      size_t end = std::min(sequence.size(), next + size_t(perMfma));
      // One group per run of the same kind.
      while (next < end) {
        size_t run = next;
        while (run < end && sequence[run] == sequence[next])
          ++run;
        ROCDL::SchedGroupBarrier::create(b, loc(), sequence[next], run - next,
                                         0);
        next = run;
      }
      if (readsAfterMfma[i] > 0)
        ROCDL::SchedGroupBarrier::create(b, loc(), kDsReadMask,
                                         readsAfterMfma[i], 0);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, broadcasts and coordinates
//===----------------------------------------------------------------------===//

/// Whether every basis of `layout` moves along one tile dimension only.
static bool basesAreAxisAligned(const LinearLayout &layout) {
  for (const LinearLayout::InDim &in : layout.getInDims())
    for (const auto &basis : in.bases)
      if (llvm::count_if(basis, [](int32_t v) { return v != 0; }) > 1)
        return false;
  return true;
}

LogicalResult KernelLowering::lowerReduce(ReduceOp op) {
  RankedTensorType type = op.getSource().getType();
  auto emitError = [&] { return op.emitOpError(); };
  FailureOr<LinearLayout> layout = getTileLayout(type, emitError);
  FailureOr<LinearLayout> reduced =
      getTileLayout(op.getResult().getType(), emitError);
  if (failed(layout) || failed(reduced))
    return failure();
  unsigned axis = op.getAxis();
  if (!basesAreAxisAligned(*layout))
    return op.emitOpError() << "reductions need a layout whose bases move "
                               "along one dimension each";
  for (int32_t bit = 0; bit < layout->getInDimSizeLog2(dims::kWave); ++bit)
    if (layout->getBasis(dims::kWave, bit)[axis] != 0)
      return op.emitOpError() << "the reduced dimension is split across "
                                 "waves; reductions stay within a wave";
  if (!type.getElementType().isIntOrFloat())
    return op.emitOpError() << "reduces " << type.getElementType()
                            << " elements; lanes exchange integers and "
                               "floats only (cast an index tile to i32)";
  bool isMax = op.getKind() == "max";
  auto combine = [&](Value x, Value y) -> Value {
    if (isa<FloatType>(x.getType()))
      return isMax ? arith::MaxNumFOp::create(b, loc(), x, y).getResult()
                   : arith::AddFOp::create(b, loc(), x, y).getResult();
    return isMax ? arith::MaxSIOp::create(b, loc(), x, y).getResult()
                 : arith::AddIOp::create(b, loc(), x, y).getResult();
  };
  Value source = mapping.lookup(op.getSource());
  int64_t registers = layout->getInDimSize(dims::kRegister);
  // Registers along the axis fold into the one whose axis bits are zero.
  int64_t axisMask = 0;
  for (int32_t bit = 0; bit < layout->getInDimSizeLog2(dims::kRegister); ++bit)
    if (layout->getBasis(dims::kRegister, bit)[axis] != 0)
      axisMask |= int64_t(1) << bit;
  llvm::SmallMapVector<int64_t, SmallVector<int64_t>, 16> foldRegisters;
  for (int64_t r = 0; r < registers; ++r)
    foldRegisters[r & ~axisMask].push_back(r);
  // A sum of f16 values widened to f32 on CDNA: v_dot2_f32_f16 adds a pair
  // of them (one register) to an f32 sum, half the instructions of the
  // adds (attention's row sums of P). CDNA3 and CDNA4 do not issue a dot
  // product beside a matrix instruction of its own wave (docs/hardware.md,
  // "Vector instructions that wait for their wave's product"): there the
  // adds, which do, take the sums, except in a ping-pong loop, whose
  // phases keep the sums away from the wave's products (gfx942 f16 head
  // dim 64, four waves: 71.7 -> 73.9 %, causal 69.7 -> 71.3 %).
  auto sourceLoop = op->getParentOfType<scf::ForOp>();
  bool dotIssuesBesideProducts = chip.isCDNA() && chip.isaVersion() < 9400;
  auto widened = op.getSource().getDefiningOp<arith::ExtFOp>();
  auto holdsPair = [](ArrayRef<int64_t> group) {
    for (auto [i, r] : llvm::enumerate(group))
      if (r % 2 == 0 && i + 1 < group.size() && group[i + 1] == r + 1)
        return true;
    return false;
  };
  if (!isMax && widened && chip.isCDNA() &&
      (dotIssuesBesideProducts || isPingPongLoop(sourceLoop)) &&
      getElementTypeOrSelf(widened.getIn().getType()).isF16() &&
      type.getElementType().isF32() &&
      llvm::any_of(foldRegisters, [&](const auto &entry) {
        return holdsPair(entry.second);
      })) {
    Value halves = mapping.lookup(widened.getIn());
    llvm::SmallMapVector<int64_t, Value, 16> partial;
    for (auto &[representative, group] : foldRegisters)
      partial[representative] = sumHalvesByPairs(halves, group);
    return finishReduce(op, *layout, *reduced, std::move(partial), combine);
  }
  llvm::SmallMapVector<int64_t, SmallVector<Value>, 16> folds;
  for (auto &[representative, group] : foldRegisters)
    for (int64_t r : group)
      folds[representative].push_back(
          vector::ExtractOp::create(b, loc(), source, ArrayRef<int64_t>{r}));
  // A max folds in a chain (the backend joins pairs of steps into
  // v_max3); a sum folds as a pairwise tree (shorter dependency chains,
  // smaller rounding error). Packing the tree's pairs into v_pk_add_f32
  // saved 12 VALU instructions per gfx942 D=128 key step and nothing in
  // the model's prediction of the four-wave loops, whose phases moved, so
  // the sum stays scalar there (packedSums: the ping-pong loops).
  auto foldTree = [&](SmallVector<Value> values) -> Value {
    while (values.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < values.size(); i += 2)
        next.push_back(combine(values[i], values[i + 1]));
      if (values.size() % 2)
        next.push_back(values.back());
      values = std::move(next);
    }
    return values.front();
  };
  // In a ping-pong loop (tessel.phase_barrier), whose phases no longer
  // move with the schedule, an f32 sum folds its values as pairs of
  // v_pk_add_f32 (the even and the odd ones, each as a tree), then adds the
  // pair's two halves: about half the adds.
  bool packedSums =
      !isMax && type.getElementType().isF32() && isPingPongLoop(sourceLoop);
  auto foldPairs = [&](SmallVector<Value> values) -> Value {
    auto pairType = VectorType::get({2}, b.getF32Type());
    SmallVector<Value> pairs;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      pairs.push_back(vector::FromElementsOp::create(
          b, loc(), pairType, ValueRange{values[i], values[i + 1]}));
    while (pairs.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < pairs.size(); i += 2)
        next.push_back(arith::AddFOp::create(b, loc(), pairs[i], pairs[i + 1]));
      if (pairs.size() % 2)
        next.push_back(pairs.back());
      pairs = std::move(next);
    }
    Value sum = combine(
        vector::ExtractOp::create(b, loc(), pairs[0], ArrayRef<int64_t>{0}),
        vector::ExtractOp::create(b, loc(), pairs[0], ArrayRef<int64_t>{1}));
    return values.size() % 2 ? combine(sum, values.back()) : sum;
  };
  llvm::SmallMapVector<int64_t, Value, 16> partial;
  for (auto &[representative, values] : folds) {
    if (packedSums && values.size() >= 4) {
      partial[representative] = foldPairs(values);
      continue;
    }
    if (isMax) {
      Value folded = values.front();
      for (Value value : ArrayRef(values).drop_front())
        folded = combine(folded, value);
      partial[representative] = folded;
      continue;
    }
    partial[representative] = foldTree(values);
  }
  return finishReduce(op, *layout, *reduced, std::move(partial), combine);
}

/// v_permlane32_swap of two copies of `value` leaves, in every lane, the
/// lane's own value in one result and the other half's in the other (the
/// low half's own in the first, the high half's in the second), so a
/// commutative combine of the two results needs no select on the lane's
/// half. (A shuffle by 32 lowers to the same swap and then compares and
/// selects to pick the other half's value: two more VALU instructions.)
Value KernelLowering::combineWithOtherHalf(
    Value value, llvm::function_ref<Value(Value, Value)> combine) {
  Type type = value.getType();
  Type i32 = b.getI32Type();
  Value bits =
      type == i32 ? value : arith::BitcastOp::create(b, loc(), i32, value);
  auto pair = LLVM::LLVMStructType::getLiteral(b.getContext(), {i32, i32});
  Value swapped = ROCDL::Permlane32SwapOp::create(
      b, loc(), pair, bits, bits, /*fi=*/false, /*boundControl=*/false);
  auto half = [&](int64_t index) -> Value {
    Value result = LLVM::ExtractValueOp::create(b, loc(), swapped, index);
    return type == i32 ? result
                       : arith::BitcastOp::create(b, loc(), type, result);
  };
  Value first = half(0), second = half(1);
  return combine(first, second);
}

LogicalResult
KernelLowering::finishReduce(ReduceOp op, const LinearLayout &layout,
                             const LinearLayout &reduced,
                             llvm::SmallMapVector<int64_t, Value, 16> partial,
                             llvm::function_ref<Value(Value, Value)> combine) {
  RankedTensorType type = op.getSource().getType();
  unsigned axis = op.getAxis();
  // Then across the lanes holding the rest of the axis: a butterfly (none
  // within lanes: each lane keeps its part).
  int32_t waveSize = chip.defaultWaveSize;
  for (int32_t bit = 0; bit < layout.getInDimSizeLog2(dims::kLane); ++bit) {
    if (layout.getBasis(dims::kLane, bit)[axis] == 0 || op.getWithinLanes())
      continue;
    bool halves = waveSize == 64 && (1 << bit) == 32 && chip.name == "gfx950";
    for (auto &[representative, value] : partial) {
      if (halves &&
          (value.getType().isF32() || value.getType().isInteger(32))) {
        value = combineWithOtherHalf(value, combine);
        continue;
      }
      auto shuffle = gpu::ShuffleOp::create(b, loc(), value, 1 << bit, waveSize,
                                            gpu::ShuffleMode::XOR);
      value = combine(value, shuffle.getShuffleResult());
    }
  }
  // The reduced layout keeps the source's other registers, in order.
  SmallVector<Value> elements;
  unsigned other = 1 - axis;
  for (int64_t r = 0; r < reduced.getInDimSize(dims::kRegister); ++r) {
    int32_t coordinate = reduced.apply({int32_t(r), 0, 0})[other];
    auto holder = llvm::find_if(partial, [&](const auto &entry) {
      return layout.apply({int32_t(entry.first), 0, 0})[other] == coordinate;
    });
    if (holder == partial.end())
      return op.emitOpError() << "no register of the source holds position "
                              << coordinate << " of the result";
    elements.push_back(holder->second);
  }
  mapping.map(op.getResult(), vector::FromElementsOp::create(
                                  b, loc(),
                                  VectorType::get({int64_t(elements.size())},
                                                  type.getElementType()),
                                  elements));
  return success();
}

Value KernelLowering::sumHalvesByPairs(Value halves,
                                       ArrayRef<int64_t> registers) {
  Type f32 = b.getF32Type();
  auto pairType = VectorType::get({2}, b.getF16Type());
  Value ones = arith::ConstantOp::create(
      b, loc(), pairType,
      SplatElementsAttr::get(pairType, b.getFloatAttr(b.getF16Type(), 1.0)));
  Value noClamp = arith::ConstantIntOp::create(b, loc(), 0, 1);
  Value zero = arith::ConstantOp::create(b, loc(), f32, b.getF32FloatAttr(0));
  // Two chains of pairs, so that each instruction need not wait for the
  // one before; a register without its pair in the group is added alone.
  std::array<Value, 2> sums;
  Value rest;
  auto add = [&](Value &sum, Value value) {
    sum = sum ? arith::AddFOp::create(b, loc(), sum, value).getResult() : value;
  };
  unsigned chain = 0;
  for (size_t i = 0; i < registers.size(); ++i) {
    int64_t r = registers[i];
    if (r % 2 == 0 && i + 1 < registers.size() && registers[i + 1] == r + 1) {
      Value pair = vector::ExtractStridedSliceOp::create(
          b, loc(), halves, ArrayRef<int64_t>{r}, ArrayRef<int64_t>{2},
          ArrayRef<int64_t>{1});
      Value &sum = sums[chain++ % 2];
      Value accumulator = sum ? sum : zero;
      sum = LLVM::CallIntrinsicOp::create(
                b, loc(), f32, b.getStringAttr("llvm.amdgcn.fdot2"),
                ValueRange{pair, ones, accumulator, noClamp})
                .getResult(0);
      ++i;
      continue;
    }
    Value half =
        vector::ExtractOp::create(b, loc(), halves, ArrayRef<int64_t>{r});
    add(rest, arith::ExtFOp::create(b, loc(), f32, half));
  }
  Value total;
  for (Value sum : sums)
    if (sum)
      add(total, sum);
  if (rest)
    add(total, rest);
  return total;
}

/// Whether any of a lane's registers of `cmp`'s i1 tile is true, where the
/// tile compares x > limit (or >=) with a limit broadcast from one value per
/// row or column: each lane takes the maximum of the registers of x that
/// share a limit and compares it once (maxnum ignores NaN, which compares
/// false either way). For attention's lazy rescale test on a block's scores
/// that is the block maximum without the exchange between the lanes that
/// share a query. Null where the tile has another form.
Value KernelLowering::anyAboveBroadcastLimit(arith::CmpFOp cmp) {
  auto predicate = cmp.getPredicate();
  if (predicate != arith::CmpFPredicate::OGT &&
      predicate != arith::CmpFPredicate::OGE)
    return Value();
  if (!cmp.getRhs().getDefiningOp<BroadcastOp>())
    return Value();
  Value x = mapping.lookup(cmp.getLhs());
  auto limits =
      mapping.lookup(cmp.getRhs()).getDefiningOp<vector::FromElementsOp>();
  if (!limits)
    return Value();
  // The broadcast's registers are extracts of the limit's registers: those
  // extracting the same one share a limit.
  llvm::MapVector<std::pair<Value, int64_t>, SmallVector<int64_t>> groups;
  for (auto [r, element] : llvm::enumerate(limits.getElements())) {
    auto extract = element.getDefiningOp<vector::ExtractOp>();
    if (!extract || extract.hasDynamicPosition() ||
        extract.getStaticPosition().size() != 1)
      return Value();
    groups[{extract.getSource(), extract.getStaticPosition()[0]}].push_back(r);
  }
  Value any;
  for (auto &[limit, registers] : groups) {
    Value maximum;
    for (int64_t r : registers) {
      Value value =
          vector::ExtractOp::create(b, loc(), x, ArrayRef<int64_t>{r});
      maximum =
          maximum
              ? arith::MaxNumFOp::create(b, loc(), maximum, value).getResult()
              : value;
    }
    Value above = arith::CmpFOp::create(
        b, loc(), predicate, maximum, limits.getElements()[registers.front()]);
    any = any ? arith::OrIOp::create(b, loc(), any, above).getResult() : above;
  }
  return any;
}

/// Each lane ORs its registers; the wave's ballot is nonzero where any lane
/// held a true element.
LogicalResult KernelLowering::lowerWaveAny(WaveAnyOp op) {
  Value lane;
  if (auto cmp = op.getSource().getDefiningOp<arith::CmpFOp>())
    lane = anyAboveBroadcastLimit(cmp);
  if (!lane)
    lane = vector::ReductionOp::create(b, loc(), vector::CombiningKind::OR,
                                       mapping.lookup(op.getSource()));
  Type mask = b.getIntegerType(chip.defaultWaveSize);
  Value ballot = ROCDL::BallotOp::create(b, loc(), mask, lane);
  Value none = arith::ConstantIntOp::create(b, loc(), mask, 0);
  mapping.map(
      op.getResult(),
      arith::CmpIOp::create(b, loc(), arith::CmpIPredicate::ne, ballot, none));
  return success();
}

/// A workgroup barrier (`rocdl.barrier`: release and acquire fences around
/// s_barrier) between two scheduling barriers, so that the backend keeps
/// each phase's instructions on their side. Marked
/// kPhaseBarrierAttrName: the emulator lets waves meet at different phase
/// barriers, as the hardware's s_barrier counts arrivals wherever they are.
/// With `half`, a uniform branch on the wave's index (read into a scalar
/// register) lets only that half of the waves wait.
LogicalResult KernelLowering::lowerPhaseBarrier(PhaseBarrierOp op) {
  auto barrier = [&] {
    ROCDL::SchedBarrier::create(b, loc(), 0);
    if (op.getMatrix()) {
      // The softmax phase before it writes no LDS (the other half's matrix
      // phase released its writes at its own barrier): no release fence,
      // which would wait for the phase's LDS reads (a ping-pong loop with
      // three slots reads the block's K there) in front of the barrier
      // rather than behind it.
      auto wait = ROCDL::SBarrierOp::create(b, loc());
      wait->setAttr(kPhaseBarrierAttrName, b.getUnitAttr());
      LLVM::FenceOp::create(b, loc(), LLVM::AtomicOrdering::acquire,
                            "workgroup");
    } else {
      auto wait = ROCDL::BarrierOp::create(b, loc());
      wait->setAttr(kPhaseBarrierAttrName, b.getUnitAttr());
    }
    if (op.getMatrix())
      ROCDL::SetPrioOp::create(b, loc(), 1);
    ROCDL::SchedBarrier::create(b, loc(), 0);
  };
  std::optional<int64_t> half = op.getHalf();
  if (!half) {
    barrier();
    return success();
  }
  auto size = kernel.getKnownBlockSizeAttr();
  int64_t waves = size ? size[0] / chip.defaultWaveSize : 0;
  if (waves < 2 || waves % 2)
    return op.emitOpError() << "half a workgroup's waves wait here: the "
                               "workgroup needs an even number of waves, got "
                            << waves;
  Value index = arith::IndexCastOp::create(b, loc(), b.getI32Type(), wave);
  Value uniform =
      ROCDL::ReadfirstlaneOp::create(b, loc(), b.getI32Type(), index);
  Value upper = arith::CmpIOp::create(
      b, loc(), arith::CmpIPredicate::uge, uniform,
      arith::ConstantIntOp::create(b, loc(), b.getI32Type(), waves / 2));
  Value mine = *half ? upper
                     : arith::XOrIOp::create(b, loc(), upper,
                                             arith::ConstantIntOp::create(
                                                 b, loc(), b.getI1Type(), 1));
  auto branch = scf::IfOp::create(b, loc(), TypeRange(), mine,
                                  /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  barrier();
  return success();
}

LogicalResult KernelLowering::lowerBroadcast(BroadcastOp op) {
  RankedTensorType sourceType = op.getSource().getType(),
                   resultType = op.getResult().getType();
  auto emitError = [&] { return op.emitOpError(); };
  FailureOr<LinearLayout> from = getTileLayout(sourceType, emitError);
  FailureOr<LinearLayout> to = getTileLayout(resultType, emitError);
  if (failed(from) || failed(to))
    return failure();
  // The coordinates that identify a value: those the source does not
  // broadcast over.
  SmallVector<unsigned, 2> kept;
  for (unsigned d = 0; d < 2; ++d)
    if (sourceType.getDimSize(d) != 1 || resultType.getDimSize(d) == 1)
      kept.push_back(d);
  auto sameKept = [&](ArrayRef<int32_t> x, ArrayRef<int32_t> y) {
    return llvm::all_of(kept, [&](unsigned d) { return x[d] == y[d]; });
  };
  // The rows (columns) a lane holds must come from the same lane and wave
  // bits.
  for (StringRef name : {dims::kLane, dims::kWave}) {
    if (from->getInDimSizeLog2(name) != to->getInDimSizeLog2(name))
      return op.emitOpError() << "layouts of different " << name << " counts";
    for (int32_t bit = 0; bit < from->getInDimSizeLog2(name); ++bit)
      if (!sameKept(from->getBasis(name, bit), to->getBasis(name, bit)))
        return op.emitOpError()
               << "the rows of the two layouts are not held by the same "
                  "lanes: broadcast within a lane is impossible";
  }
  Value source = mapping.lookup(op.getSource());
  SmallVector<Value> elements;
  for (int64_t r = 0; r < to->getInDimSize(dims::kRegister); ++r) {
    SmallVector<int32_t, 4> coords = to->apply({int32_t(r), 0, 0});
    std::optional<int64_t> holder;
    for (int64_t s = 0; s < from->getInDimSize(dims::kRegister) && !holder; ++s)
      if (sameKept(from->apply({int32_t(s), 0, 0}), coords))
        holder = s;
    if (!holder)
      return op.emitOpError() << "element (" << coords[0] << ", " << coords[1]
                              << ") of the result has no register in the "
                                 "source";
    elements.push_back(vector::ExtractOp::create(b, loc(), source,
                                                 ArrayRef<int64_t>{*holder}));
  }
  mapping.map(op.getResult(), vector::FromElementsOp::create(
                                  b, loc(),
                                  VectorType::get({int64_t(elements.size())},
                                                  resultType.getElementType()),
                                  elements));
  return success();
}

LogicalResult KernelLowering::lowerIota(IotaOp op) {
  RankedTensorType type = op.getResult().getType();
  auto emitError = [&] { return op.emitOpError(); };
  FailureOr<LinearLayout> layout = getTileLayout(type, emitError);
  if (failed(layout))
    return failure();
  unsigned dim = op.getDim();
  Value lanePart = laneCoordinates(*layout)[dim];
  SmallVector<Value> elements;
  for (int64_t r = 0; r < layout->getInDimSize(dims::kRegister); ++r) {
    Value coord = xorIndex(lanePart, layout->apply({int32_t(r), 0, 0})[dim]);
    elements.push_back(
        arith::IndexCastOp::create(b, loc(), b.getI32Type(), coord));
  }
  mapping.map(op.getResult(),
              vector::FromElementsOp::create(
                  b, loc(),
                  VectorType::get({int64_t(elements.size())}, b.getI32Type()),
                  elements));
  return success();
}

//===----------------------------------------------------------------------===//
// Control flow and elementwise ops
//===----------------------------------------------------------------------===//

/// The per-lane type of a value: tiles become vectors.
static FailureOr<Type> lowerType(Type type, Operation *op) {
  auto tile = dyn_cast<RankedTensorType>(type);
  if (!tile)
    return type;
  auto emitError = [&] { return op->emitOpError(); };
  FailureOr<LinearLayout> layout = getTileLayout(tile, emitError);
  if (failed(layout))
    return failure();
  return Type(VectorType::get({layout->getInDimSize(dims::kRegister)},
                              tile.getElementType()));
}

/// The LLVM loop annotation of a stream-K workgroup's loop over its tiles:
/// no loop-invariant code motion. Hoisted out of it, each tile's lane
/// addresses for its stores and the merge of cut tiles would stay live
/// through the key loop of every tile (40-60 VGPRs past 256 at head dim
/// 128, one wave per SIMD instead of two).
LLVM::LoopAnnotationAttr KernelLowering::getTileLoopAnnotation() {
  MLIRContext *context = b.getContext();
  auto licm = LLVM::LoopLICMAttr::get(context, b.getBoolAttr(true),
                                      /*versioningDisable=*/BoolAttr());
  return LLVM::LoopAnnotationAttr::get(
      context, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{},
      /*unroll=*/{}, /*unrollAndJam=*/{}, licm, /*distribute=*/{},
      /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
      /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
      /*parallelAccesses=*/{});
}

LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  if (op->hasAttr(kFreshLanesAttrName))
    return lowerWithFreshLanes(op);
  return lowerLoop(op);
}

LogicalResult KernelLowering::lowerLoop(scf::ForOp op) {
  SmallVector<Value> inits = lowerLoopInits(op);
  auto loop = scf::ForOp::create(b, loc(), mapping.lookup(op.getLowerBound()),
                                 mapping.lookup(op.getUpperBound()),
                                 mapping.lookup(op.getStep()), inits);
  mapping.map(op.getInductionVar(), loop.getInductionVar());
  if (op->hasAttr(kTileLoopAttrName))
    loop->setAttr("loop_annotation", getTileLoopAnnotation());
  for (auto [from, to] :
       llvm::zip(op.getRegionIterArgs(), loop.getRegionIterArgs()))
    mapping.map(from, to);
  // A loop without results comes with a terminator; the lowered body
  // brings its own.
  if (inits.empty())
    loop.getBody()->getTerminator()->erase();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  if (failed(lowerBlock(*op.getBody())))
    return failure();
  mapping.map(op.getResults(), loop.getResults());
  return success();
}

LogicalResult KernelLowering::lowerWithFreshLanes(scf::ForOp op) {
  // The lane id comes from the hardware's lane count (v_mbcnt), which the
  // compiler cannot prove equal to the entry's thread id modulo the wave
  // size: nothing derived from it is merged with the entry's values. (That
  // holds for LLVM 22; a later LLVM that rewrites the lane count of a
  // workgroup of whole waves as the thread id's low bits would merge them
  // again, and the stream-K kernels' spill checks in
  // test/Target/attention-quality.mlir would fail.)
  Value savedLane = lane, savedWave = wave;
  Operation *savedPrologueEnd = prologueEnd;
  Value thread = gpu::ThreadIdOp::create(b, loc(), gpu::Dimension::x);
  lane = gpu::LaneIdOp::create(b, loc(), /*upper_bound=*/IntegerAttr());
  Value waveStart = arith::SubIOp::create(b, loc(), thread, lane);
  wave = arith::DivUIOp::create(b, loc(), waveStart,
                                constIndex(chip.defaultWaveSize));
  prologueEnd = wave.getDefiningOp();
  LogicalResult lowered = lowerLoop(op);
  lane = savedLane;
  wave = savedWave;
  prologueEnd = savedPrologueEnd;
  return lowered;
}

LogicalResult KernelLowering::lowerIf(scf::IfOp op) {
  SmallVector<Type> types;
  for (Type type : op.getResultTypes()) {
    FailureOr<Type> lowered = lowerType(type, op);
    if (failed(lowered))
      return failure();
    types.push_back(*lowered);
  }
  bool withElse = !op.getElseRegion().empty();
  Value condition = mapping.lookup(op.getCondition());
  // LLVM turns the expectation into branch weights and lays a rarely taken
  // branch's block out of the loop's line.
  if (op->hasAttr(kUnlikelyAttrName)) {
    Value expected = arith::ConstantIntOp::create(b, loc(), b.getI1Type(), 0);
    condition = LLVM::ExpectOp::create(b, loc(), condition, expected);
  }
  auto lowered = scf::IfOp::create(b, loc(), types, condition, withElse);
  OpBuilder::InsertionGuard guard(b);
  // Each branch lowers its own terminator (its yield); a branch without
  // results came with one from the builder, which goes.
  for (auto [from, to] :
       {std::pair(op.thenBlock(), lowered.thenBlock()),
        std::pair(withElse ? op.elseBlock() : nullptr,
                  withElse ? lowered.elseBlock() : nullptr)}) {
    if (!from)
      continue;
    if (!to->empty())
      to->getTerminator()->erase();
    b.setInsertionPointToEnd(to);
    for (Operation &nested : *from)
      if (failed(lowerOp(nested)))
        return failure();
  }
  mapping.map(op.getResults(), lowered.getResults());
  return success();
}

/// One lane of the workgroup counts the arrival; the others learn whether
/// it was the last through LDS. The fences order the partial stores before
/// the count (release) and the last workgroup's loads of the other partials
/// after it (acquire) at device ("agent") scope: the workgroups of a tile may
/// run on different XCDs, whose L2s the fences write back and invalidate.
/// The count is a relaxed device-scope atomic between them.
/// The flag borrows the first element of LDS the kernel already has (its
/// operand buffers, idle between the barriers around it: every later write
/// phase starts with a barrier) so that it costs no LDS of its own; a
/// kernel without LDS gets one word.
LogicalResult KernelLowering::lowerSplitArrive(SplitArriveOp op) {
  Location l = loc();
  Value zero = constIndex(0);
  Value counters = mapping.lookup(op.getCounters());
  SmallVector<Value> indices = llvm::map_to_vector(
      op.getIndices(), [&](Value v) { return mapping.lookup(v); });
  ArrayRef<BlockArgument> lds = kernel.getWorkgroupAttributions();
  Value slot = lds.empty() ? Value() : Value(lds.front());
  if (!slot)
    slot = kernel.addWorkgroupAttribution(
        MemRefType::get({1}, b.getI32Type(), AffineMap(),
                        gpu::AddressSpaceAttr::get(
                            b.getContext(), gpu::AddressSpace::Workgroup)),
        op.getLoc());
  Type element = cast<MemRefType>(slot.getType()).getElementType();
  Type bits = b.getIntegerType(element.getIntOrFloatBitWidth());
  Value firstLane = arith::AndIOp::create(
      b, l, arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, wave, zero),
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, lane, zero));

  LLVM::FenceOp::create(b, l, LLVM::AtomicOrdering::release,
                        b.getStringAttr("agent"));
  gpu::BarrierOp::create(b, l);
  auto count = scf::IfOp::create(b, l, firstLane, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(count.thenBlock()->getTerminator());
    // The count itself is relaxed, at device scope: the fences around it
    // order the partials. (memref.atomic_rmw would lower to an acq_rel
    // atomic at system scope, which the backend brackets with a second L2
    // write-back and a system-wide invalidate, `buffer_wbl2 sc0 sc1` and
    // `buffer_inv sc0 sc1` on gfx942, on top of the fences' own.)
    Value one = arith::ConstantIntOp::create(b, l, 1, 32);
    Value before = LLVM::AtomicRMWOp::create(
        b, l, LLVM::AtomicBinOp::add, globalPointerAt(counters, indices), one,
        LLVM::AtomicOrdering::monotonic, "agent");
    // The last to arrive saw the count less one before its own addition.
    Value lastBefore =
        op.getCount()
            ? arith::IndexCastOp::create(
                  b, l, b.getI32Type(),
                  arith::SubIOp::create(b, l, mapping.lookup(op.getCount()),
                                        constIndex(1)))
                  .getResult()
            : arith::ConstantIntOp::create(b, l, *op.getSplits() - 1, 32)
                  .getResult();
    Value isLast = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, before,
                                         lastBefore);
    Value flag = arith::ExtUIOp::create(b, l, bits, isLast);
    if (element != bits)
      flag = arith::BitcastOp::create(b, l, element, flag);
    memref::StoreOp::create(b, l, flag, slot, zero);
  }
  gpu::BarrierOp::create(b, l);
  Value flag = memref::LoadOp::create(b, l, slot, zero);
  if (element != bits)
    flag = arith::BitcastOp::create(b, l, bits, flag);
  Value last =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, flag,
                            arith::ConstantIntOp::create(b, l, bits, 0));
  auto acquire = scf::IfOp::create(b, l, last, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(acquire.thenBlock()->getTerminator());
    LLVM::FenceOp::create(b, l, LLVM::AtomicOrdering::acquire,
                          b.getStringAttr("agent"));
    // Every split has arrived: the counter is free for the next launch.
    auto reset = scf::IfOp::create(b, l, firstLane, /*withElseRegion=*/false);
    b.setInsertionPoint(reset.thenBlock()->getTerminator());
    memref::StoreOp::create(b, l, arith::ConstantIntOp::create(b, l, 0, 32),
                            counters, indices);
  }
  mapping.map(op.getLast(), last);
  return success();
}

/// exp2 and log2 allowed to be approximate (`afn`: attention's softmax and
/// its sums): the hardware's v_exp_f32 or v_log_f32 alone, one per element.
/// Without the flag the backend wraps each one in a rescaling for denormal
/// results (exp2) or arguments (log2): three more VALU instructions and a
/// compare per element for values no softmax sum can see.
LogicalResult KernelLowering::lowerNativeTranscendental(Operation *op) {
  Value source = mapping.lookup(op->getOperand(0));
  auto native = [&](Value x) -> Value {
    if (isa<math::Log2Op>(op))
      return ROCDL::ROCDLLog::create(b, loc(), x.getType(), x);
    return ROCDL::ROCDLExp2::create(b, loc(), x.getType(), x);
  };
  auto vectorType = dyn_cast<VectorType>(source.getType());
  if (!vectorType) {
    mapping.map(op->getResult(0), native(source));
    return success();
  }
  SmallVector<Value> elements;
  for (int64_t i = 0; i < vectorType.getNumElements(); ++i) {
    Value element =
        vector::ExtractOp::create(b, loc(), source, ArrayRef<int64_t>{i});
    elements.push_back(native(element));
  }
  mapping.map(op->getResult(0),
              vector::FromElementsOp::create(b, loc(), vectorType, elements));
  return success();
}

/// `iota < bound` where the iota's register and lane bits are disjoint (as
/// in every blocked and MMA layout): the iota is lane part + register
/// constant, so the compare becomes `constant < bound - lane part`, one
/// compare per element against a value computed once when the bound is the
/// same in every register (a per-query limit). False when the op is not of
/// that form and was left alone.
FailureOr<bool> KernelLowering::lowerIotaBound(arith::CmpIOp op) {
  auto iota = op.getLhs().getDefiningOp<IotaOp>();
  if (!iota || op.getPredicate() != arith::CmpIPredicate::slt)
    return false;
  auto emitError = [&] { return op.emitOpError(); };
  FailureOr<LinearLayout> layout =
      getTileLayout(iota.getResult().getType(), emitError);
  if (failed(layout))
    return failure();
  unsigned dim = iota.getDim();
  auto bitsOf = [&](StringRef name) {
    int64_t bits = 0;
    for (int32_t bit = 0; bit < layout->getInDimSizeLog2(name); ++bit)
      bits |= layout->getBasis(name, bit)[dim];
    return bits;
  };
  if (bitsOf(dims::kRegister) & (bitsOf(dims::kLane) | bitsOf(dims::kWave)))
    return false;
  Value lanePart = arith::IndexCastOp::create(b, loc(), b.getI32Type(),
                                              laneCoordinates(*layout)[dim]);
  Value bound = mapping.lookup(op.getRhs());
  // With the compare above, the backend's instruction selector issues all
  // compares of a tile (they depend on the bound alone) ahead of the
  // selects that use them, each 64-bit lane mask in an SGPR pair: 64 SGPRs
  // for a 64-key attention block. Stream-K kernels keep their loop over
  // pieces' scalars beside the key loops, and those spilled (gfx942 head
  // dim 64 causal ping-pong: 106 SGPRs, 19-20 spills). For them the
  // complement `offset >= rest` is made too, and selects on the bound
  // choose on it with their operands swapped (lowerSelectOnIotaBound):
  // that form the backend issues compare by compare, each next to its
  // select with the mask in VCC (80 SGPRs, no spills), at the cost of an
  // `s_nop` between the two, which makes it lose where the SGPRs fit
  // (docs/performance.md, "Stream-K for the causal ping-pong kernels").
  bool selectOnComplement = kernel->hasAttr("tessel.stream_k");
  SmallVector<Value> elements, outside;
  for (int64_t r = 0; r < layout->getInDimSize(dims::kRegister); ++r) {
    Value boundHere =
        vector::ExtractOp::create(b, loc(), bound, ArrayRef<int64_t>{r});
    Value rest = arith::SubIOp::create(b, loc(), boundHere, lanePart);
    Value offset = arith::ConstantOp::create(
        b, loc(), b.getI32IntegerAttr(layout->apply({int32_t(r), 0, 0})[dim]));
    elements.push_back(arith::CmpIOp::create(
        b, loc(), arith::CmpIPredicate::slt, offset, rest));
    if (selectOnComplement)
      outside.push_back(arith::CmpIOp::create(
          b, loc(), arith::CmpIPredicate::sge, offset, rest));
  }
  auto maskType = VectorType::get({int64_t(elements.size())}, b.getI1Type());
  mapping.map(op.getResult(),
              vector::FromElementsOp::create(b, loc(), maskType, elements));
  if (selectOnComplement)
    outOfBounds[op.getResult()] =
        vector::FromElementsOp::create(b, loc(), maskType, outside);
  return true;
}

/// `select(in bounds, x, y)` on an iota bound as `select(out of bounds, y,
/// x)` where lowerIotaBound made the complement: the same values, which the
/// backend orders differently (see there). False when it did not.
bool KernelLowering::lowerSelectOnIotaBound(arith::SelectOp op) {
  Value outside = outOfBounds.lookup(op.getCondition());
  if (!outside)
    return false;
  mapping.map(op.getResult(),
              arith::SelectOp::create(b, loc(), outside,
                                      mapping.lookup(op.getFalseValue()),
                                      mapping.lookup(op.getTrueValue())));
  return true;
}

Value KernelLowering::lowerPairedAdd(Value lhs, Value rhs) {
  auto type = dyn_cast<VectorType>(lhs.getType());
  if (!type || type.getRank() != 1 || type.getNumElements() % 2 ||
      !type.getElementType().isInteger(32))
    return {};
  auto pairs = VectorType::get({type.getNumElements() / 2}, b.getI64Type());
  Value sum = arith::AddIOp::create(
      b, loc(), vector::BitCastOp::create(b, loc(), pairs, lhs),
      vector::BitCastOp::create(b, loc(), pairs, rhs));
  return vector::BitCastOp::create(b, loc(), type, sum);
}

LogicalResult KernelLowering::lowerElementwise(Operation &op) {
  std::optional<Attribute> layout;
  for (Value operand : op.getOperands())
    if (auto tile = dyn_cast<RankedTensorType>(operand.getType())) {
      if (layout && *layout != tile.getEncoding())
        return op.emitOpError()
               << "operands of an elementwise op on tiles must share one "
                  "layout";
      layout = tile.getEncoding();
    }
  if (isa<math::Exp2Op, math::Log2Op>(op)) {
    auto fastmath =
        cast<arith::ArithFastMathInterface>(op).getFastMathFlagsAttr();
    if (fastmath &&
        bitEnumContainsAll(fastmath.getValue(), arith::FastMathFlags::afn) &&
        getElementTypeOrSelf(op.getResult(0).getType()).isF32())
      return lowerNativeTranscendental(&op);
  }
  if (auto compare = dyn_cast<arith::CmpIOp>(op)) {
    FailureOr<bool> lowered = lowerIotaBound(compare);
    if (failed(lowered))
      return failure();
    if (*lowered)
      return success();
  }
  if (auto select = dyn_cast<arith::SelectOp>(op))
    if (lowerSelectOnIotaBound(select))
      return success();
  if (auto add = dyn_cast<arith::AddIOp>(op);
      add && add->hasAttr(kPairedAddAttrName) && chip.hasVectorAdd64())
    if (Value sum = lowerPairedAdd(mapping.lookup(add.getLhs()),
                                   mapping.lookup(add.getRhs()))) {
      mapping.map(add.getResult(), sum);
      return success();
    }
  OperationState state(op.getLoc(), op.getName());
  for (Value operand : op.getOperands())
    state.addOperands(mapping.lookup(operand));
  for (Type type : op.getResultTypes()) {
    FailureOr<Type> lowered = lowerType(type, &op);
    if (failed(lowered))
      return failure();
    state.addTypes(*lowered);
  }
  state.addAttributes(op.getAttrs());
  Operation *clone = b.create(state);
  mapping.map(op.getResults(), clone->getResults());
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation &op) {
  currentLoc = op.getLoc();
  if (auto pid = dyn_cast<ProgramIdOp>(op)) {
    gpu::Dimension dim = pid.getDim() == 0   ? gpu::Dimension::x
                         : pid.getDim() == 1 ? gpu::Dimension::y
                                             : gpu::Dimension::z;
    mapping.map(pid.getResult(), gpu::BlockIdOp::create(b, loc(), dim));
    return success();
  }
  if (auto load = dyn_cast<LoadOp>(op))
    return lowerLoad(load);
  if (auto store = dyn_cast<StoreOp>(op))
    return lowerStore(store);
  if (auto alloc = dyn_cast<LocalAllocOp>(op)) {
    LdsType type = alloc.getBuffer().getType();
    auto memoryType =
        MemRefType::get({type.getSlots() * type.getSlotElements()},
                        type.getElementType(), AffineMap(),
                        gpu::AddressSpaceAttr::get(
                            b.getContext(), gpu::AddressSpace::Workgroup));
    ldsMemory[alloc.getBuffer()] =
        kernel.addWorkgroupAttribution(memoryType, alloc.getLoc());
    return success();
  }
  if (auto store = dyn_cast<LocalStoreOp>(op))
    return lowerLocalStore(store);
  if (auto copy = dyn_cast<CopyToLocalOp>(op))
    return lowerCopyToLocal(copy);
  if (auto wait = dyn_cast<WaitCopiesOp>(op))
    return lowerWaitCopies(wait);
  if (auto load = dyn_cast<LocalLoadOp>(op))
    return lowerLocalLoad(load);
  if (auto dot = dyn_cast<DotOp>(op))
    return lowerDot(dot);
  if (auto convert = dyn_cast<ConvertLayoutOp>(op))
    return lowerConvert(convert);
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return lowerReduce(reduce);
  if (auto broadcast = dyn_cast<BroadcastOp>(op))
    return lowerBroadcast(broadcast);
  if (auto any = dyn_cast<WaveAnyOp>(op))
    return lowerWaveAny(any);
  if (auto phase = dyn_cast<PhaseBarrierOp>(op))
    return lowerPhaseBarrier(phase);
  if (auto iota = dyn_cast<IotaOp>(op))
    return lowerIota(iota);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return lowerFor(loop);
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return lowerIf(branch);
  if (auto arrive = dyn_cast<SplitArriveOp>(op))
    return lowerSplitArrive(arrive);
  if (auto yield = dyn_cast<scf::YieldOp>(op)) {
    scf::YieldOp::create(b, loc(),
                         llvm::map_to_vector(yield.getOperands(), [&](Value v) {
                           return mapping.lookup(v);
                         }));
    return success();
  }
  if (isa<func::ReturnOp>(op)) {
    gpu::ReturnOp::create(b, loc());
    return success();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto tile = dyn_cast<RankedTensorType>(constant.getType())) {
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      if (!splat)
        return op.emitOpError() << "only splat tile constants are supported";
      FailureOr<Type> type = lowerType(tile, &op);
      if (failed(type))
        return failure();
      ZeroPlacement placement = zeroPlacement(constant);
      if (placement == ZeroPlacement::KernelEntry) {
        pendingZeroAccumulators.push_back(
            {constant.getResult(), cast<VectorType>(*type)});
        return success();
      }
      if (placement == ZeroPlacement::BeforeLoop)
        loopStartZeros[constant.getResult()] = cast<VectorType>(*type);
      mapping.map(
          constant.getResult(),
          arith::ConstantOp::create(
              b, loc(), cast<VectorType>(*type),
              SplatElementsAttr::get(cast<VectorType>(*type),
                                     splat.getSplatValue<Attribute>())));
      return success();
    }
  }
  if (auto splat = dyn_cast<tensor::SplatOp>(op)) {
    FailureOr<Type> type = lowerType(splat.getType(), &op);
    if (failed(type))
      return failure();
    mapping.map(splat.getResult(),
                vector::BroadcastOp::create(b, loc(), *type,
                                            mapping.lookup(splat.getInput())));
    return success();
  }
  bool onTiles = llvm::any_of(op.getOperandTypes(), [](Type type) {
    return isa<RankedTensorType>(type);
  });
  if (onTiles) {
    if (!op.hasTrait<OpTrait::Elementwise>())
      return op.emitOpError() << "on tiles cannot be lowered to GPU code";
    return lowerElementwise(op);
  }
  if (op.getNumRegions() != 0)
    return op.emitOpError() << "with regions cannot be lowered to GPU code";
  b.clone(op, mapping);
  return success();
}

LogicalResult KernelLowering::lowerBlock(Block &source) {
  for (Operation &op : source)
    if (failed(lowerOp(op)))
      return failure();
  return success();
}

LogicalResult KernelLowering::lower(func::FuncOp function) {
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  currentLoc = function.getLoc();
  for (auto [from, to] :
       llvm::zip(function.getArguments(), kernel.getArguments()))
    mapping.map(from, to);
  Value thread = gpu::ThreadIdOp::create(b, loc(), gpu::Dimension::x);
  Value waveSize = constIndex(chip.defaultWaveSize);
  lane = arith::RemUIOp::create(b, loc(), thread, waveSize);
  wave = arith::DivUIOp::create(b, loc(), thread, waveSize);
  prologueEnd = wave.getDefiningOp();
  if (auto size = function->getAttrOfType<IntegerAttr>("tessel.workgroup_size"))
    workgroupWaves = std::max<int64_t>(1, size.getInt() / chip.defaultWaveSize);
  return lowerBlock(function.getBody().front());
}

/// A static piece of a 1-D vector: one element (vector.extract) or a run
/// of them (vector.extract_strided_slice with unit stride), or none.
static std::optional<std::pair<int64_t, int64_t>> staticPiece(Operation *op) {
  if (auto extract = dyn_cast<vector::ExtractOp>(op)) {
    if (!extract.getDynamicPosition().empty() ||
        extract.getStaticPosition().size() != 1 ||
        extract.getSourceVectorType().getRank() != 1)
      return std::nullopt;
    return std::pair{extract.getStaticPosition()[0], int64_t(1)};
  }
  auto slice = dyn_cast<vector::ExtractStridedSliceOp>(op);
  if (!slice || slice.getSourceVectorType().getRank() != 1 ||
      slice.hasNonUnitStrides())
    return std::nullopt;
  return std::pair{cast<IntegerAttr>(slice.getOffsets()[0]).getInt(),
                   cast<IntegerAttr>(slice.getSizes()[0]).getInt()};
}

/// Whether `op` computes each element of its vector results from the same
/// element of its vector operands, and every user of its results reads
/// static pieces (single elements or runs) or is such an op itself: its
/// work can then be done piece by piece where each piece is used.
static bool isSinkableElementwise(Operation *op) {
  if (!op || !op->hasTrait<OpTrait::Elementwise>() ||
      op->getNumRegions() != 0 || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<VectorType>(op->getResult(0).getType());
  if (!type || type.getRank() != 1)
    return false;
  return llvm::all_of(op->getUsers(), [&](Operation *user) {
    if (user->getBlock() != op->getBlock())
      return false;
    return staticPiece(user).has_value() || isSinkableElementwise(user);
  });
}

/// The piece [offset, offset + size) of `value` at the builder's point (a
/// scalar when size is 1): the elementwise op producing it redone on that
/// piece (recursively), or an extract.
static Value
materializePiece(OpBuilder &b, Value value, int64_t offset, int64_t size,
                 DenseMap<std::tuple<Value, int64_t, int64_t>, Value> &done) {
  if (Value known = done.lookup({value, offset, size}))
    return known;
  Operation *op = value.getDefiningOp();
  Type elementType = cast<VectorType>(value.getType()).getElementType();
  Value piece;
  if (isSinkableElementwise(op)) {
    OperationState state(op->getLoc(), op->getName());
    for (Value operand : op->getOperands())
      state.addOperands(isa<VectorType>(operand.getType())
                            ? materializePiece(b, operand, offset, size, done)
                            : operand);
    state.addTypes(size == 1 ? elementType
                             : Type(VectorType::get({size}, elementType)));
    state.addAttributes(op->getAttrs());
    piece = b.create(state)->getResult(0);
  } else if (size == 1) {
    piece = vector::ExtractOp::create(b, value.getLoc(), value,
                                      ArrayRef<int64_t>{offset});
  } else {
    piece = vector::ExtractStridedSliceOp::create(
        b, value.getLoc(), value, ArrayRef<int64_t>{offset},
        ArrayRef<int64_t>{size}, ArrayRef<int64_t>{1});
  }
  done[{value, offset, size}] = piece;
  return piece;
}

/// Whether the sinkable chain ending in `op` has a step that expands into
/// many instructions with temporaries of their own (math functions, a
/// division): only then does computing it over whole tiles run out of
/// registers. Cheap chains (a bias, a scale, a conversion) stay vector ops,
/// which the backend packs two by two.
static bool hasExpensiveStep(Operation *op) {
  if (!isSinkableElementwise(op))
    return false;
  if (op->getDialect()->getNamespace() == "math" ||
      isa<arith::DivFOp, arith::RemFOp>(op))
    return true;
  return llvm::any_of(op->getOperands(), [](Value operand) {
    return hasExpensiveStep(operand.getDefiningOp());
  });
}

/// Whether every user of `piece` stores it to memory.
static bool onlyStored(Operation *piece) {
  return llvm::all_of(piece->getUsers(), [&](Operation *user) {
    if (auto store = dyn_cast<memref::StoreOp>(user))
      return store.getValue() == piece->getResult(0);
    if (auto store = dyn_cast<vector::StoreOp>(user))
      return store.getValueToStore() == piece->getResult(0);
    return false;
  });
}

/// The epilogue of a kernel (the elementwise work between the accumulator
/// and its stores to memory, an element or a run of them at a time; not
/// the softmax feeding the next product, whose packed instructions need
/// whole tiles), where it has an expensive step, computed piece by piece
/// next to each store instead of op by op over whole register tiles: the
/// latter keeps every element's temporaries alive at once (a GELU over a
/// 128-register accumulator took 390 registers, one wave per SIMD), the
/// former a few.
static void sinkElementwiseIntoExtracts(gpu::GPUModuleOp module) {
  SmallVector<Operation *> pieces;
  module.walk([&](Operation *op) {
    if (staticPiece(op) &&
        hasExpensiveStep(op->getOperand(0).getDefiningOp()) && onlyStored(op))
      pieces.push_back(op);
  });
  DenseMap<std::tuple<Value, int64_t, int64_t>, Value> done;
  Block *block = nullptr;
  for (Operation *op : pieces) {
    // Pieces are shared only within one block, up to the next store (a
    // value made for an earlier store is still available there).
    if (op->getBlock() != block) {
      done.clear();
      block = op->getBlock();
    }
    OpBuilder b(op);
    auto [offset, size] = *staticPiece(op);
    Value piece = materializePiece(b, op->getOperand(0), offset, size, done);
    op->getResult(0).replaceAllUsesWith(piece);
    op->erase();
  }
  // The whole-tile ops are dead now (a chain's ops die one after another).
  for (bool erased = true; erased;) {
    SmallVector<Operation *> dead;
    module.walk([&](Operation *op) {
      if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
          op->use_empty() && isa<VectorType>(op->getResult(0).getType()) &&
          isMemoryEffectFree(op))
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    erased = !dead.empty();
  }
}

/// Rounds f32 to bf16 (to nearest even) with integer arithmetic where the
/// chip has no conversion instruction, as the backend does but one
/// instruction shorter per value: the bits plus 0x7fff plus the lowest kept
/// bit, or the canonical quiet NaN 0x7fc0 for a NaN (as torch rounds),
/// where the backend quiets the NaN's own payload with an extra `or`
/// (`v_bfe_u32`, `v_add3_u32`, `v_cmp_u_f32`, `v_cndmask_b32`, and one
/// `v_perm_b32` per pair of values; gfx942's bf16 GEMM epilogue spent 5.5
/// VALU instructions per element).
static void expandBf16Truncation(gpu::GPUModuleOp module, const Chip &chip) {
  if (chip.convertsToBf16())
    return;
  SmallVector<arith::TruncFOp> truncations;
  module.walk([&](arith::TruncFOp op) {
    if (getElementTypeOrSelf(op.getType()).isBF16() &&
        getElementTypeOrSelf(op.getIn().getType()).isF32() &&
        !op.getRoundingmodeAttr())
      truncations.push_back(op);
  });
  for (arith::TruncFOp op : truncations) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type f32 = op.getIn().getType();
    auto like = [&](Type element) -> Type {
      if (auto vector = dyn_cast<VectorType>(f32))
        return vector.clone(element);
      return element;
    };
    Type i32 = like(b.getI32Type());
    auto constant = [&](int64_t value) -> Value {
      TypedAttr attr = b.getI32IntegerAttr(value);
      if (auto vector = dyn_cast<VectorType>(i32))
        attr = SplatElementsAttr::get(vector, attr);
      return arith::ConstantOp::create(b, loc, i32, attr);
    };
    // A NaN becomes 0x7fc00000 first, which the rounding keeps. (One op
    // per statement: the IR's order does not depend on the C++ compiler's
    // order of evaluating arguments.)
    Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO,
                                        op.getIn(), op.getIn());
    Value rawBits = arith::BitcastOp::create(b, loc, i32, op.getIn());
    Value quietNaN = constant(0x7fc00000);
    Value bits = arith::SelectOp::create(b, loc, isNaN, quietNaN, rawBits);
    Value sixteen = constant(16);
    Value keptShifted = arith::ShRUIOp::create(b, loc, bits, sixteen);
    Value lowestKept = arith::AndIOp::create(b, loc, keptShifted, constant(1));
    Value biased = arith::AddIOp::create(b, loc, bits, constant(0x7fff));
    Value rounded = arith::AddIOp::create(b, loc, biased, lowestKept);
    Value shifted = arith::ShRUIOp::create(b, loc, rounded, sixteen);
    Value top = arith::TruncIOp::create(b, loc, like(b.getI16Type()), shifted);
    op.replaceAllUsesWith(
        arith::BitcastOp::create(b, loc, op.getType(), top).getResult());
    op.erase();
  }
}

/// Splits a vector conversion from f32 to bf16 into one conversion per
/// pair of values (one `v_cvt_pk_bf16_f32` each) where the chip converts in
/// hardware (gfx950). The backend combines a whole vector's conversion with
/// the slices its users take and emits each slice's conversion where it is
/// used: an attention loop's probabilities, converted in the softmax phase,
/// were converted in the matrix phase, among the second product's MFMAs
/// that take them in two halves (docs/performance.md, "Ping-pong stores
/// between the products"). Pairs stay where they are.
static void splitBf16Truncation(gpu::GPUModuleOp module, const Chip &chip) {
  if (!chip.convertsToBf16())
    return;
  SmallVector<arith::TruncFOp> truncations;
  module.walk([&](arith::TruncFOp op) {
    auto vectorType = dyn_cast<VectorType>(op.getIn().getType());
    if (vectorType && vectorType.getRank() == 1 &&
        vectorType.getNumElements() > 2 &&
        vectorType.getNumElements() % 2 == 0 &&
        vectorType.getElementType().isF32() &&
        getElementTypeOrSelf(op.getType()).isBF16() &&
        !op.getRoundingmodeAttr())
      truncations.push_back(op);
  });
  for (arith::TruncFOp op : truncations) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto pairType = VectorType::get({2}, b.getBF16Type());
    Value result = LLVM::PoisonOp::create(b, loc, op.getType());
    int64_t count = cast<VectorType>(op.getIn().getType()).getNumElements();
    for (int64_t index = 0; index < count; index += 2) {
      Value slice = vector::ShuffleOp::create(
          b, loc, op.getIn(), op.getIn(), ArrayRef<int64_t>{index, index + 1});
      Value pair = arith::TruncFOp::create(b, loc, pairType, slice);
      result = vector::InsertStridedSliceOp::create(
          b, loc, pair, result, ArrayRef<int64_t>{index}, ArrayRef<int64_t>{1});
    }
    op.replaceAllUsesWith(result);
    op.erase();
  }
}

/// Rounds f32 to f16 toward zero where the tile program asks for it
/// (attention's probabilities on gfx90a and gfx942, whose row sums add the
/// rounded values, tessel-tile): two values a `v_cvt_pkrtz_f16_f32`, where
/// arith.truncf's own lowering would change the rounding mode around each
/// conversion. An odd last value pairs with poison.
static void lowerTowardZeroF16Truncation(gpu::GPUModuleOp module) {
  SmallVector<arith::TruncFOp> truncations;
  module.walk([&](arith::TruncFOp op) {
    if (op.getRoundingmode() == arith::RoundingMode::toward_zero &&
        getElementTypeOrSelf(op.getType()).isF16() &&
        getElementTypeOrSelf(op.getIn().getType()).isF32())
      truncations.push_back(op);
  });
  for (arith::TruncFOp op : truncations) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto pairType = VectorType::get({2}, b.getF16Type());
    auto poison = [&]() -> Value {
      return LLVM::PoisonOp::create(b, loc, b.getF32Type());
    };
    auto vectorType = dyn_cast<VectorType>(op.getIn().getType());
    if (!vectorType) {
      Value pair =
          ROCDL::CvtPkRtz::create(b, loc, pairType, op.getIn(), poison());
      op.replaceAllUsesWith(
          vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{0})
              .getResult());
      op.erase();
      continue;
    }
    int64_t count = vectorType.getNumElements();
    auto element = [&](int64_t index) -> Value {
      if (index >= count)
        return poison();
      return vector::ExtractOp::create(b, loc, op.getIn(),
                                       ArrayRef<int64_t>{index});
    };
    Value result = LLVM::PoisonOp::create(b, loc, op.getType());
    for (int64_t index = 0; index < count; index += 2) {
      Value low = element(index);
      Value high = element(index + 1);
      Value pair = ROCDL::CvtPkRtz::create(b, loc, pairType, low, high);
      if (index + 1 < count) {
        result = vector::InsertStridedSliceOp::create(b, loc, pair, result,
                                                      ArrayRef<int64_t>{index},
                                                      ArrayRef<int64_t>{1});
        continue;
      }
      result = vector::InsertOp::create(
          b, loc, vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{0}),
          result, ArrayRef<int64_t>{index});
    }
    op.replaceAllUsesWith(result);
    op.erase();
  }
}

namespace {
struct LowerToGPUPass
    : public tessel::impl::TesselLowerToGPUPassBase<LowerToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    const Chip *target = lookupChip(chip);
    if (!target) {
      module.emitError() << "unknown chip '" << chip
                         << "'; known chips: " << knownChipNames();
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> programs;
    for (auto function : module.getOps<func::FuncOp>())
      if (function->hasAttr("tessel.workgroup_size"))
        programs.push_back(function);
    if (programs.empty())
      return;
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>("tessel_kernels");
    if (!gpuModule)
      gpuModule =
          gpu::GPUModuleOp::create(b, module.getLoc(), "tessel_kernels");
    for (func::FuncOp function : programs) {
      if (function.getNumResults() != 0) {
        function.emitError() << "a kernel returns nothing";
        return signalPassFailure();
      }
      int64_t workgroupSize =
          function->getAttrOfType<IntegerAttr>("tessel.workgroup_size")
              .getInt();
      OpBuilder inModule(gpuModule.getBodyRegion());
      inModule.setInsertionPointToEnd(gpuModule.getBody());
      auto kernel = gpu::GPUFuncOp::create(inModule, function.getLoc(),
                                           function.getName(),
                                           function.getFunctionType());
      kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                      inModule.getUnitAttr());
      kernel.setKnownBlockSizeAttr(DenseI32ArrayAttr::get(
          &getContext(), {int32_t(workgroupSize), 1, 1}));
      // An occupancy the kernel's grid counts on (stream-K launches one
      // workgroup per slot): the backend keeps the registers within it.
      if (auto waves =
              function->getAttrOfType<IntegerAttr>(kWavesPerSimdAttrName))
        kernel->setAttr("rocdl.waves_per_eu",
                        inModule.getI32IntegerAttr(waves.getInt()));
      for (StringRef name : std::initializer_list<StringRef>{
               "tessel.tile", "tessel.config", "tessel.plan_of",
               "tessel.plan_stage", "tessel.splits", "tessel.stream_k",
               "tessel.packed_heads", "tessel.grid_over_keys",
               "tessel.longest_first", "tessel.workspace_dims",
               "tessel.zeroed_workspaces", kWavesPerSimdAttrName,
               kKeyLoopUnrollAttrName, kMergeLoopIterationsAttrName})
        if (Attribute attr = function->getAttr(name))
          kernel->setAttr(name, attr);
      // A matmul's K loop steps its operands' buffer offsets itself: the
      // code generator's loop strength reduction changes little in it and
      // costs a sixth of its code generation (docs/performance.md, "JIT
      // compile latency").
      auto config = function->getAttrOfType<ConfigAttr>("tessel.config");
      if (config && config.getTile().size() == 3)
        kernel->setAttr(kSkipLoopStrengthReductionAttrName,
                        inModule.getUnitAttr());
      // An attention key loop's lazy rescale is an unlikely branch near the
      // top of each block, behind the LDS reads issued ahead of it: the
      // code generator's machine sinking moved those reads into the block
      // after the branch (docs/performance.md, "K read in the softmax
      // phase").
      bool unlikelyBranch = function
                                .walk([](scf::IfOp branch) {
                                  return branch->hasAttr(kUnlikelyAttrName)
                                             ? WalkResult::interrupt()
                                             : WalkResult::advance();
                                })
                                .wasInterrupted();
      if (unlikelyBranch)
        kernel->setAttr(kSkipMachineSinkingAttrName, inModule.getUnitAttr());
      if (failed(KernelLowering(kernel, *target).lower(function)))
        return signalPassFailure();
      function.erase();
    }
    // Register slices become shuffles, which the LLVM lowering knows.
    // Conversions to and from 8-bit floats (an fp8 C, attention's P with
    // 8-bit inputs) become the chip's packed conversion instructions
    // (whose results are assembled with slices too); arith.truncf's
    // overflow rule (NaN, or infinity for E5M2) is kept, as the host
    // references have it.
    auto cleanUp = [&]() -> LogicalResult {
      RewritePatternSet patterns(&getContext());
      vector::populateVectorInsertExtractStridedSliceTransforms(patterns);
      if (target->fp8Format != Fp8Format::None) {
        FailureOr<amdgpu::Chipset> chipset = amdgpu::Chipset::parse(chip);
        if (failed(chipset))
          return failure();
        arith::populateArithToAMDGPUConversionPatterns(
            patterns, /*convertFP8Arithmetic=*/true,
            /*saturateFP8Truncf=*/false, /*allowPackedF16Rtz=*/false,
            /*supportsScaledExtTrunc=*/false, *chipset);
      }
      return applyPatternsGreedily(gpuModule, std::move(patterns));
    };
    // The epilogues element by element once the stores read single
    // elements (after the slices fold), then the conversions that made.
    if (failed(cleanUp()))
      return signalPassFailure();
    sinkElementwiseIntoExtracts(gpuModule);
    lowerTowardZeroF16Truncation(gpuModule);
    splitBf16Truncation(gpuModule, *target);
    if (failed(cleanUp()))
      return signalPassFailure();
    expandBf16Truncation(gpuModule, *target);
  }
};
} // namespace
