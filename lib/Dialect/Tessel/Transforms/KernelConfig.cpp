//===- KernelConfig.cpp - Matmul kernel configurations ----------*- C++ -*-===//

#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Perf/DecodeEstimate.h"
#include "tessel/Target/Mma.h"

#include "llvm/Support/MathExtras.h"

#include <functional>
#include <queue>

using namespace mlir;
using namespace tessel;

std::optional<MmaElement> tessel::getMmaElement(Type type) {
  if (type.isF32())
    return MmaElement::F32;
  if (type.isF16())
    return MmaElement::F16;
  if (type.isBF16())
    return MmaElement::Bf16;
  if (isa<Float8E4M3FNUZType, Float8E4M3FNType>(type))
    return MmaElement::Fp8;
  if (isa<Float8E5M2FNUZType, Float8E5M2Type>(type))
    return MmaElement::Bf8;
  if (type.isSignlessInteger(8))
    return MmaElement::I8;
  return std::nullopt;
}

std::string tessel::explainUnsupportedTypes(const Chip &chip, Type a, Type b) {
  std::string text;
  llvm::raw_string_ostream os(text);
  bool fp8 = isFnuzFp8Type(a) || isOcpFp8Type(a) || isFnuzFp8Type(b) ||
             isOcpFp8Type(b);
  if (fp8 && chip.fp8Format == Fp8Format::None) {
    os << chip.name << " has no 8-bit float matrix instructions";
  } else if ((isOcpFp8Type(a) || isOcpFp8Type(b)) &&
             chip.fp8Format == Fp8Format::Fnuz) {
    os << chip.name
       << " multiplies the FNUZ 8-bit floats (f8E4M3FNUZ, f8E5M2FNUZ), not "
          "the OCP ones (f8E4M3FN, f8E5M2, gfx950)";
  } else if ((isFnuzFp8Type(a) || isFnuzFp8Type(b)) &&
             chip.fp8Format == Fp8Format::Ocp) {
    os << chip.name
       << " multiplies the OCP 8-bit floats (f8E4M3FN, f8E5M2), not the "
          "FNUZ ones (f8E4M3FNUZ, f8E5M2FNUZ, gfx942)";
  } else if (!chooseMmaInstr(chip, a, b, 32) &&
             !chooseMmaInstr(chip, a, b, 16)) {
    os << chip.name << " has no matrix instruction multiplying " << a << " by "
       << b;
  }
  return text;
}

const MmaInstr *tessel::chooseMmaInstr(const Chip &chip, Type a, Type b,
                                       unsigned m, bool xf32,
                                       unsigned maxOperandElements) {
  std::optional<MmaElement> elementA = getMmaElement(a),
                            elementB = getMmaElement(b);
  if (!elementA || !elementB)
    return nullptr;
  if (xf32 && *elementA == MmaElement::F32)
    elementA = elementB = MmaElement::Xf32;
  // The 8-bit float types must be the chip's flavour.
  if ((isFnuzFp8Type(a) || isFnuzFp8Type(b)) &&
      chip.fp8Format != Fp8Format::Fnuz)
    return nullptr;
  if ((isOcpFp8Type(a) || isOcpFp8Type(b)) && chip.fp8Format != Fp8Format::Ocp)
    return nullptr;
  const MmaInstr *best = nullptr;
  double bestRate = 0;
  for (const MmaInstr &instr : getMmaCatalogue()) {
    // f32 (i32) accumulators only: the kernels accumulate in full precision
    // (gfx11's f16-accumulating WMMA is not used).
    bool fullAccumulator =
        instr.acc == MmaElement::F32 || instr.acc == MmaElement::I32;
    if (instr.m != m || instr.a != *elementA || instr.b != *elementB ||
        !fullAccumulator || !instr.isAvailableOn(chip) ||
        instr.getOperandElementsPerLane(chip.defaultWaveSize) >
            maxOperandElements)
      continue;
    double rate = double(instr.getFlops()) / instr.getCycles(chip);
    if (rate > bestRate) {
      best = &instr;
      bestRate = rate;
    }
  }
  return best;
}

static int64_t bytesOf(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}

/// Bytes of an operand one step of `instr` gives a lane.
static int64_t getOperandBytesPerStep(const MmaInstr &instr, Type a,
                                      unsigned waveSize) {
  return int64_t(instr.getOperandElementsPerLane(waveSize)) * bytesOf(a);
}

/// The smallest K tile of a matmul on `instr`: one step where a step gives
/// a lane a whole 16-byte LDS read of an operand (gfx950's doubled-K
/// instructions: 16 or 32 bytes), else two (the older MFMAs give 8 bytes or
/// fewer per step; WMMA keeps two).
static int64_t getMinMatmulTileK(const MmaInstr &instr, Type a,
                                 unsigned waveSize) {
  return getOperandBytesPerStep(instr, a, waveSize) >= 16 && !instr.isWmma()
             ? instr.k
             : 2 * instr.k;
}

/// The size the chooser plans for: a dynamic one is assumed large.
static uint64_t plannedSize(int64_t size) {
  return ShapedType::isDynamic(size) ? kAssumedDynamicSize
                                     : std::max<int64_t>(size, 1);
}

/// Tile sizes worth trying along a dimension of `size` for an instruction
/// `instrSize` wide: powers of two from the instruction's size to 256, none
/// past the smallest power of two covering the dimension.
static SmallVector<int64_t> tileSizes(uint64_t size, unsigned instrSize) {
  SmallVector<int64_t> sizes;
  uint64_t cover = std::max<uint64_t>(instrSize, llvm::PowerOf2Ceil(size));
  for (int64_t tile = instrSize; tile <= 256 && uint64_t(tile) <= cover;
       tile *= 2)
    sizes.push_back(tile);
  return sizes;
}

/// Stream-K is offered for tiles whose K loop has at least this many steps.
/// Each piece of a tile restarts the pipelined K loop (its first loads'
/// latency exposed) and a cut tile adds a partial's round trip through
/// memory; the analytical form counts these once per piece and, on short
/// K loops (1024^3 in 16 steps of 64), ranks stream-K ahead of configs the
/// ISA-level model predicts 15-45 % faster. From 32 steps on the piece's
/// cost is small against the last round it removes.
constexpr int64_t kMinStreamKStepsPerTile = 32;

/// How much faster than the best plain config the analytical form must
/// predict a stream-K config to rank it first on RDNA (WMMA) chips. On CDNA
/// stream-K configs rank by their predicted time alone: without the lead,
/// 85 of the 87 picks it changed over 310 CDNA problems got faster by the
/// ISA-level model, none spilled. On gfx1100 and gfx1201, 22 of 24 did, but
/// gfx1100 4000^3 NN lost 14.5 points and 1000x999x1024 NN spilled
/// (docs/performance-model.md, "Stream-K candidates").
constexpr double kRdnaStreamKMargin = 0.05;

/// Whether the last piece of a cut tile can sum the pieces at two waves per
/// SIMD: the running sum and the piece just loaded are both live, a tile of
/// accumulators each, beside the addresses and loop bookkeeping.
static bool fitsStreamKSum(int64_t accumulatorVgprs) {
  return 2 * accumulatorVgprs + kMatmulBookkeepingVgprs <=
         kTwoWavesRegisterBudget;
}

/// Split-K counts worth trying for a tile: 1, and on a problem of static
/// sizes whose C does not fill the chip even in the instruction's smallest
/// tiles (decode shapes: a few rows of C), 2 to 16 splits that each get at
/// least one K step (the verifier's rule). Where smaller tiles fill the
/// chip they do it without the partials' traffic.
static SmallVector<int64_t> getSplitKCandidates(const Chip &chip,
                                                MatmulProblemSizes sizes,
                                                const MatmulShape &shape,
                                                const MmaInstr &instr,
                                                int64_t tileK) {
  SmallVector<int64_t> candidates = {1};
  bool isStatic = !ShapedType::isDynamic(sizes.m) &&
                  !ShapedType::isDynamic(sizes.n) &&
                  !ShapedType::isDynamic(sizes.k) &&
                  !ShapedType::isDynamic(sizes.batch) && sizes.staticC;
  uint64_t smallestTiles = llvm::divideCeil(shape.m, instr.m) *
                           llvm::divideCeil(shape.n, instr.n) * shape.batch;
  if (!isStatic || smallestTiles >= chip.numCUs)
    return candidates;
  for (int64_t splits : {2, 4, 8, 16})
    if ((splits - 1) * getSplitKChunk(sizes.k, tileK, splits) < sizes.k)
      candidates.push_back(splits);
  return candidates;
}

MatmulProblemSizes tessel::getMatmulProblemSizes(MatmulOp matmul) {
  MemRefType aType = matmul.getA().getType();
  MemRefType bType = matmul.getB().getType();
  int64_t rank = aType.getRank();
  MatmulProblemSizes sizes{
      aType.getDimSize(rank - 2), bType.getDimSize(rank - 1),
      aType.getDimSize(rank - 1), rank == 3 ? aType.getDimSize(0) : 1};
  sizes.batched = rank == 3;
  sizes.staticC = matmul.getC().getType().hasStaticShape();
  sizes.aKContiguous = getContiguousTileDim(aType) == 1;
  sizes.bKContiguous = getContiguousTileDim(bType) == 0;
  // A row or column of scales or bias (a size of 1 in the last two
  // dimensions) is not tile-sized; a residual is.
  bool tileSizedExtra = llvm::any_of(matmul.getExtras(), [](Value extra) {
    auto type = dyn_cast<MemRefType>(extra.getType());
    int64_t rank = type ? type.getRank() : 0;
    return rank >= 2 && type.getDimSize(rank - 1) != 1 &&
           type.getDimSize(rank - 2) != 1;
  });
  // Math functions (an activation's exp, erf, tanh) hold their own
  // temporaries: with them the 256-register 8-wave tiles spilled.
  bool mathInEpilogue = false;
  matmul.getEpilogue().walk([&](Operation *op) {
    mathInEpilogue |= isa_and_nonnull<math::MathDialect>(op->getDialect());
  });
  sizes.leanEpilogue = aType.hasStaticShape() && bType.hasStaticShape() &&
                       sizes.staticC && !tileSizedExtra && !mathInEpilogue;
  sizes.epilogueVectors = matmul.getExtras().size();
  return sizes;
}

