//===- TesselOps.h - tessel operations --------------------------*- C++ -*-===//

#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELOPS_H
#define TESSEL_DIALECT_TESSEL_IR_TESSELOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"
#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/IR/TesselTypes.h"
#include "tessel/Support/KeyWindow.h"
#include "llvm/Support/MathExtras.h"

namespace tessel {

/// True for the element types tessel.matmul accepts for A and B.
bool isMatmulInputElementType(mlir::Type type);

/// True for the 8-bit float types of the AMD "FNUZ" family (gfx942).
bool isFnuzFp8Type(mlir::Type type);

/// True for the 8-bit float types of the OCP family (gfx950, gfx12).
bool isOcpFp8Type(mlir::Type type);

/// The distributed layout (register/lane/wave -> tile) of a tile type: its
/// encoding must be a layout attribute that fits its shape.
llvm::FailureOr<LinearLayout>
getTileLayout(mlir::RankedTensorType type,
              llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The LDS element offsets (register/lane/wave -> offset in a slot of
/// `buffer`) at which a lane accesses `tile`: through the tile's layout, or
/// for a transposed `tessel.local_load` through the address layout of the
/// transposing read (transposedReadLayout).
llvm::FailureOr<LinearLayout>
getLdsAccessOffsets(mlir::RankedTensorType tile, LdsType buffer,
                    bool transposed,
                    llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Bytes one lane moves per `tessel.copy_to_local` instruction, and the
/// lanes of the waves that issue them (gfx950's global_load_lds_dwordx4).
inline constexpr int64_t kCopyBytesPerLane = 16;
inline constexpr int64_t kCopyWaveSize = 64;

/// The layout (register/lane/wave -> tile) in which `waves` waves copy a
/// slot of `buffer` with `tessel.copy_to_local`: registers 0.. of a lane
/// are the elements of its 16-byte run, the registers above them count
/// the wave's instructions, and run i of instruction j sits at LDS offset
/// ((j * waves + wave) * 64 + lane) * run + i of the slot. Fails when the
/// slot is not a whole number of the waves' 1 KiB instructions.
llvm::FailureOr<LinearLayout>
getCopyLayout(LdsType buffer, int64_t waves,
              llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Whether `waves` waves can copy tiles of `memref` into `buffer` with
/// `tessel.copy_to_local`: a tile dimension contiguous in the memref, whose
/// 16-byte runs the buffer's layout keeps together, and a slot of whole
/// instructions (getCopyLayout).
mlir::LogicalResult
verifyCopyToLocal(mlir::MemRefType memref, LdsType buffer, int64_t waves,
                  llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The tile type of the statistic `tessel.reduce` computes along `axis` of
/// `source`: size 1 along `axis`, in a `#tessel.linear` layout that keeps
/// the source's registers, lanes and waves for the other dimension: the
/// registers that held the reduced dimension are gone, and the lanes and
/// waves that held it hold copies. Fails (through `emitError`) for layouts
/// whose bases mix the two dimensions. With `withinLanes`, the lanes that
/// held the reduced dimension keep their part of it instead (one position
/// per lane group along the axis: `tessel.reduce ... within_lanes`).
llvm::FailureOr<mlir::RankedTensorType>
getReducedTileType(mlir::RankedTensorType source, unsigned axis,
                   llvm::function_ref<mlir::InFlightDiagnostic()> emitError,
                   bool withinLanes = false);

/// A unit attribute on a `tessel.load` whose tile becomes a dot operand
/// through LDS: tessel-promote-lds reads the operand from LDS right before
/// its first use instead of right after the block's write phase, and keeps
/// an operand loaded outside the loops in LDS rather than in registers, so
/// that it does not stay live across the block (set by tessel-tile where
/// registers are short).
inline constexpr llvm::StringLiteral kLdsReadAtUseAttrName =
    "tessel.lds_read_at_use";

/// A unit attribute beside kLdsReadAtUseAttrName: tessel-promote-lds reads
/// the operand one product ahead instead, in front of the product before
/// the one it feeds in the same block, so that its LDS latency runs under
/// that product's matrix instructions (set by tessel-tile where the
/// registers of one more chunk are free).
inline constexpr llvm::StringLiteral kLdsReadAheadAttrName =
    "tessel.lds_read_ahead";

/// A unit attribute on a `tessel.local_load` or `tessel.local_store`:
/// tessel-lower-to-gpu gives the registers whose LDS offsets differ only
/// in bits no lane or wave sets one address register, the rest in the
/// instruction's offset field. Set by tessel-pipeline on attention's
/// double-buffered key loop, whose slot is a run-time value added to the
/// addresses each step (at gfx942 head dim 128: 59 VALU per step more than
/// the one-slot loop without it, 32 with it).
inline constexpr llvm::StringLiteral kLdsSharedAddressesAttrName =
    "tessel.lds_shared_addresses";

/// A unit attribute on an in-bounds `tessel.load` whose lanes hold runs
/// along the memref's strided dimension (a matmul operand loaded in K
/// runs): tessel-lower-to-gpu adds each register row's offset as a
/// constant to one lane offset shared by the rows, instead of multiplying
/// each row's index by the stride (four `v_mul_lo_u32` per step in a K loop
/// with N = 14336). Set by tessel-tile on the operands it loads in K runs.
/// Attention's key and value blocks get the same form through
/// kScalarOriginAttrName (with the origin in the scalar offset; without
/// it, the per-row form was predicted 1-2 points faster for them).
inline constexpr llvm::StringLiteral kConstantRowOffsetsAttrName =
    "tessel.constant_row_offsets";

/// A unit attribute on an in-bounds `tessel.load` of a tile whose origin
/// changes from one loop iteration to the next while each lane's
/// coordinates do not (attention's K and V^T blocks): tessel-lower-to-gpu
/// loads it through a buffer resource (a transposed view of an argument
/// too), with the origin's part of the offset in the instruction's scalar
/// offset and one lane offset shared by the registers' rows, as with
/// kConstantRowOffsetsAttrName. Per vector that leaves no VALU instruction
/// in the loop, where the origin added to the lane's coordinates took one
/// or two (six for gfx950's V^T through 64-bit global addresses). Set by
/// tessel-tile on attention's key and value loads; the GEMM's K loops keep
/// the VGPR offsets (docs/performance.md, "Scalar buffer offsets").
inline constexpr llvm::StringLiteral kScalarOriginAttrName =
    "tessel.scalar_origin";

/// A unit attribute on an `arith.addi` of i32 tiles whose sums never carry
/// out of 32 bits (every element plus the addend stays below 2^32):
/// tessel-lower-to-gpu adds each lane's registers two at a time as 64-bit
/// integers, one v_lshl_add_u64 for two v_add_u32 (Chip::hasVectorAdd64).
/// Set by tessel-tile on the rounding of attention's probabilities to bf16
/// (docs/performance.md, "bf16 P rounded by pairs").
inline constexpr llvm::StringLiteral kPairedAddAttrName = "tessel.paired_add";

/// A unit attribute on a K loop (`scf.for`) unrolled by two whose steps
/// share one set of operand registers: tessel-lower-to-gpu reads each
/// register of the next step from LDS right after the last MFMA of this
/// step that reads it (tessel-pipeline sets it where two sets do not fit).
inline constexpr llvm::StringLiteral kReadsInPlaceAttrName =
    "tessel.reads_in_place";

/// A unit attribute on an `scf.if` whose condition is rarely true (the
/// lazy rescale of an attention key loop): tessel-lower-to-gpu marks the
/// condition expected false, and LLVM lays the branch's block out of the
/// loop's line.
inline constexpr llvm::StringLiteral kUnlikelyAttrName = "tessel.unlikely";

/// A unit attribute on the `rocdl.barrier` a `tessel.phase_barrier` lowers
/// to: the emulator lets the waves of a workgroup meet at two different
/// such barriers (a ping-pong loop's halves run a phase apart), as the
/// hardware's s_barrier counts arrivals wherever they are.
inline constexpr llvm::StringLiteral kPhaseBarrierAttrName =
    "tessel.phase_barrier";

/// A unit attribute on an attention key loop (`scf.for`) over masked blocks
/// that loads each block in its own iteration (the causal diagonal, a
/// window's edges, the tail block): it runs a block or two per workgroup,
/// its masks fill scalar registers, and tessel-pipeline leaves it alone.
inline constexpr llvm::StringLiteral kOwnLoadsAttrName = "tessel.own_loads";

/// A unit attribute on an attention key loop (`scf.for`) whose steps
/// continue the key loop right before it: the same loads of the same
/// buffers, its lower bound that loop's upper bound (the causal diagonal
/// after the loop over whole blocks). tessel-pipeline runs the two as one
/// pipeline: the first loop's last steps load and store the second's first
/// blocks, and the second has no prologue.
inline constexpr llvm::StringLiteral kContinuesKeyLoopAttrName =
    "tessel.continues_key_loop";

/// A unit attribute on an `scf.for` that runs after a kernel's long loops
/// (stream-K attention's merges): tessel-lower-to-gpu reads the lane and
/// wave ids again where it starts and derives the loop's lane coordinates
/// from them there, so that they are not computed at the kernel's entry
/// and kept live (or spilled) across the key loops.
inline constexpr llvm::StringLiteral kFreshLanesAttrName = "tessel.fresh_lanes";

/// An i64 attribute on an attention kernel function: the factor its key
/// loop over whole blocks is unrolled by (tessel-pipeline unrolls a
/// ping-pong loop by its LDS slots), with a rolled loop after it for the
/// blocks left over. The performance model splits that loop's iterations
/// between the two.
inline constexpr llvm::StringLiteral kKeyLoopUnrollAttrName =
    "tessel.key_loop_unroll";

/// An i64 array attribute on a split-KV attention kernel function: the
/// iterations of the loops without matrix instructions that merge the
/// splits' partials, in code order, counting those of a loop nested in
/// another (over chunks of the head dim) once per outer iteration. The
/// performance model takes them as those loops' trip counts.
inline constexpr llvm::StringLiteral kMergeLoopIterationsAttrName =
    "tessel.merge_loop_iterations";

/// A unit attribute on a K loop (`scf.for`) whose trip count is even on
/// every entry (stream-K's pieces are whole pairs of K steps):
/// tessel-pipeline unrolls it by two without a loop for an odd last step.
inline constexpr llvm::StringLiteral kEvenTripCountAttrName =
    "tessel.even_trip_count";

/// A unit attribute on a stream-K workgroup's loop over its tiles
/// (`scf.for`): each iteration runs one tile's program, as a workgroup of
/// the data-parallel grid would. tessel-promote-lds treats its body as the
/// kernel's top level (an operand converted there is read once per tile).
inline constexpr llvm::StringLiteral kTileLoopAttrName = "tessel.tile_loop";

/// An i64 attribute on a kernel function: the waves per SIMD its grid
/// counts on (a stream-K attention kernel launches one workgroup per slot
/// of that occupancy). The backend is told to keep the registers within it
/// (`amdgpu-waves-per-eu`).
inline constexpr llvm::StringLiteral kWavesPerSimdAttrName =
    "tessel.waves_per_simd";

/// Split-K: the K elements each of `splits` workgroups multiplies, a whole
/// number of `tileK` steps (the last split may get fewer).
int64_t getSplitKChunk(int64_t k, int64_t tileK, int64_t splits);

} // namespace tessel

#define GET_OP_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselOps.h.inc"

namespace tessel {
/// The head dim an attention kernel computes with: `headDim` rounded up to
/// a power of two of at least 32 (tiles are powers of two, the instructions
/// 32 rows); the padding reads as zeros and is never stored.
inline int64_t getPaddedHeadDim(int64_t headDim) {
  return int64_t(llvm::PowerOf2Ceil(uint64_t(std::max<int64_t>(headDim, 32))));
}

/// Whether `loop` is a ping-pong loop: its body holds tessel.phase_barriers
/// (the attention key loop of a `ping_pong` config).
inline bool isPingPongLoop(mlir::scf::ForOp loop) {
  return loop && !loop.getBody()->getOps<PhaseBarrierOp>().empty();
}
} // namespace tessel

namespace tessel {
/// Stream-K: the K steps of all C tiles of a matmul of static sizes (tiles
/// x steps per tile), which its `stream_k` workgroups share.
int64_t getStreamKSteps(MatmulOp op);

/// Stream-K attention (config stream_k = G): G workgroups share the key
/// blocks of all query blocks evenly. The work is a sequence of equal units:
/// one query block and all its key blocks, or, causal, the pair of query
/// blocks i and Q - 1 - i of a head (block i sees (i + 1) x blockM / blockN
/// key blocks, so every pair holds (Q + 1) x blockM / blockN). Units run in
/// (batch, head, query block or pair) order; a workgroup takes the steps
/// [w S / G, (w + 1) S / G) of all S key-block steps.
struct AttentionStreamKWork {
  int64_t batch = 0, heads = 0;
  int64_t queryBlocks = 0; // per head
  int64_t blocksPerUnit = 0;
  /// Causal: a unit is a pair of query blocks, block i seeing (i + 1) x
  /// `diagonalBlocks` key blocks, the last `diagonalBlocks` of them masked.
  bool pairs = false;
  int64_t diagonalBlocks = 0;

  int64_t unitsPerHead() const { return pairs ? queryBlocks / 2 : queryBlocks; }
  int64_t units() const { return batch * heads * unitsPerHead(); }
  int64_t steps() const { return units() * blocksPerUnit; }
};

/// The stream-K work of `op` under `config` (tile [blockM, blockN]; its
/// stream_k count is not read), or failure, with the rule broken through
/// `emitError` when given: static sizes, one sequence per batch entry (no
/// varlen or paged cache), no sinks, no packed query heads, and either no
/// mask or causal attention with seq_q == seq_kv, an even number of whole
/// query blocks and key blocks that divide them (blockN divides blockM).
mlir::FailureOr<AttentionStreamKWork> getAttentionStreamKWork(
    AttentionOp op, ConfigAttr config,
    llvm::function_ref<mlir::InFlightDiagnostic()> emitError = {});
} // namespace tessel

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELOPS_H
