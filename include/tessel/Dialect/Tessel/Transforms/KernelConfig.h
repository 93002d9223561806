//===- KernelConfig.h - Matmul kernel configurations ------------*- C++ -*-===//
//
// The choices behind a matmul kernel (tiles, waves, stages, instruction) and
// the resource budgets they are checked against, shared by the passes that
// make and use them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELCONFIG_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELCONFIG_H

#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Perf/MatmulEstimate.h"
#include "tessel/Support/KeyWindow.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Mma.h"

#include "mlir/IR/BuiltinTypes.h"

namespace tessel {

/// The MmaElement of an MLIR element type, if it has one.
std::optional<MmaElement> getMmaElement(mlir::Type type);

/// The best matrix instruction of `chip` for A/B element types `a`/`b` and
/// an instruction tile of `m` x `m` (16 or 32): the most FLOPs per cycle.
/// xf32 is chosen only when `xf32` is set; instructions taking more than
/// `maxOperandElements` A values per lane are skipped. Null when there is
/// none.
const MmaInstr *chooseMmaInstr(const Chip &chip, mlir::Type a, mlir::Type b,
                               unsigned m, bool xf32 = false,
                               unsigned maxOperandElements = ~0u);

/// The most A (and B) values per lane an attention kernel's instruction may
/// take: P^T reaches the second product from the first's accumulators,
/// whose lanes hold runs of 4 keys, and the lowering builds an instruction's
/// K values from at most two such runs.
constexpr unsigned kMaxAttentionOperandElements = 8;

/// Why `chip` cannot multiply `a` by `b` (unsupported pair, fp8 format of
/// another chip), or empty when it can.
std::string explainUnsupportedTypes(const Chip &chip, mlir::Type a,
                                    mlir::Type b);

/// A candidate matmul config with what the analytical performance model
/// predicts for it.
struct RankedMatmulConfig {
  ConfigAttr config;
  MatmulEstimate estimate;
};

/// The sizes of a matmul problem, as the config chooser sees them; dynamic
/// sizes are ShapedType::kDynamic. `aKContiguous` / `bKContiguous`: the
/// operand's contiguous dimension is K (A stored M x K, B stored N x K);
/// otherwise the lowering reads it from LDS one element per lane and read.
struct MatmulProblemSizes {
  int64_t m, n, k, batch = 1;
  bool aKContiguous = true, bKContiguous = true;
  bool batched = false; ///< rank-3 operands (stream-K takes rank 2 only)
  bool staticC = true;  ///< C's shape is static (split-K and stream-K need it)
  /// Static sizes, no tile-sized epilogue operand (a residual) and no math
  /// function in the epilogue: little beside the K loop's registers is live
  /// across it.
  bool leanEpilogue = true;
  /// Epilogue operands (rows or columns of scales, a bias).
  unsigned epilogueVectors = 0;
};

/// The sizes and operand layouts of `matmul`.
MatmulProblemSizes getMatmulProblemSizes(MatmulOp matmul);

/// Every config the matmul lowering supports for this problem on `chip`
/// (tiles 16-256 per dimension, 1-8 waves, K tiles of 32-128 bytes, the
/// chip's 16x16 and 32x32 instructions for the types) that fits the LDS and
/// the architectural VGPRs, ranked fastest first by the analytical model
/// (include/tessel/Perf/MatmulEstimate.h). Dynamic sizes are taken as
/// kAssumedDynamicSize. Empty when the chip cannot multiply the types.
std::vector<RankedMatmulConfig>
rankMatmulConfigs(mlir::MLIRContext *context, const Chip &chip, mlir::Type a,
                  mlir::Type b, mlir::Type c, MatmulProblemSizes sizes);

/// What the config chooser assumes a dynamic size is: large enough that
/// tiles are chosen for the steady state, not for a small grid.
constexpr int64_t kAssumedDynamicSize = 4096;

/// The default config of a matmul: the winner of rankMatmulConfigs.
ConfigAttr getDefaultMatmulConfig(mlir::MLIRContext *context, const Chip &chip,
                                  mlir::Type a, mlir::Type b, mlir::Type c,
                                  MatmulProblemSizes sizes);

/// What a matmul config costs on chip.
struct MatmulResources {
  int64_t ldsBytes = 0;         // LDS per workgroup
  int64_t accumulatorVgprs = 0; // per lane
  int64_t operandVgprs = 0;     // per lane: MFMA operands and prefetch
  int64_t stepVgprs = 0;     // per lane: one K step's operands and loaded tiles
  int64_t stepTileVgprs = 0; // per lane: the loaded tiles alone
  int64_t totalVgprs() const { return accumulatorVgprs + operandVgprs; }
};

/// Whether a pipelined K loop still fits two waves per SIMD (256 registers
/// per lane, the occupancy the configs are chosen for) once unrolled by two:
/// then two steps' operand registers and in-flight tiles (`stepVgprs` each)
/// are live beside the accumulators, plus registers for addresses and loop
/// bookkeeping. tessel-pipeline unrolls the loops that fit (or fit with the
/// operands read in place, below); the others copy each step's registers
/// into the next step's once per iteration.
/// The registers per lane at two waves per SIMD, and those a matmul kernel
/// keeps for addresses and loop bookkeeping beside its tiles.
inline constexpr int64_t kTwoWavesRegisterBudget = 256;
inline constexpr int64_t kMatmulBookkeepingVgprs = 48;
inline bool fitsUnrolledKLoop(int64_t accumulatorVgprs, int64_t stepVgprs) {
  return accumulatorVgprs + 2 * stepVgprs + kMatmulBookkeepingVgprs <=
         kTwoWavesRegisterBudget;
}
/// The same with the two steps' operands in one set of registers (each
/// read in place once the MFMAs that read the register before are issued,
/// kReadsInPlaceAttrName): the loaded tiles alone (`stepTileVgprs`) are
/// doubled. Only for steps of at most 8 MFMAs per wave (`mfmasPerStep`):
/// a rolled loop's copies of the next step's registers and its per-step
/// address arithmetic issue in the shadow of 16 MFMAs, and there the pinned
/// schedule of reads in place measured slower. And only for workgroups of 8
/// waves (`waves`), two per SIMD: reads in place measured faster with 4 as
/// well, but the chooser's estimate, which ranks workgroups of 8 waves
/// below the ISA-level model, then prefers them to the 8-wave tiles the
/// model ranks first (WMMA dots count as no waves: the lowering reads only
/// MFMA operands in place). And only with a static K and unbatched operands
/// (`plain`: a split-K or stream-K loop's bounds are not static): a dynamic
/// K loads through branches, a batch keeps its offsets in registers, and
/// such loops spilled (docs/performance.md, "Operands read in place").
inline constexpr int64_t kMaxMfmasPerStepToReadInPlace = 8;
inline constexpr int64_t kWavesToReadInPlace = 8;
inline bool fitsUnrolledKLoopInPlace(int64_t accumulatorVgprs,
                                     int64_t stepVgprs, int64_t stepTileVgprs,
                                     int64_t mfmasPerStep, int64_t waves,
                                     bool plain) {
  return plain && mfmasPerStep <= kMaxMfmasPerStepToReadInPlace &&
         waves == kWavesToReadInPlace &&
         accumulatorVgprs + stepVgprs + stepTileVgprs +
                 kMatmulBookkeepingVgprs <=
             kTwoWavesRegisterBudget;
}
MatmulResources estimateMatmulResources(ConfigAttr config, mlir::Type a,
                                        mlir::Type b, unsigned waveSize);

/// Checks `config` against `chip` for a matmul of `a` x `b`: instruction
/// available with these types, tile a multiple of the instruction per
/// wave, LDS and registers within budget.
mlir::LogicalResult
checkMatmulConfig(ConfigAttr config, const Chip &chip, mlir::Type a,
                  mlir::Type b,
                  llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The default attention config: blocks of 128 queries on four 32-row waves
/// (fewer for short query sequences), 64 or 32 keys per step (64 where
/// they fit two waves per SIMD and win by the model), the chip's fastest
/// 32x32 instruction for the input type; for decode (16 queries or fewer) the
/// keys split over 8 workgroups (chooseAttentionSplits ranks the count by
/// the model) and a block holds a whole group of `groups` query heads
/// (getPackableQueryHeadGroup). `window`: the keys each query sees (a kernel
/// whose window is not full has masked key loops: causal, local). Null when
/// the chip has none.
ConfigAttr getDefaultAttentionConfig(mlir::MLIRContext *context,
                                     const Chip &chip, mlir::Type element,
                                     int64_t seqQ, int64_t seqKV,
                                     int64_t headDim, KeyWindow window,
                                     int64_t groups = 1);

/// `config` (a default attention config) or its ping-pong form (8 waves of
/// 32 queries, the halves a phase apart: `ping_pong`) where the model
/// predicts that form faster: f16 and bf16, static sizes in whole blocks of
/// 256 queries, no window but the causal one, a grid with a workgroup for
/// every CU (getPingPongKeyBlock has the head dims and chips).
ConfigAttr chooseAttentionPingPong(AttentionOp op, ConfigAttr config,
                                   const Chip &chip);

/// `config` (a default attention config) or its stream-K form
/// (AttentionStreamKWork) where the data-parallel grid's last round of
/// workgroups would leave the chip part idle: one workgroup per slot of two
/// four-wave workgroups per CU, 64-key blocks up to head dim 64 and 32-key
/// ones past it, with the next block prefetched (stages = 2): the forms that
/// keep two waves per SIMD with the stream-K loop's registers.
ConfigAttr chooseAttentionStreamK(AttentionOp op, ConfigAttr config,
                                  const Chip &chip);

/// `config` with its key loop `unrolled` by two where the model predicts
/// that faster (the four-wave double-buffered loops with the scores ahead
/// on gfx942: f16 and bf16 at head dim 64, bf16 at head dim 128; on gfx90a
/// the causal kernels at head dim 64).
ConfigAttr chooseAttentionUnroll(AttentionOp op, ConfigAttr config,
                                 const Chip &chip);

/// The split count of a split-KV decode under `config`, ranked by the
/// analytical decode model (DecodeEstimate) when the lengths and heads are
/// static; the config's own count otherwise.
int64_t chooseAttentionSplits(AttentionOp op, ConfigAttr config,
                              const Chip &chip);

/// The most keys a sequence of `op` has, as the config chooser sees it: K's
/// length; a paged cache's pages per sequence x page size; dynamic where a
/// run-time value decides (varlen, a dynamic block table).
int64_t getAttentionKeyCapacity(AttentionOp op);
/// The query heads per key/value head of `op` when they could share one
/// workgroup (everything getPackedQueryHeads asks but the block's size),
/// else 1.
int64_t getPackableQueryHeadGroup(AttentionOp op);

/// How many query heads one workgroup of `op`'s kernel serves under
/// `config`: the whole group of query heads that share a key/value head
/// (grouped-query decode), stacked along the query block's rows (head-major),
/// when the block holds them all (groups x seq_q <= the block's rows), the
/// heads and lengths are static, Q and O (and the logsumexp) store a head's
/// queries right after the previous head's, and, with sinks, one query per
/// head. Each key/value block is then read once per group instead of once
/// per query head. 1 otherwise.
int64_t getPackedQueryHeads(AttentionOp op, ConfigAttr config);

/// Checks an attention config against `chip` for head dimension `headDim`:
/// instruction, waves only along the queries, LDS and registers within
/// budget.
mlir::LogicalResult
checkAttentionConfig(ConfigAttr config, const Chip &chip, mlir::Type element,
                     int64_t headDim,
                     llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The default config of an attention backward (tessel.attention_grad):
/// tile [rows a workgroup owns, rows per step] (queries and keys in the dQ
/// kernel, keys and queries in the dK/dV kernel), 16 owned rows per wave,
/// the chip's 16x16 instruction. Null off the CDNA chips.
ConfigAttr getDefaultAttentionGradConfig(mlir::MLIRContext *context,
                                         const Chip &chip, mlir::Type element,
                                         int64_t headDim);
/// Checks an attention backward config against `chip`: a CDNA chip, the
/// instruction, tile multiples of it, registers and LDS within budget.
mlir::LogicalResult checkAttentionGradConfig(
    ConfigAttr config, const Chip &chip, mlir::Type element, int64_t headDim,
    int64_t headDimV, llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The K packing of the operands of `instr` for a K tile of `tileK`
/// (`kWidth` of #tessel.mma_operand): the instruction's elements per lane,
/// doubled while a lane's run stays within 16 bytes (one ds_read_b128 or
/// global load) and the tile holds whole lane passes. Both operands of a
/// product take it, so they agree on the order of K. A WMMA operand takes
/// exactly the instruction's elements per lane (its register order is fixed
/// by the instruction).
int64_t getOperandKWidth(const MmaInstr &instr, unsigned waveSize,
                         int64_t tileK, unsigned elementBytes);

/// The tile a split-KV attention kernel merges its splits' partials on:
/// the block's `blockM` rows, or as many as its queries fill where they are
/// fewer (`blockRows`, a decode's queries times the packed heads; dynamic:
/// all), rounded up to a power of two; and chunks of the values' padded
/// head dim `headDimV` that give each of the `lanes` lanes 16 elements (32
/// columns at least), so that the merge needs few registers and a few rows
/// take few chunks.
struct AttentionMergeTile {
  int64_t rows = 0, columns = 0;
};
AttentionMergeTile getAttentionMergeTile(int64_t blockM, int64_t blockRows,
                                         int64_t headDimV, int64_t lanes);

/// The head dims an attention kernel on `instr` computes at a time, for a
/// padded head dim `headDim` (the larger of the scores' and the values')
/// and the real one `realHeadDim`: all of them where a wave holds its
/// queries' Q and O and a key block's K and V in registers at once; 64 on
/// the WMMA chips past head dim 128, whose waves have 256 VGPRs and no
/// AGPRs; on the MFMA chips, 32 (the instruction's rows, or two of its K
/// steps if more) where that computes fewer head dims than the padding
/// (past 64 with gfx90a's and gfx942's 16-bit 8-deep instructions and in
/// `masked` kernels, past 128 with the 16-deep ones: gfx950's and the
/// 8-bit ones). Computed whole, 160 or 192 as 256 and 96 as 128 wasted up
/// to 37 % of the matrix work (gfx942 bf16 D=192 43.7 -> 59.1 %, gfx950
/// 38.2 -> 64.2 % by the model, f16 D=96 307 -> 230 us; docs/performance.md,
/// "Head dims past 128, and padded head dims in chunks"). Each chunk of K
/// and V^T is then read from LDS where its product uses it, S^T sums the
/// chunks' products and O^T has one accumulator per chunk; chunks wholly
/// past the real head dim are not computed.
int64_t getAttentionHeadDimChunk(const MmaInstr &instr, int64_t headDim,
                                 int64_t realHeadDim, bool masked = false);

/// Whether an attention kernel's loop over whole, unmasked key blocks that
/// does not compute the scores ahead rescales O and l lazily (as the
/// scores-ahead loop does for 16-bit P): past padded V head dim 128 (O
/// takes a lane's 128 registers or more, and the eager rescale 64 packed
/// multiplies a block), masked loop or not; at padded head dim 64 where
/// the kernel has no masked loop (`onlyWholeBlocks`: no window, no mask, a
/// static key count that is a multiple of the block). Measured by the
/// model (docs/performance.md, "Lazy rescale" and "Head dims past 128,
/// and padded head dims in chunks"):
/// gfx942 bf16 D=64 56.0 -> 60.9 %, gfx950 D=64 38.7 -> 43.6 %, gfx90a
/// bf16 D=64 78.7 -> 84.1 %, gfx942 bf16 D=192 29.5 -> 43.7 %, causal
/// 32.8 -> 47.2 %; head dim 64 with a masked loop lost (bf16 causal 47.8
/// -> 40.2 %), and so did a head dim 128 O with 192-wide scores (gfx90a
/// bf16 causal 91.3 -> 66.3 %: the registers of the rescale's test cost
/// the second wave on the SIMD).
bool rescalesUnmaskedKeyLoopLazily(int64_t paddedHeadDim,
                                   int64_t paddedHeadDimV,
                                   bool onlyWholeBlocks);

/// Whether attention's f16 probabilities, where the row sums add the
/// rounded values (gfx90a, gfx942, no logsumexp output), are rounded
/// toward zero, two a `v_cvt_pkrtz_f16_f32`, rather than to nearest (a
/// `v_cvt_f16_f32` each and a `v_pack_b32_f16` a pair): at padded head dim
/// up to 64. Measured by the model (docs/performance.md, "P rounded toward
/// zero"): gfx942 f16 D=64 68.0 -> 70.0 %, causal 57.2 -> 58.4 %, D=40
/// 55.6 -> 59.1 %, gfx90a D=40 causal 72.3 -> 76.3 %. At head dim 128 the
/// loop issues fewer instructions too, but the result was mixed: gfx942
/// full 85.0 -> 87.6 %, while the model's two waves per SIMD fell into a
/// worse phase in gfx942 causal (80.9 -> 78.4 %) and gfx90a full (85.3 ->
/// 80.4 %).
bool roundsProbabilitiesTowardZero(int64_t paddedHeadDim);

/// Whether Q^T stays in LDS and is read where it is used, on every key
/// block, instead of living in registers across the key loop: with head-dim
/// chunks on gfx11, which holds each WMMA operand on both half-waves (Q and
/// O together fill the register file).
bool readsAttentionQueriesFromLds(const MmaInstr &instr, int64_t headDim);

/// A coalesced layout of a `shape` tile too small for every lane of the
/// workgroup to load 16 bytes of it (attention's head-dim chunks of K and
/// V^T): the waves split both dimensions, so that no two lanes load the same
/// elements, and each lane loads an equal share, as a vector along
/// `contiguousDim` and, up to `otherRun`, a run along the other dimension
/// (the vector kept at least twice the run).
BlockedAttr getSpreadCoalescedLayout(mlir::MLIRContext *context,
                                     llvm::ArrayRef<int64_t> shape,
                                     int64_t contiguousDim,
                                     unsigned elementBytes, unsigned numWaves,
                                     unsigned waveSize, int64_t otherRun = 1);

/// The coalesced layout of a `shape` tile of `elementBytes` elements stored
/// with dimension `contiguousDim` contiguous: `vectorBytes` (16) per lane
/// along it, lanes along it first, the workgroup's waves along the other
/// dimension. `otherPerThread` > 1 gives each lane that many rows of the
/// other dimension too, so that it holds runs along both (a tile whose LDS
/// copy is contiguous along the other dimension, attention's V^T, is then
/// written with vector stores).
BlockedAttr getCoalescedLayout(mlir::MLIRContext *context,
                               llvm::ArrayRef<int64_t> shape,
                               int64_t contiguousDim, unsigned elementBytes,
                               unsigned numWaves, unsigned waveSize = 64,
                               int64_t otherPerThread = 1,
                               unsigned vectorBytes = 16);

/// Which of the last two dimensions of `type` has unit stride (1 for a
/// row-major or dynamic layout).
int64_t getContiguousTileDim(mlir::MemRefType type);

} // namespace tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELCONFIG_H