std::vector<RankedMatmulConfig>
tessel::rankMatmulConfigs(MLIRContext *context, const Chip &chip, Type a,
                          Type b, Type c, MatmulProblemSizes sizes) {
  MatmulShape shape;
  shape.m = plannedSize(sizes.m);
  shape.n = plannedSize(sizes.n);
  shape.k = plannedSize(sizes.k);
  shape.batch = plannedSize(sizes.batch);
  shape.bytesA = bytesOf(a);
  shape.bytesB = bytesOf(b);
  shape.bytesC = bytesOf(c);
  shape.aKContiguous = sizes.aKContiguous;
  shape.bKContiguous = sizes.bKContiguous;

  // Stream-K needs static sizes and no batch (its shares of the steps and
  // its workspace come from them). It is not offered to tiles that read an
  // operand from LDS element by element (stored with K not contiguous, on
  // a K tile too short for K runs, writesOperandInKRuns, on a chip without
  // transposing LDS reads, readsOperandTransposed): the analytical
  // form under-counts those loops for the wide per-wave shares stream-K's
  // configs have (4096^3 NN: such a stream-K pick measured a 66.8 % dense K
  // loop against the plain pick's 89.5 %).
  bool streamKAllowed = !sizes.batched && !ShapedType::isDynamic(sizes.m) &&
                        !ShapedType::isDynamic(sizes.n) &&
                        !ShapedType::isDynamic(sizes.k) && sizes.staticC;
  std::vector<RankedMatmulConfig> ranked;
  for (unsigned instrSize : {32u, 16u}) {
    const MmaInstr *instr = chooseMmaInstr(chip, a, b, instrSize);
    if (!instr)
      continue;
    StringAttr instrName = StringAttr::get(context, instr->name);
    // K tiles of 32, 64 and 128 bytes per row, at least the instruction
    // steps that give a lane 16 bytes of LDS at once, none far past K.
    SmallVector<int64_t> tileKs;
    int64_t groupK = getMinMatmulTileK(*instr, a, chip.defaultWaveSize);
    int64_t coverK = std::max<int64_t>(groupK, llvm::PowerOf2Ceil(shape.k));
    for (int64_t bytes : {32, 64, 128}) {
      int64_t tileK = std::max<int64_t>(groupK, bytes / shape.bytesA);
      if (tileK <= coverK && tileK % groupK == 0 &&
          !llvm::is_contained(tileKs, tileK))
        tileKs.push_back(tileK);
    }
    for (int64_t tileM : tileSizes(shape.m, instr->m))
      for (int64_t tileN : tileSizes(shape.n, instr->n))
        for (int64_t wavesM : {1, 2, 4})
          for (int64_t wavesN : {1, 2, 4}) {
            if (wavesM * wavesN > 8 || tileM % (instr->m * wavesM) ||
                tileN % (instr->n * wavesN))
              continue;
            for (int64_t tileK : tileKs)
              for (int64_t splits :
                   getSplitKCandidates(chip, sizes, shape, *instr, tileK)) {
                SmallVector<int64_t> tile = {tileM, tileN, tileK};
                SmallVector<int64_t> waves = {wavesM, wavesN};
                auto config =
                    ConfigAttr::get(context, tile, waves, /*stages=*/2,
                                    instrName, splits, /*streamK=*/0);
                MatmulResources resources =
                    estimateMatmulResources(config, a, b, chip.defaultWaveSize);
                // The lowering keeps accumulators in architectural VGPRs:
                // past them the backend spills.
                if (resources.ldsBytes > chip.maxLdsBytesPerWorkgroup ||
                    resources.totalVgprs() > chip.maxArchVgprs)
                  continue;
                MatmulCandidate candidate;
                candidate.tileM = tileM;
                candidate.tileN = tileN;
                candidate.tileK = tileK;
                candidate.wavesM = wavesM;
                candidate.wavesN = wavesN;
                candidate.stages = 2;
                candidate.splits = splits;
                candidate.unrolled =
                    fitsUnrolledKLoop(resources.accumulatorVgprs,
                                      resources.stepVgprs) ||
                    fitsUnrolledKLoopInPlace(
                        resources.accumulatorVgprs, resources.stepVgprs,
                        resources.stepTileVgprs,
                        tileM / (instr->m * wavesM) *
                            (tileN / (instr->n * wavesN)) *
                            std::max<int64_t>(1, tileK / instr->k),
                        instr->isWmma() ? 0 : wavesM * wavesN,
                        !ShapedType::isDynamic(sizes.k) && !sizes.batched &&
                            splits == 1);
                candidate.leanEpilogue = sizes.leanEpilogue;
                candidate.epilogueVectors = sizes.epilogueVectors;
                candidate.instr = instr;
                candidate.vgprs = resources.totalVgprs();
                candidate.ldsBytes = resources.ldsBytes;
                ranked.push_back(
                    {config, estimateMatmul(chip, shape, candidate)});
                unsigned waveSize = chip.defaultWaveSize;
                auto readsElements = [&](bool kContiguous, unsigned bytes) {
                  return !kContiguous &&
                         !readsOperandTransposed(chip, *instr, bytes) &&
                         !writesOperandInKRuns(*instr, waveSize, tileK, bytes);
                };
                bool elementReads =
                    readsElements(sizes.aKContiguous, shape.bytesA) ||
                    readsElements(sizes.bKContiguous, shape.bytesB);
                if (splits > 1 || !streamKAllowed || elementReads ||
                    int64_t(llvm::divideCeil(shape.k, tileK)) <
                        kMinStreamKStepsPerTile ||
                    !fitsStreamKSum(resources.accumulatorVgprs))
                  continue;
                // The same tile with stream-K over one workgroup per slot
                // (whose K loops have dynamic bounds: no reads in place).
                candidate.streamK = true;
                candidate.unrolled = fitsUnrolledKLoop(
                    resources.accumulatorVgprs, resources.stepVgprs);
                MatmulEstimate streamK = estimateMatmul(chip, shape, candidate);
                if (streamK.workgroups == 0 || !std::isfinite(streamK.seconds))
                  continue;
                ranked.push_back(
                    {ConfigAttr::get(context, tile, waves, /*stages=*/2,
                                     instrName, /*splits=*/1,
                                     int64_t(streamK.workgroups)),
                     streamK});
              }
          }
  }
  // Fastest first; among equals the one with fewer waves, then the one
  // whose waves own the squarest pieces of C (the fewest operand bytes read
  // from LDS per MFMA), then the enumeration order (larger instructions,
  // smaller tiles first).
  auto waveAspect = [](ConfigAttr config) {
    int64_t waveM = config.getTile()[0] / config.getWaves()[0];
    int64_t waveN = config.getTile()[1] / config.getWaves()[1];
    return std::max(waveM, waveN) /
           std::max<int64_t>(1, std::min(waveM, waveN));
  };
  double streamKMargin = chip.isCDNA() ? 0 : kRdnaStreamKMargin;
  auto rankingSeconds = [&](const RankedMatmulConfig &ranked) {
    return ranked.estimate.seconds *
           (ranked.config.getStreamK() ? 1 + streamKMargin : 1);
  };
  llvm::stable_sort(
      ranked, [&](const RankedMatmulConfig &x, const RankedMatmulConfig &y) {
        if (rankingSeconds(x) != rankingSeconds(y))
          return rankingSeconds(x) < rankingSeconds(y);
        if (x.config.getNumWaves() != y.config.getNumWaves())
          return x.config.getNumWaves() < y.config.getNumWaves();
        return waveAspect(x.config) < waveAspect(y.config);
      });
  return ranked;
}

ConfigAttr tessel::getDefaultMatmulConfig(MLIRContext *context,
                                          const Chip &chip, Type a, Type b,
                                          Type c, MatmulProblemSizes sizes) {
  std::vector<RankedMatmulConfig> ranked =
      rankMatmulConfigs(context, chip, a, b, c, sizes);
  return ranked.empty() ? ConfigAttr() : ranked.front().config;
}

MatmulResources tessel::estimateMatmulResources(ConfigAttr config, Type a,
                                                Type b, unsigned waveSize) {
  ArrayRef<int64_t> tile = config.getTile();
  int64_t lanes = waveSize * config.getNumWaves();
  int64_t tileM = tile[0], tileN = tile[1], tileK = tile[2];
  MatmulResources resources;
  // The pipelined loop (stages > 1) keeps two slots of each tile in LDS.
  int64_t slots = config.getStages() > 1 ? 2 : 1;
  int64_t stageBytes = tileM * tileK * bytesOf(a) + tileK * tileN * bytesOf(b);
  resources.ldsBytes = slots * stageBytes;
  resources.accumulatorVgprs = tileM * tileN / lanes; // 32-bit accumulators
  // Operands: each wave reads its rows of A and columns of B (two steps'
  // worth when pipelined); the prefetched tiles of a later K step are spread
  // over all lanes.
  int64_t operandBytes =
      slots * (tileM / config.getWaves()[0] * tileK * bytesOf(a) / waveSize +
               tileN / config.getWaves()[1] * tileK * bytesOf(b) / waveSize);
  int64_t prefetchBytes = config.getStages() > 1 ? stageBytes / lanes : 0;
  resources.operandVgprs = llvm::divideCeil(operandBytes + prefetchBytes, 4);
  resources.stepVgprs =
      llvm::divideCeil(operandBytes / slots + prefetchBytes, 4);
  resources.stepTileVgprs = llvm::divideCeil(prefetchBytes, 4);
  return resources;
}

LogicalResult
tessel::checkMatmulConfig(ConfigAttr config, const Chip &chip, Type a, Type b,
                          function_ref<InFlightDiagnostic()> emitError) {
  ArrayRef<int64_t> tile = config.getTile();
  if (tile.size() != 3)
    return emitError() << "a matmul config has tile = [M, N, K]";
  std::string why = explainUnsupportedTypes(chip, a, b);
  if (!why.empty())
    return emitError() << why;
  if (!config.getInstr())
    return emitError() << "the config names no instruction";
  if (config.getDirectCopies() && !chip.hasLdsDirectLoads16())
    return emitError() << "direct_copies needs 16-byte loads straight into "
                          "LDS (global_load_lds_dwordx4, gfx950); "
                       << chip.name << " has none";
  StringRef name = config.getInstr().getValue();
  const MmaInstr *instr = lookupMma(name, chip);
  if (!instr)
    return emitError() << "instruction " << name << " is not available on "
                       << chip.name;
  std::optional<MmaElement> elementA = getMmaElement(a),
                            elementB = getMmaElement(b);
  if (const MmaInstr *typed = lookupMma(name, chip, elementA, elementB))
    instr = typed;
  bool xf32 = instr->a == MmaElement::Xf32 && elementA == MmaElement::F32 &&
              elementB == MmaElement::F32;
  if (!xf32 && (instr->a != elementA || instr->b != elementB))
    return emitError() << "instruction " << name << " multiplies "
                       << stringifyMmaElement(instr->a) << " by "
                       << stringifyMmaElement(instr->b) << ", not " << a
                       << " by " << b;
  // tessel-pipeline keeps two LDS slots of a matmul's K loop (the K step
  // in flight and the next); a deeper pipeline is attention's.
  if (config.getStages() > 2)
    return emitError() << "a matmul's K loop pipelines at most 2 stages (two "
                          "LDS slots), got stages = "
                       << config.getStages();
  ArrayRef<int64_t> waves = config.getWaves();
  if (tile[0] % (instr->m * waves[0]) || tile[1] % (instr->n * waves[1]))
    return emitError() << "tile " << tile[0] << "x" << tile[1]
                       << " is not a multiple of " << instr->m << "x"
                       << instr->n << " instruction tiles times " << waves[0]
                       << "x" << waves[1] << " waves";
  int64_t minTileK = getMinMatmulTileK(*instr, a, chip.defaultWaveSize);
  if (tile[2] % minTileK) {
    InFlightDiagnostic diag = emitError()
                              << "tile K " << tile[2]
                              << " is not a multiple of " << minTileK;
    if (minTileK == instr->k)
      return diag << " (one step of " << name << ")";
    diag << " (two steps of " << name;
    if (!instr->isWmma())
      diag << ": one step gives a lane "
           << getOperandBytesPerStep(*instr, a, chip.defaultWaveSize)
           << " bytes of an operand, less than one 16-byte LDS read";
    return diag << ")";
  }
  MatmulResources resources =
      estimateMatmulResources(config, a, b, chip.defaultWaveSize);
  if (resources.ldsBytes > chip.maxLdsBytesPerWorkgroup)
    return emitError() << "the config needs " << resources.ldsBytes
                       << " bytes of LDS, over the "
                       << chip.maxLdsBytesPerWorkgroup << " of " << chip.name;
  int64_t registerBudget = chip.maxArchVgprs + chip.maxAccVgprs;
  if (resources.totalVgprs() > registerBudget)
    return emitError() << "the config needs about " << resources.totalVgprs()
                       << " VGPRs per lane (" << resources.accumulatorVgprs
                       << " for the accumulator), over the " << registerBudget
                       << " of " << chip.name;
  return success();
}

int64_t tessel::getAttentionHeadDimChunk(const MmaInstr &instr, int64_t headDim,
                                         int64_t realHeadDim, bool masked) {
  if (instr.isWmma())
    return headDim > 128 ? 64 : headDim;
  // The MFMA's 32 rows (and two of its K steps) at a time where that
  // computes fewer head dims than the padded ones (160 or 192 of 256, 96
  // of 128; not 112 or 240, whose chunks only cost their reads at use:
  // gfx942 f16 D=112 307 -> 364 us): past 64 with the 8-deep instructions
  // (gfx90a and gfx942's 16-bit ones) and in masked kernels (causal,
  // windows), past 128 with the 16-deep ones without masks, whose kernels
  // at 80 lost (gfx950 bf16: 212 -> 232 us; causal: 137 -> 115 us).
  int64_t rows = std::max<int64_t>({32, instr.m, 2 * instr.k});
  int64_t smallest = instr.k <= 8 || masked ? 64 : 128;
  return headDim > smallest &&
                 int64_t(llvm::alignTo(realHeadDim, rows)) < headDim
             ? rows
             : headDim;
}

bool tessel::rescalesUnmaskedKeyLoopLazily(int64_t paddedHeadDim,
                                           int64_t paddedHeadDimV,
                                           bool onlyWholeBlocks) {
  return paddedHeadDimV > 128 || (onlyWholeBlocks && paddedHeadDim == 64);
}

bool tessel::roundsProbabilitiesTowardZero(int64_t paddedHeadDim) {
  return paddedHeadDim <= 64;
}

bool tessel::readsAttentionQueriesFromLds(const MmaInstr &instr,
                                          int64_t headDim) {
  return instr.family == MmaFamily::Rdna3 &&
         getAttentionHeadDimChunk(instr, headDim, headDim) < headDim;
}

int64_t tessel::getOperandKWidth(const MmaInstr &instr, unsigned waveSize,
                                 int64_t tileK, unsigned elementBytes) {
  int64_t kWidth = instr.getOperandElementsPerLane(waveSize);
  if (instr.isWmma())
    return kWidth;
  int64_t lanesAlongK = waveSize / instr.m;
  while (2 * kWidth * elementBytes <= 16 &&
         tileK % (2 * kWidth * lanesAlongK) == 0)
    kWidth *= 2;
  return kWidth;
}

/// The bytes of a key block's K and V^T.
static int64_t getKeyBlockBytes(Type element, int64_t blockN, int64_t headDim) {
  return 2 * blockN * headDim *
         llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
}
/// Whether two LDS slots of a key block's K and V^T fit two workgroups on
/// a CU (the double buffer, `stages` >= 3, keeping two waves a SIMD).
static bool keySlotsFitTwoWorkgroups(const Chip &chip, Type element,
                                     int64_t blockN, int64_t headDim) {
  return 2 * 2 * getKeyBlockBytes(element, blockN, headDim) <=
         int64_t(chip.ldsBytesPerCU);
}
/// Whether two LDS slots fit one workgroup: past head dim 128 the O
/// accumulator alone takes half a lane's registers, so the kernel runs one
/// wave per SIMD and one workgroup per CU whatever its LDS.
static bool keySlotsFitOneWorkgroup(const Chip &chip, Type element,
                                    int64_t blockN, int64_t headDim) {
  int64_t bytes = 2 * getKeyBlockBytes(element, blockN, headDim);
  return bytes <= int64_t(chip.ldsBytesPerCU) &&
         bytes <= int64_t(chip.maxLdsBytesPerWorkgroup);
}

/// The pipeline depth of a prefetching attention kernel's key loop
/// (tessel-pipeline), by the model's predictions (docs/performance.md,
/// "Prefetching the next key block" and "Double-buffered key blocks and
/// the next block's scores ahead"):
///  - 2: the next key block's K and V^T are loaded into registers while
///    this block computes, instead of at the top of its own iteration. It
///    pays in masked (causal, local) kernels, which hold one wave pair per
///    SIMD, and in the 32-key kernels past head dim 64; the others keep
///    their latency hidden by more waves (head dim 64 without masks) or
///    have no registers left for it (64-key blocks at head dim 128): 1.
///  - 3: K and V^T double-buffered in LDS as well, the block after next in
///    registers, one barrier per block instead of two. It pays past head
///    dim 64 up to 128 on CDNA where the two slots leave LDS for the two
///    workgroups per CU the registers allow, but in gfx950's masked
///    kernels; past head dim 128 (256, not padded) wherever the two slots
///    fit the CU, since O then holds a wave per SIMD and a workgroup per
///    CU anyway (gfx942 bf16 D=256 with the lazy rescale: 54.2 -> 63.9 %,
///    causal 58.3 -> 68.7 %; gfx950 causal 54.6 -> 60.1 %).
///  With scores_ahead the kernels take the double buffer too (gfx942 head
///  dim 128: f16 75.7 -> 78.2 %, bf16 72.6 -> 73.7 %); the masked ones
///  have the registers for it since their scores-ahead loop rescales
///  lazily (gfx942 f16 causal: 65.4 % with registers only, 70.9 % with
///  both slots, 234 VGPRs). A head dim padded to a power of
///  two loads its last chunk with masks, which tessel-pipeline leaves
///  alone: two slots would only cost LDS.
static int64_t getAttentionStages(const Chip &chip, Type element,
                                  int64_t blockN, int64_t headDim, bool masked,
                                  bool paddedHeadDim) {
  if (!paddedHeadDim && headDim > 64 && headDim <= 128 && chip.isCDNA() &&
      (!masked || !chip.hasLdsTransposeReads()) &&
      keySlotsFitTwoWorkgroups(chip, element, blockN, headDim))
    return 3;
  if (!paddedHeadDim && headDim > 128 && chip.isCDNA() &&
      keySlotsFitOneWorkgroup(chip, element, blockN, headDim))
    return 3;
  return masked || (blockN == 32 && headDim > 64) ? 2 : 1;
}

/// Whether a kernel on gfx950's 16-deep instructions computes the next key
/// block's S^T ahead, in 32-key blocks: a block's first product takes half
/// the clocks of gfx942's for the same work, so its softmax is the longer,
/// and the scores ahead let a wave's softmax run under its own next
/// product. By the model (docs/performance.md, "gfx950: the scores ahead
/// at head dim 128"): they pay at head dim 128 without masks, f16 and bf16
/// (batch 2 x 16 heads x 4096: 53.6 -> 61.9 %, with the logsumexp 53.5 ->
/// 56.1 %); they lose at padded head dims (96 and 112: 45.4 -> 42.3-43.9
/// %), with masks (causal 53.2 -> 50.5 %), at head dim 64 and for 8-bit
/// inputs.
static bool getSixteenDeepScoresAhead(const MmaInstr &instr, Type element,
                                      int64_t headDim, bool paddedHeadDim,
                                      bool masked) {
  return instr.k > 8 && !masked && headDim == 128 && !paddedHeadDim &&
         (element.isF16() || element.isBF16());
}

/// Whether a prefetching attention kernel computes the next key block's S^T
/// one iteration ahead (`scores_ahead`), by the model's predictions
/// (docs/performance.md, "Double-buffered key blocks and the next block's
/// scores ahead"): where one
/// block's first product takes about as long as its softmax, the
/// instructions 8 values deep (gfx90a and gfx942) with P converted in
/// hardware (f16), for head dims 64 to 128 in 32-key blocks (or 64 at
/// most): the loop then holds two S^T tiles, which spill past head dim 64
/// in masked kernels and in 64-key blocks. gfx950's 16-deep instructions:
/// getSixteenDeepScoresAhead. bf16, whose P gfx90a and gfx942 round in
/// software, wins
/// in the 32-key kernels past head dim 64 (gfx942 head dim 128: 68.1 ->
/// 73.7 %, with the double buffer); at head dim 64 it won too (55.8 ->
/// 60.6 %) but spilled with the logsumexp output, and a causal one takes
/// AGPRs, one wave per SIMD (47.8 -> 37.6 %). The masked 32-key kernels
/// (causal, local) fit the two S^T tiles since the loop's lazy rescale
/// took the rescale's temporaries out of it (gfx942 head dim 128, causal,
/// with the double buffer: f16 60.0 -> 70.9 %, bf16 -> 67.2 %; gfx90a f16
/// 85.7 -> 87.5 %, bf16 84.6 -> 86.1 %; no spills).
static bool getAttentionScoresAhead(const Chip &chip, const MmaInstr &instr,
                                    Type element, int64_t blockN,
                                    int64_t headDim, bool paddedHeadDim,
                                    KeyWindow window) {
  bool masked = !window.isFull();
  if (!chip.isCDNA() || headDim < 64 || headDim > 128)
    return false;
  if (instr.k > 8)
    return blockN == 32 && getSixteenDeepScoresAhead(instr, element, headDim,
                                                     paddedHeadDim, masked);
  if (element.isBF16())
    return headDim > 64 && blockN == 32;
  // A local (windowed) kernel at head dim 64 has masked loops on both
  // sides of its main one: with the scores ahead the gfx942 f16 kernel took
  // 262 VGPRs, one wave per SIMD (35.4 % without them, 23.7 % with; on
  // gfx90a 57.2 and 60.2 %).
  return element.isF16() &&
         ((headDim == 64 && !window.hasLeft()) || blockN == 32);
}

/// The rows of the decode blocks that take the 16x16 instructions.
constexpr int64_t kSmallDecodeRows = 16;
/// The most splits chooseDecodeSplits considers, and the key block of
/// decode blocks of at most 32 rows where the keys fill that many.
constexpr int64_t kMaxDecodeSplits = 64, kWideDecodeKeys = 64;

ConfigAttr tessel::getDefaultAttentionConfig(MLIRContext *context,
                                             const Chip &chip, Type element,
                                             int64_t seqQ, int64_t seqKV,
                                             int64_t realHeadDim,
                                             KeyWindow window, int64_t groups) {
  bool masked = !window.isFull();
  int64_t headDim = getPaddedHeadDim(realHeadDim);
  const MmaInstr *instr =
      chooseMmaInstr(chip, element, element, 32,
                     /*xf32=*/false, kMaxAttentionOperandElements);
  // The WMMA chips multiply 16x16 tiles; their P^T reaches the second
  // product in the operand's own order (see tessel-select-mfma).
  if (!instr && !chip.isCDNA())
    instr = chooseMmaInstr(chip, element, element, 16);
  if (!instr)
    return {};
  // Four waves of 32 queries each: one wave per SIMD, and two per SIMD
  // where two workgroups share a CU, so that one wave's softmax runs under
  // the other's matrix instructions. Each wave keeps its queries' Q, O and
  // statistics in registers; K and V blocks are shared through LDS. Short
  // query sequences take fewer waves rather than leave some idle. (The
  // model's predictions for 2, 4 and 8 waves per workgroup and 32 or 64
  // keys per block are in docs/performance.md.)
  int64_t blockM = 128;
  // Decode (a few queries) is judged by bandwidth.
  bool decode = !ShapedType::isDynamic(seqQ) && seqQ <= 16;
  // A decode block holds the queries of a whole group of query heads
  // where they fit (getPackableQueryHeadGroup, getPackedQueryHeads).
  int64_t rows = seqQ;
  if (decode && groups > 1 && groups * seqQ <= 128)
    rows = groups * seqQ;
  if (!ShapedType::isDynamic(seqQ))
    blockM = std::clamp<int64_t>(llvm::PowerOf2Ceil(rows), 32, 128);
  // 64-key blocks halve the barriers per key, where a wave's registers
  // for them still fit 256 (two waves per SIMD). They do not past head dim
  // 128, in the masked loops of a causal or local (windowed) kernel past
  // head dim 64, or with bf16 before gfx950, which rounds P in software (no
  // v_cvt_pk_bf16_f32). A kernel without masks up to head dim 64 takes 32
  // keys too: the model predicts their lower register count (a fourth
  // workgroup per CU) to win; a masked one keeps 64, which halves its
  // masked diagonal blocks. gfx950's kernels without masks at head dim
  // 128 take 32 keys and the scores ahead (getSixteenDeepScoresAhead).
  // Decode blocks take 64 keys too: half the key loop's
  // latency-bound iterations (gfx942 b1, 1 query of 4 heads, 4096 keys,
  // 64 splits: 5.90 -> 5.16 us; gfx950 8 queries, 32768 keys: 23.4 ->
  // 22.3 us at the best split counts; the same at batch 8) where the keys
  // still give the most splits a block each (with 1000 keys, 8 splits of
  // 64-key blocks took 6.28 us against 32 of 32-key blocks' 4.73); not
  // for a padded head dim (96: 20-27 SGPRs spilled with a causal mask and
  // the logsumexp) nor a window's left edge (2-14 SGPRs).
  // (docs/performance.md has the model's predictions for each choice.)
  // On gfx90a a kernel with a left window edge (three key loops, two of
  // them masked) spills 8-33 SGPRs with 64-key blocks at head dims 32 and
  // 64 (f16 and bf16; none on gfx942 and gfx950): it takes 32 keys, with
  // no spills (docs/performance.md, "Local attention and sinks").
  bool leftEdgeSpills = window.hasLeft() && chip.isaVersion() < 9400;
  bool softwareBf16 = element.isBF16() && !chip.convertsToBf16();
  bool paddedHeadDim = realHeadDim != headDim;
  bool wideBlocks =
      decode   ? headDim <= 128 && (blockM > 32 ||
                                  (!paddedHeadDim && !window.hasLeft() &&
                                   !ShapedType::isDynamic(seqKV) &&
                                   seqKV >= kMaxDecodeSplits * kWideDecodeKeys))
      : masked ? headDim <= 64 && !leftEdgeSpills
               : headDim > 64 && headDim <= 128 && !softwareBf16 &&
                     !getSixteenDeepScoresAhead(*instr, element, headDim,
                                                paddedHeadDim, masked);
  // A wave32 lane holds twice a wave64 lane's share of a tile: a wave
  // takes 16 queries instead of 32 and the key blocks stay at 32, which
  // keeps its registers where a wave64's are.
  bool wave32 = chip.defaultWaveSize == 32;
  if (wave32)
    wideBlocks = false;
  int64_t queriesPerWave = wave32 ? 16 : 32;
  int64_t blockN = wideBlocks ? 64 : 32;
  // gfx11 holds each WMMA operand twice (both half-waves): past head dim 64
  // a 32-key block's K and V do not fit next to Q and O, 16 keys do. Past
  // head dim 128 (head-dim chunks) O alone takes half of a WMMA chip's
  // registers: 16 keys on gfx12 too, and on gfx11, whose Q stays in LDS,
  // at most 64 queries so that Q, K and V fit its 64 KiB.
  // (The MFMA chips' chunks of a padded head dim keep 32-key blocks and
  // the prefetch.)
  bool chunked = instr->isWmma() && getAttentionHeadDimChunk(
                                        *instr, headDim, realHeadDim) < headDim;
  if ((instr->family == MmaFamily::Rdna3 && headDim > 64) || chunked)
    blockN = 16;
  // A chunked decode block takes four waves even for a few queries: two
  // would each stage half of a key block's K and V (64 VGPRs at head dim
  // 256) on its way to LDS, next to O^T's 128.
  if (chunked && decode)
    blockM = std::max<int64_t>(blockM, 64);
  if (readsAttentionQueriesFromLds(*instr, headDim))
    blockM = std::min<int64_t>(blockM, 64);
  // A decode block of at most 16 rows (one query of up to 16 packed heads,
  // a few queries of fewer) takes the 16x16 instructions: a 32-row block
  // would compute, exponentiate and merge twice the rows it has (gfx942,
  // b1, 32 heads on 8, 1 query, 32768 keys: 68.2 -> 73.7 % of HBM by the
  // model, each at its best split count). A larger group stays in one
  // 32-row block, whose K and V one workgroup reads rather than two (8
  // queries of 4 heads at batch 8, 4096 keys, 8 splits: 68.0 % in one
  // block, 44.7 % in two of 16 rows), on two waves of 16 rows each: two
  // SIMDs stream and compute its keys, and two merge (8 queries of 4
  // heads, 4096 keys: batch 1 22.1 -> 27.4 %, batch 8 72.0 -> 75.2 % on
  // gfx942; docs/performance.md).
  // (Where the head dim holds two K steps of the 16x16 instruction: not
  // head dim 32 on gfx950, whose 16x16x32 needs 64.)
  if (decode && chip.isCDNA() && !wave32 && !chunked && blockM <= 32) {
    const MmaInstr *small =
        chooseMmaInstr(chip, element, element, kSmallDecodeRows,
                       /*xf32=*/false, kMaxAttentionOperandElements);
    if (small && headDim % (2 * small->k) == 0) {
      instr = small;
      queriesPerWave = kSmallDecodeRows;
      if (rows <= kSmallDecodeRows)
        blockM = kSmallDecodeRows;
    }
  }
  SmallVector<int64_t> tile = {blockM, blockN};
  SmallVector<int64_t> waves = {blockM / queriesPerWave, 1};
  // Decode (a few queries): one query block per head leaves most CUs idle,
  // so the keys are spread over workgroups. 8 splits here;
  // chooseAttentionSplits ranks the counts by the model when the sizes
  // are known.
  int64_t splits = decode ? 8 : 1;
  bool prefetch = !decode && !wave32 && !chunked;
  bool scoresAhead =
      prefetch && getAttentionScoresAhead(chip, *instr, element, blockN,
                                          headDim, paddedHeadDim, window);
  int64_t stages = prefetch ? getAttentionStages(chip, element, blockN, headDim,
                                                 masked, paddedHeadDim)
                            : 1;
  return ConfigAttr::get(context, tile, waves, stages,
                         StringAttr::get(context, instr->name), splits,
                         /*streamK=*/0, scoresAhead);
}

/// Stream-K attention: the workgroups per CU its configs are built for
/// (four waves each, two waves per SIMD), and the fewest key blocks a
/// workgroup's share may hold.
constexpr int64_t kStreamKAttentionWorkgroupsPerCU = 2;
constexpr int64_t kMinStreamKAttentionSteps = 4;
/// Stream-K pays where the data-parallel grid fills less than this share of
/// its rounds' slots.
constexpr double kStreamKAttentionGridEfficiency = 0.9;
/// The share of the spec HBM bandwidth a kernel streams at (the performance
/// model's `hbmEfficiency`).
constexpr double kAttentionHbmEfficiency = 0.88;

/// Whether stream-K's merges cost less than the idle slots they fill, in
/// the performance model's terms: the stream-K kernel takes at least the
/// time to move the inputs, O and its workspaces (`workgroups` x 2 pieces
/// of blockM x (Dv + 1) f32) through HBM; the data-parallel one at least
/// its matrix work at the chip's peak over its grid efficiency. (Small
/// causal problems lose: b2 x 16 heads x 1024 queries, 256 query blocks on
/// 608 slots, is predicted 23.7 us one workgroup per query block and 24.4
/// us with stream-K, bound by the 80 MB of workspace.)
static bool streamKPays(AttentionOp op, const AttentionStreamKWork &work,
                        ConfigAttr candidate, int64_t workgroups,
                        double gridEfficiency, const Chip &chip) {
  std::optional<MatrixType> type =
      getMatrixType(candidate.getInstr().getValue());
  double peak = type ? chip.peakMatrixTeraOps(*type) * 1e12 : 0;
  if (peak <= 0 || chip.memoryBandwidthTBs <= 0)
    return false;
  int64_t blockM = candidate.getTile()[0], blockN = candidate.getTile()[1];
  int64_t headDim = op.getQ().getType().getDimSize(3);
  int64_t headDimV = op.getV().getType().getDimSize(3);
  double flops = 2.0 * double(work.steps()) * double(blockM * blockN) *
                 double(headDim + headDimV);
  double problemBytes = 0;
  for (Value array : {op.getQ(), op.getK(), op.getV(), op.getO()}) {
    auto type = cast<MemRefType>(array.getType());
    problemBytes += double(type.getNumElements()) *
                    double(llvm::divideCeil(
                        type.getElementType().getIntOrFloatBitWidth(), 8));
  }
  double workspaceBytes =
      double(workgroups) * 2.0 * double(blockM) * double(headDimV + 1) * 4.0;
  double streamKSeconds =
      (problemBytes + workspaceBytes) /
      (chip.memoryBandwidthTBs * 1e12 * kAttentionHbmEfficiency);
  double dataParallelSeconds = flops / peak / gridEfficiency;
  return streamKSeconds < dataParallelSeconds;
}

/// Query rows of a ping-pong workgroup: 8 waves of 32 queries, two a SIMD.
constexpr int64_t kPingPongQueryRows = 256;

/// The narrowest sliding window (a causal window with a left edge) the
/// ping-pong form takes: its loop over whole key blocks runs in phases,
/// the masked blocks of both edges around it do not. Measured at 8192
/// queries and keys, b1 x 16 heads, bf16 (model predictions; the one
/// workgroup a query block form against the chooser's default):
/// left 1024: gfx942 head dim 64 63.7 -> 67.9 us, gfx950 head dim 64 41.4
/// -> 44.2 us, head dim 128 63.7 -> 62.6 us; left 2048: 109.3 -> 108.1,
/// 72.0 -> 67.8, 112.0 -> 97.4 us; left 4096: 167.2 -> 149.0, 123.4 ->
/// 108.6, 193.9 -> 157.5 us. On gfx950 only: gfx942's head-dim-64 kernel
/// spilled 29 SGPRs at left 4096 (the masks of both edges' loops).
constexpr int64_t kPingPongMinWindow = 2048;

/// The share of `slots` busy until the last one finishes when causal query
/// blocks run longest first, one workgroup a slot: `copies` (heads x batch)
/// of each of `queryBlocks` blocks, block i holding i + 1 units of work,
/// each taken by the slot that frees first (the dispatcher's order, which
/// the kernel's longest-first block ids make the longest-processing-time
/// rule).
static double causalLongestFirstGridEfficiency(int64_t queryBlocks,
                                               int64_t copies, int64_t slots) {
  // Past a million blocks (thousands of rounds on any chip) the tail is a
  // negligible share of the time, and the simulation would cost the
  // compile seconds.
  constexpr int64_t kMaxSimulatedBlocks = int64_t(1) << 20;
  if (queryBlocks <= 0 || copies <= 0 || slots <= 0 ||
      queryBlocks > kMaxSimulatedBlocks / copies)
    return 1;
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>>
      loads;
  for (int64_t slot = 0; slot < slots; ++slot)
    loads.push(0);
  int64_t total = 0;
  for (int64_t work = queryBlocks; work >= 1; --work)
    for (int64_t copy = 0; copy < copies; ++copy) {
      int64_t least = loads.top();
      loads.pop();
      loads.push(least + work);
      total += work;
    }
  int64_t longest = 0;
  while (!loads.empty()) {
    longest = loads.top();
    loads.pop();
  }
  return double(total) / double(longest * slots);
}

/// The keys per block of the ping-pong form of a kernel with these facts
/// (0: the form does not pay), by the model's predictions (batch 2 x 16
/// heads x 4096, docs/performance.md, "Ping-pong attention"): head dim 128
/// on gfx942 and gfx950, without masks and causal, with 32-key blocks (64
/// would spill), and head dim 64 with 64-key blocks on gfx942 and gfx950.
/// Everywhere else the four-wave kernels predict as fast or faster.
/// (gfx942's head dim 128 took four waves while its ping-pong loop kept two
/// LDS slots: 63-66 % against 85-89 %; with three, docs/performance.md,
/// "Ping-pong stores between the products", 88-97 %.)
static int64_t getPingPongKeyBlock(const Chip &chip, const MmaInstr &instr,
                                   int64_t headDim) {
  if (!chip.isCDNA() || chip.isaVersion() < 9400 || instr.m != 32)
    return 0;
  if (headDim == 128)
    return 32;
  // (gfx942's f16 kernel at head dim 64 took four waves and the key loop
  // unrolled while the ping-pong loop's LDS stores sat at the end of its
  // matrix phase; with them between the products the ping-pong form
  // predicts 83.3 against 73.9 % without masks and 79.7 against 71.3 %
  // causal: docs/performance.md, "Ping-pong stores between the products,
  // two slots".)
  if (headDim == 64)
    return 64;
  return 0;
}

/// The pipeline depth of the ping-pong form: 4 (three LDS slots, each
/// block's K read in the softmax phase, the stores between the products)
/// where the matrix phase binds, at head dim 128 (docs/performance.md, "K
/// read in the softmax phase": gfx950 70.1 -> 75.7 % f16, causal 67.4 ->
/// 70.2 %); 3 at head dim 64, where the softmax phase binds and the reads
/// would lengthen it (gfx942: 75.3 -> 58.9 %).
static int64_t getPingPongStages(int64_t headDim) {
  return headDim == 128 ? 4 : 3;
}

ConfigAttr tessel::chooseAttentionPingPong(AttentionOp op, ConfigAttr config,
                                           const Chip &chip) {
  if (!config || config.getSplits() > 1 || config.getStreamK() > 0 ||
      config.getNumWaves() != 4 || !config.getInstr() || op.isVarlen() ||
      op.isPaged() || op.getSinks() || !op.getDescale().empty())
    return config;
  Type element = op.getQ().getType().getElementType();
  auto q = op.getQ().getType(), k = op.getK().getType();
  int64_t headDim = q.getDimSize(3);
  KeyWindow window = op.getKeyWindow();
  bool causal = !window.hasLeft() && window.right == 0;
  bool sliding = window.hasLeft() && window.right == 0 &&
                 window.left >= kPingPongMinWindow &&
                 chip.hasLdsTransposeReads();
  // Static sizes, whole 256-query blocks, the same head dim for V, no
  // window but the causal one and wide sliding ones; a query group packed
  // into one block (decode) takes other forms.
  int64_t seqQ = q.getDimSize(2), seqKV = k.getDimSize(2);
  if ((!element.isF16() && !element.isBF16()) || q.isDynamicDim(0) ||
      q.isDynamicDim(1) || ShapedType::isDynamic(seqQ) ||
      ShapedType::isDynamic(seqKV) || seqQ % kPingPongQueryRows != 0 ||
      op.getV().getType().getDimSize(3) != headDim ||
      (!window.isFull() && !causal && !sliding) ||
      ((causal || sliding) && seqQ != seqKV))
    return config;
  const MmaInstr *instr = lookupMma(config.getInstr().getValue(), chip);
  if (!instr)
    return config;
  // A head dim the kernel pads takes the form of its padded one on
  // gfx950's 16-deep instructions, where the kernel computes it whole
  // (no chunks): 128 (72 to 120), and 64 (40 to 56) with masks. Model
  // predictions (docs/performance.md, "Padded head dims pipelined"): f16
  // head dim 96 without masks 224.0 -> 115.4 us, 112 causal 110.5 -> 97.5
  // us, 48 causal 77.0 -> 69.6 us; chunked ones lose (96 causal 90.5 ->
  // 96.0 us), as do 48 without masks (116.2 -> 118.9 us) and the 8-deep
  // instructions (gfx942 f16 96: 230.4 -> 285.9 us).
  int64_t padded = getPaddedHeadDim(headDim);
  if (padded != headDim &&
      (instr->k < 16 ||
       getAttentionHeadDimChunk(*instr, padded, headDim,
                                /*masked=*/!window.isFull()) < padded ||
       !(padded == 128 || (padded == 64 && !window.isFull()))))
    return config;
  int64_t blockN = getPingPongKeyBlock(chip, *instr, padded);
  if (!blockN)
    return config;
  MLIRContext *context = op.getContext();
  auto form = [&](int64_t streamK) {
    return ConfigAttr::get(
        context, {kPingPongQueryRows, blockN}, {kPingPongQueryRows / 32, 1},
        getPingPongStages(padded), config.getInstr(), /*splits=*/1, streamK,
        /*scores_ahead=*/true, /*ping_pong=*/true);
  };
  // One workgroup a CU. A causal grid must give every CU one (its
  // workgroups run for different times, longest first). Where the last
  // round would leave more than a tenth of the slots idle, the workgroups
  // share the key blocks instead (stream-K, one per CU; gfx942 head dim
  // 64, 512 query blocks on 304 CUs: without masks 74.6 % bf16 and 75.3 %
  // f16 against 65.0 and 65.5 % with a workgroup per block, causal 70.7
  // and 71.8 % against 68.3 and 68.9 %). A causal grid's rounds are those
  // of its blocks taken longest first (gfx950's 512 blocks on 256 CUs pair
  // up into equal loads, and stream-K loses there: 67.7 against 69.0 %
  // at head dim 128, bf16).
  int64_t queryBlocks = seqQ / kPingPongQueryRows;
  int64_t workgroups = q.getDimSize(0) * q.getDimSize(1) * queryBlocks;
  int64_t cus = chip.numCUs;
  int64_t rounds = llvm::divideCeil(workgroups, cus);
  if (causal && workgroups < cus)
    return config;
  double gridEfficiency =
      causal ? causalLongestFirstGridEfficiency(
                   queryBlocks, q.getDimSize(0) * q.getDimSize(1), cus)
             : double(workgroups) / double(rounds * cus);
  // (Stream-K with a sliding window is not measured: one workgroup a
  // query block.)
  if (gridEfficiency >= kStreamKAttentionGridEfficiency || sliding)
    return form(0);
  FailureOr<AttentionStreamKWork> work = getAttentionStreamKWork(op, form(0));
  if (failed(work) || seqKV % blockN != 0 ||
      work->steps() < kMinStreamKAttentionSteps * cus)
    return causal ? form(0) : config;
  return form(cus);
}

ConfigAttr tessel::chooseAttentionStreamK(AttentionOp op, ConfigAttr config,
                                          const Chip &chip) {
  if (!config || config.getSplits() > 1 || config.getStreamK() > 0 ||
      !chip.isCDNA() || config.getNumWaves() != 4 || !config.getInstr())
    return config;
  int64_t realHeadDim = std::max(op.getQ().getType().getDimSize(3),
                                 op.getV().getType().getDimSize(3));
  int64_t headDim = getPaddedHeadDim(realHeadDim);
  bool paddedHeadDim = realHeadDim != headDim;
  // Past head dim 128 the registers are not known to fit. A causal kernel
  // holds its mask compares in SGPRs next to the stream-K loop's scalars:
  // up to head dim 64 (64-key blocks) it spills 14-17 SGPRs (gfx942 and
  // gfx950), and with 32-key blocks loses to one workgroup per query block;
  // at head dim 128 it fits (b2 x 16 heads x 4096, with the scores ahead:
  // gfx942 92 SGPRs and 248 VGPRs, gfx90a 89 and 254; measured,
  // docs/performance.md).
  bool masked = !op.getKeyWindow().isFull();
  if (headDim > 128 || (masked && headDim <= 64))
    return config;
  MLIRContext *context = op.getContext();
  int64_t blockM = config.getTile()[0];
  int64_t blockN = headDim <= 64 ? 64 : 32;
  // Keys that end in a partial block add the masked tail loop to every
  // stream-K tile, whose registers then spill (measured with 999 keys:
  // gfx942 f16 head dim 128, 40 bytes of scratch with the scores ahead;
  // gfx90a head dims 64 and 128, 28-44 bytes). Such a problem keeps one
  // workgroup per query block.
  int64_t seqKV = op.getK().getType().getDimSize(2);
  if (ShapedType::isDynamic(seqKV) || seqKV % blockN != 0)
    return config;
  // The key blocks prefetched at least into registers (stages 2), in LDS
  // too where that pays (stages 3); the next block's scores ahead where
  // they pay.
  Type element = op.getQ().getType().getElementType();
  const MmaInstr *instr = lookupMma(config.getInstr().getValue(), chip);
  bool scoresAhead =
      instr && getAttentionScoresAhead(chip, *instr, element, blockN, headDim,
                                       paddedHeadDim, op.getKeyWindow());
  ConfigAttr candidate = ConfigAttr::get(
      context, {blockM, blockN}, config.getWaves(),
      std::max<int64_t>(getAttentionStages(chip, element, blockN, headDim,
                                           masked, paddedHeadDim),
                        2),
      config.getInstr(), /*splits=*/1, /*streamK=*/0, scoresAhead);
  FailureOr<AttentionStreamKWork> work = getAttentionStreamKWork(op, candidate);
  if (failed(work))
    return config;
  // The data-parallel grid: one workgroup per query block, four per CU for
  // the 32-key kernels without masks up to head dim 64 (their registers
  // allow it), two otherwise.
  int64_t perCU = headDim <= 64 && config.getTile()[1] == 32 && !masked
                      ? 4
                      : kStreamKAttentionWorkgroupsPerCU;
  int64_t slots = int64_t(chip.numCUs) * perCU;
  int64_t queryBlocks = work->batch * work->heads * work->queryBlocks;
  int64_t rounds = llvm::divideCeil(queryBlocks, slots);
  double gridEfficiency = double(queryBlocks) / double(rounds * slots);
  if (gridEfficiency >= kStreamKAttentionGridEfficiency)
    return config;
  int64_t workgroups = int64_t(chip.numCUs) * kStreamKAttentionWorkgroupsPerCU;
  if (work->steps() < kMinStreamKAttentionSteps * workgroups ||
      !streamKPays(op, *work, candidate, workgroups, gridEfficiency, chip))
    return config;
  return ConfigAttr::get(context, candidate.getTile(), candidate.getWaves(),
                         candidate.getStages(), candidate.getInstr(),
                         /*splits=*/1, workgroups, candidate.getScoresAhead(),
                         candidate.getPingPong());
}

ConfigAttr tessel::chooseAttentionUnroll(AttentionOp op, ConfigAttr config,
                                         const Chip &chip) {
  if (!config || config.getStages() < 2 || config.getNumWaves() != 4 ||
      config.getPingPong() || config.getUnrolled() || config.getSplits() > 1 ||
      !config.getInstr() || op.isVarlen() || op.isPaged())
    return config;
  // Measured (b2 x 16 heads x 4096, model predictions, docs/performance.md,
  // "Four-wave key loops unrolled by two"): the next block's S^T, computed
  // ahead, is copied into the loop-carried registers every block unless
  // the loop is unrolled; that pays where the loop's VALU binds. On gfx942
  // (kernels with the scores ahead): head dim 64 (f16 73.7 -> 75.8 %,
  // causal 76.4 %) and bf16's rounding of P at head dim 128 (85.2 -> 86.8
  // %, causal 83.1 -> 84.6 %); not f16 at head dim 128 (89.1 -> 88.2 %)
  // nor 8-bit inputs (gfx942 48.1 -> 47.6 %, gfx950 58.7 -> 53.9 %). On
  // gfx90a, causal kernels at head dim 64, with the scores ahead (f16 83.7
  // -> 90.9 %, bf16 80.4 -> 89.9 %); not without masks (f16 88.8 -> 86.4
  // %). gfx950 takes the ping-pong form at both head dims.
  const MmaInstr *instr = lookupMma(config.getInstr().getValue(), chip);
  Type element = op.getQ().getType().getElementType();
  int64_t headDim = op.getQ().getType().getDimSize(3);
  KeyWindow window = op.getKeyWindow();
  bool causal = !window.isFull() && !window.hasLeft() && window.right == 0;
  bool sixteenBit = element.isF16() || element.isBF16();
  bool gfx942 = chip.isaVersion() >= 9400 && chip.isaVersion() < 9500;
  bool gfx90a = chip.isaVersion() < 9400;
  bool pays = false;
  if (gfx942)
    pays = config.getScoresAhead() && ((headDim == 64 && sixteenBit) ||
                                       (headDim == 128 && element.isBF16()));
  else if (gfx90a)
    pays = causal && headDim == 64 && sixteenBit && config.getTile()[1] == 64;
  if (!instr || !chip.isCDNA() || instr->m != 32 || !pays ||
      op.getV().getType().getDimSize(3) != headDim)
    return config;
  // The unrolled loop is the double-buffered one (stages = 3): at head dim
  // 64 the default prefetches into registers only, and two slots of K and
  // V^T (2 x 16 KiB with 64-key blocks) keep two workgroups a CU. (At head
  // dim 128 the default double-buffers where it can.)
  if ((config.getStages() < 3 && headDim != 64) ||
      !keySlotsFitTwoWorkgroups(chip, element, config.getTile()[1], headDim))
    return config;
  return ConfigAttr::get(op.getContext(), config.getTile(), config.getWaves(),
                         std::max<int64_t>(config.getStages(), 3),
                         config.getInstr(), config.getSplits(),
                         config.getStreamK(), /*scores_ahead=*/true,
                         /*ping_pong=*/false, /*unrolled=*/true);
}

int64_t tessel::getAttentionKeyCapacity(AttentionOp op) {
  if (op.isVarlen())
    return ShapedType::kDynamic;
  if (op.isPaged()) {
    int64_t pages =
        cast<MemRefType>(op.getBlockTable().getType()).getDimSize(1);
    return ShapedType::isDynamic(pages) ? ShapedType::kDynamic
                                        : pages * op.getPageSize();
  }
  return op.getK().getType().getDimSize(2);
}

AttentionMergeTile tessel::getAttentionMergeTile(int64_t blockM,
                                                 int64_t blockRows,
                                                 int64_t headDimV,
                                                 int64_t lanes) {
  constexpr int64_t kElementsPerLane = 16;
  AttentionMergeTile tile;
  tile.rows = blockM;
  if (!ShapedType::isDynamic(blockRows) && blockRows < blockM)
    tile.rows = int64_t(llvm::PowerOf2Ceil(std::max<int64_t>(1, blockRows)));
  tile.columns = std::clamp<int64_t>(
      int64_t(llvm::bit_floor(uint64_t(kElementsPerLane * lanes / tile.rows))),
      std::min<int64_t>(headDimV, 32), headDimV);
  return tile;
}

int64_t tessel::chooseAttentionSplits(AttentionOp op, ConfigAttr config,
                                      const Chip &chip) {
  MemRefType q = op.getQ().getType();
  DecodeShape shape;
  shape.seqKV = getAttentionKeyCapacity(op);
  shape.seqQ = q.getDimSize(2);
  shape.heads = q.getDimSize(1);
  if (ShapedType::isDynamic(shape.seqKV) || ShapedType::isDynamic(shape.seqQ) ||
      ShapedType::isDynamic(shape.heads) || !config.getInstr())
    return config.getSplits();
  // The keys the block's queries reach: from the first query's window
  // start (aligned down to a key block) through the last query's end.
  KeyWindow window = op.getKeyWindow();
  int64_t blockN = config.getTile()[1];
  int64_t firstKey = window.begin(0, shape.seqQ, shape.seqKV) / blockN * blockN;
  shape.seqKV = std::max<int64_t>(
      1, window.end(shape.seqQ - 1, shape.seqQ, shape.seqKV) - firstKey);
  // An unknown batch counts as 1, the case that needs the most splits.
  shape.batch = q.isDynamicDim(0) ? 1 : q.getDimSize(0);
  shape.headDim = getPaddedHeadDim(q.getDimSize(3));
  shape.headDimV = getPaddedHeadDim(op.getV().getType().getDimSize(3));
  shape.elementBytes =
      llvm::divideCeil(q.getElementType().getIntOrFloatBitWidth(), 8);
  shape.blockM = config.getTile()[0];
  shape.blockN = config.getTile()[1];
  shape.packedHeads = getPackedQueryHeads(op, config);
  shape.waves = config.getNumWaves();
  AttentionMergeTile merge =
      getAttentionMergeTile(shape.blockM, shape.seqQ * shape.packedHeads,
                            shape.headDimV, chip.defaultWaveSize * shape.waves);
  shape.mergeRows = merge.rows;
  shape.mergeColumns = merge.columns;
  shape.softwareBf16 = q.getElementType().isBF16() && !chip.convertsToBf16();
  shape.paged = op.isPaged();
  std::optional<MatrixType> type = getMatrixType(config.getInstr().getValue());
  if (type)
    shape.matrixOpsPerClockPerSimd =
        double(chip.matrixOpsPerClock(*type)) / chip.simdsPerCU;
  return chooseDecodeSplits(chip, shape);
}

/// Whether `memref` (rank 3 or 4: [batch, heads, seq, ...]) keeps each
/// head's rows right after the previous head's: static strides with the
/// head stride equal to seq x the row stride.
static bool headsFollowEachOther(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      type.isDynamicDim(2) || ShapedType::isDynamic(strides[1]) ||
      ShapedType::isDynamic(strides[2]))
    return false;
  return strides[1] == type.getDimSize(2) * strides[2];
}

int64_t tessel::getPackableQueryHeadGroup(AttentionOp op) {
  MemRefType q = op.getQ().getType(), k = op.getK().getType();
  int64_t heads = q.getDimSize(1), kvHeads = k.getDimSize(1),
          seqQ = q.getDimSize(2);
  if (ShapedType::isDynamic(heads) || ShapedType::isDynamic(kvHeads) ||
      ShapedType::isDynamic(seqQ) || kvHeads <= 0 || seqQ <= 0 || op.isVarlen())
    return 1;
  int64_t groups = heads / kvHeads;
  if (groups <= 1)
    return 1;
  if (!headsFollowEachOther(op.getQ()) || !headsFollowEachOther(op.getO()))
    return 1;
  if (op.getLse() && !headsFollowEachOther(op.getLse()))
    return 1;
  if (op.getSinks() && seqQ != 1)
    return 1;
  return groups;
}

int64_t tessel::getPackedQueryHeads(AttentionOp op, ConfigAttr config) {
  int64_t groups = getPackableQueryHeadGroup(op);
  if (groups <= 1 || !config ||
      groups * op.getQ().getType().getDimSize(2) > config.getTile()[0])
    return 1;
  return groups;
}

/// Fails unless `instr` takes at most kMaxAttentionOperandElements K values
/// per lane: P (and the backward's dS) reaches the next product from an
/// accumulator in runs of 4 `rows`.
static LogicalResult
checkAttentionOperandElements(const MmaInstr &instr, unsigned waveSize,
                              StringRef rows,
                              function_ref<InFlightDiagnostic()> emitError) {
  if (instr.getOperandElementsPerLane(waveSize) <= kMaxAttentionOperandElements)
    return success();
  return emitError() << "instruction " << instr.name << " takes "
                     << instr.getOperandElementsPerLane(waveSize)
                     << " K values per lane; attention kernels take at most "
                     << kMaxAttentionOperandElements
                     << " (P reaches the second product in runs of 4 " << rows
                     << ")";
}

LogicalResult
tessel::checkAttentionConfig(ConfigAttr config, const Chip &chip, Type element,
                             int64_t realHeadDim,
                             function_ref<InFlightDiagnostic()> emitError) {
  if (realHeadDim > 256)
    return emitError() << "head dim " << realHeadDim
                       << " is over the 256 attention kernels support";
  // The kernel computes with the head dim padded to a power of two.
  int64_t headDim = getPaddedHeadDim(realHeadDim);
  ArrayRef<int64_t> tile = config.getTile();
  std::string why = explainUnsupportedTypes(chip, element, element);
  if (!why.empty())
    return emitError() << why;
  if (!config.getInstr())
    return emitError() << "the config names no instruction";
  StringRef name = config.getInstr().getValue();
  std::optional<MmaElement> mmaElement = getMmaElement(element);
  const MmaInstr *instr = lookupMma(name, chip, mmaElement, mmaElement);
  if (!instr && lookupMma(name, chip))
    return emitError() << "instruction " << name << " does not multiply "
                       << element;
  if (!instr)
    return emitError() << "instruction " << name << " is not available on "
                       << chip.name;
  unsigned waveSize = chip.defaultWaveSize;
  if (!instr->isWmma() && failed(checkAttentionOperandElements(
                              *instr, waveSize, "keys", emitError)))
    return failure();
  ArrayRef<int64_t> waves = config.getWaves();
  if (waves[1] != 1)
    return emitError() << "attention splits query rows over waves: waves "
                          "must be [n, 1], got ["
                       << waves[0] << ", " << waves[1] << "]";
  // The kernel computes S^T = K Q^T and O^T = V^T P^T: keys and head dims
  // run along the instruction's M, queries along its N.
  if (tile[0] % (instr->n * waves[0]) || tile[1] % instr->m ||
      headDim % instr->m)
    return emitError() << "blocks " << tile[0] << "x" << tile[1]
                       << " and head dim " << headDim
                       << " must be multiples of the " << instr->m << "x"
                       << instr->n << " instruction tile";
  if (headDim % (2 * instr->k))
    return emitError() << "head dim " << headDim << " must be a multiple of "
                       << 2 * instr->k << " (two steps of " << name << ")";
  // A key block is two steps of a 32-row MFMA; one step of a 16-row MFMA
  // (a 16-key block: a paged cache's 16-key pages) and of a WMMA (16 keys,
  // where gfx11's replicated operands leave no registers for more).
  int64_t keyStep = instr->isWmma() || instr->m == 16 ? instr->k : 2 * instr->k;
  if (tile[1] % keyStep)
    return emitError() << "key block " << tile[1] << " must be a multiple of "
                       << keyStep << " (" << keyStep / instr->k
                       << " step(s) of " << name << ")";
  // The two halves of a ping-pong workgroup run a phase apart on shared
  // SIMDs: wave i and wave i + W/2 must land on one SIMD (waves go to the
  // SIMDs in turn), so each half covers the CU's SIMDs a whole number of
  // times.
  if (config.getPingPong() && !element.isF16() && !element.isBF16())
    return emitError() << "ping_pong takes f16 or bf16 inputs (its softmax "
                          "phase rescales lazily), got "
                       << element;
  if (config.getPingPong() &&
      (!chip.isCDNA() || (waves[0] / 2) % chip.simdsPerCU != 0))
    return emitError() << "ping_pong pairs wave i with wave i + "
                       << waves[0] / 2
                       << " on one SIMD: it takes a CDNA chip and a multiple "
                          "of "
                       << 2 * chip.simdsPerCU << " waves, got " << waves[0]
                       << " on " << chip.name;
  int64_t bytes = bytesOf(element), lanes = waveSize * waves[0];
  int64_t blockM = tile[0], blockN = tile[1];
  // K and V tiles go through LDS; Q is loaded once, straight into its
  // operand registers, or into LDS where it is read at each use.
  bool queriesInLds = readsAttentionQueriesFromLds(*instr, headDim);
  // Two slots of each with stages >= 3 (tessel-pipeline).
  int64_t slots = config.getStages() >= 3 ? 2 : 1;
  int64_t ldsBytes = slots * getKeyBlockBytes(element, blockN, headDim);
  if (queriesInLds)
    ldsBytes += blockM * headDim * bytes;
  if (ldsBytes > chip.maxLdsBytesPerWorkgroup)
    return emitError() << "the config needs " << ldsBytes
                       << " bytes of LDS, over the "
                       << chip.maxLdsBytesPerWorkgroup << " of " << chip.name;
  // S^T and P^T, O^T, and the operands: Q^T per wave (one head-dim chunk
  // where it is read from LDS at use), K and V a chunk at a time (the row
  // statistics are a few registers).
  int64_t chunk = getAttentionHeadDimChunk(*instr, headDim, realHeadDim);
  int64_t queryOperand = blockM / waves[0] * (queriesInLds ? chunk : headDim);
  int64_t vgprs = 2 * blockM * blockN / lanes + blockM * headDim / lanes +
                  llvm::divideCeil((queryOperand + 2 * blockN * chunk) * bytes,
                                   4 * waveSize);
  int64_t budget = chip.maxArchVgprs + chip.maxAccVgprs;
  if (vgprs > budget)
    return emitError() << "head dim " << headDim << " needs about " << vgprs
                       << " VGPRs per lane with " << blockM << "x" << blockN
                       << " blocks, over the " << budget << " of " << chip.name;
  return success();
}

ConfigAttr tessel::getDefaultAttentionGradConfig(MLIRContext *context,
                                                 const Chip &chip, Type element,
                                                 int64_t realHeadDim) {
  if (!chip.isCDNA())
    return {};
  const MmaInstr *instr =
      chooseMmaInstr(chip, element, element, 16,
                     /*xf32=*/false, kMaxAttentionOperandElements);
  if (!instr)
    return {};
  // Each wave owns 16 queries (dQ kernel) or keys (dK/dV kernel) and steps
  // over 32 rows of the other: a step's operands (K, V, K^T or Q, dO, their
  // transposes) are then a few registers each next to the accumulators of
  // two head dims, and the step's barriers are shared by 8 to 16 matrix
  // instructions per product. Past head dim 128 two waves of 16-row steps
  // keep the step's operands within LDS and the registers without spills.
  // (docs/performance.md has the model's predictions for these choices.)
  int64_t headDim = getPaddedHeadDim(realHeadDim);
  int64_t waves = headDim > 128 ? 2 : 4;
  int64_t step = std::max<int64_t>(headDim > 128 ? 16 : 32, instr->k);
  SmallVector<int64_t> tile = {16 * waves, step};
  return ConfigAttr::get(context, tile, {waves, 1}, /*stages=*/1,
                         StringAttr::get(context, instr->name), /*splits=*/1,
                         /*streamK=*/0);
}

LogicalResult tessel::checkAttentionGradConfig(
    ConfigAttr config, const Chip &chip, Type element, int64_t realHeadDim,
    int64_t realHeadDimV, function_ref<InFlightDiagnostic()> emitError) {
  if (!chip.isCDNA())
    return emitError() << "the attention backward runs on the CDNA chips "
                          "(gfx90a, gfx942, gfx950), not on "
                       << chip.name;
  int64_t largest = std::max(realHeadDim, realHeadDimV);
  if (largest > 256)
    return emitError() << "head dim " << largest
                       << " is over the 256 attention kernels support";
  std::string why = explainUnsupportedTypes(chip, element, element);
  if (!why.empty())
    return emitError() << why;
  if (!config.getInstr())
    return emitError() << "the config names no instruction";
  StringRef name = config.getInstr().getValue();
  std::optional<MmaElement> mmaElement = getMmaElement(element);
  const MmaInstr *instr = lookupMma(name, chip, mmaElement, mmaElement);
  if (!instr)
    return emitError() << "instruction " << name << " does not multiply "
                       << element << " on " << chip.name;
  unsigned waveSize = chip.defaultWaveSize;
  if (failed(
          checkAttentionOperandElements(*instr, waveSize, "rows", emitError)))
    return failure();
  ArrayRef<int64_t> waves = config.getWaves();
  if (waves[1] != 1)
    return emitError() << "the backward splits a workgroup's rows over "
                          "waves: waves must be [n, 1], got ["
                       << waves[0] << ", " << waves[1] << "]";
  // tile = [rows a workgroup owns, rows per step]: queries and keys in the
  // dQ kernel, keys and queries in the dK/dV kernel. The owned rows run
  // along the instruction's N (split over the waves), the stepped ones
  // along its M and, in the second product, its K.
  ArrayRef<int64_t> tile = config.getTile();
  int64_t headDim = getPaddedHeadDim(realHeadDim),
          headDimV = getPaddedHeadDim(realHeadDimV);
  int64_t own = tile[0], step = tile[1];
  if (own % (instr->n * waves[0]) || step % instr->m || step % instr->k ||
      std::min(headDim, headDimV) % instr->m)
    return emitError() << "tile " << own << "x" << step << " and head dims "
                       << headDim << "/" << headDimV
                       << " must be multiples of the " << instr->m << "x"
                       << instr->n << "x" << instr->k
                       << " instruction (the first over " << waves[0]
                       << " waves)";
  int64_t bytes = bytesOf(element);
  int64_t ownPerWave = own / waves[0];
  // Per lane: dK^T and dV^T (or dQ^T) in f32, the operands held across
  // the loop, a step's four operands and its score tiles.
  int64_t vgprs =
      (headDim + headDimV) * ownPerWave / waveSize +
      llvm::divideCeil((headDim + headDimV) * ownPerWave * bytes +
                           4 * step * std::max(headDim, headDimV) * bytes,
                       4 * waveSize) +
      4 * step * ownPerWave / waveSize;
  int64_t budget = chip.maxArchVgprs + chip.maxAccVgprs;
  if (vgprs > budget)
    return emitError() << "head dims " << headDim << "/" << headDimV
                       << " need about " << vgprs << " VGPRs per lane with a "
                       << own << "x" << step << " tile, over the " << budget
                       << " of " << chip.name;
  // LDS: the operands held across the loop pass through it once, before
  // it; a step's four operands then take their buffers over.
  int64_t ldsBytes = std::max((headDim + headDimV) * own,
                              4 * step * std::max(headDim, headDimV)) *
                     bytes;
  if (ldsBytes > chip.maxLdsBytesPerWorkgroup)
    return emitError() << "the config needs about " << ldsBytes
                       << " bytes of LDS, over the "
                       << chip.maxLdsBytesPerWorkgroup << " of " << chip.name;
  return success();
}

BlockedAttr
tessel::getCoalescedLayout(MLIRContext *context, ArrayRef<int64_t> shape,
                           int64_t contiguousDim, unsigned elementBytes,
                           unsigned numWaves, unsigned waveSize,
                           int64_t otherPerThread, unsigned vectorBytes) {
  int64_t other = 1 - contiguousDim;
  SmallVector<int64_t, 2> perThread(2, 1), threads(2, 1), waves(2, 1);
  perThread[contiguousDim] = std::min<int64_t>(
      std::max<unsigned>(vectorBytes / elementBytes, 1), shape[contiguousDim]);
  perThread[other] = std::min<int64_t>(otherPerThread, shape[other]);
  threads[contiguousDim] = std::min<int64_t>(
      waveSize, shape[contiguousDim] / perThread[contiguousDim]);
  threads[other] = waveSize / threads[contiguousDim];
  waves[other] = numWaves;
  SmallVector<int64_t, 2> order = {contiguousDim, other};
  return BlockedAttr::get(context, perThread, threads, waves, order);
}

BlockedAttr
tessel::getSpreadCoalescedLayout(MLIRContext *context, ArrayRef<int64_t> shape,
                                 int64_t contiguousDim, unsigned elementBytes,
                                 unsigned numWaves, unsigned waveSize,
                                 int64_t otherRun) {
  int64_t other = 1 - contiguousDim;
  int64_t lanes = int64_t(numWaves) * waveSize;
  int64_t perLane = std::max<int64_t>(1, shape[0] * shape[1] / lanes);
  SpreadRun spread =
      getSpreadRun(perLane,
                   std::min<int64_t>(std::max<unsigned>(16 / elementBytes, 1),
                                     shape[contiguousDim]),
                   shape[other], otherRun);
  int64_t vector = spread.vector, run = spread.run;
  SmallVector<int64_t, 2> perThread(2), threads(2), waves(2);
  perThread[contiguousDim] = vector;
  perThread[other] = run;
  threads[contiguousDim] =
      std::min<int64_t>(waveSize, shape[contiguousDim] / vector);
  threads[other] = waveSize / threads[contiguousDim];
  waves[other] =
      std::clamp<int64_t>(shape[other] / (run * threads[other]), 1, numWaves);
  waves[contiguousDim] = numWaves / waves[other];
  SmallVector<int64_t, 2> order = {contiguousDim, other};
  return BlockedAttr::get(context, perThread, threads, waves, order);
}

int64_t tessel::getContiguousTileDim(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return 1;
  int64_t rank = type.getRank();
  if (strides[rank - 2] == 1 && strides[rank - 1] != 1)
    return 0;
  return 1;
}
