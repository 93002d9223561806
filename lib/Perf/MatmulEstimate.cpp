//===- MatmulEstimate.cpp - The analytical form of the model --------------===//
//
// One K step of the matmul kernel in closed form (docs/performance-model.md,
// "The analytical form"): the waves that share a SIMD share its matrix pipe
// and its VALU/matrix issue port; the waves of one workgroup meet at the
// step's barrier, so only waves of other workgroups cover their memory
// latency; the CU's LDS and vector-memory bandwidth bound the step from
// below. Workgroups run in rounds over the CUs, the last one partly full.
//
//===----------------------------------------------------------------------===//

#include "tessel/Perf/MatmulEstimate.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace tessel;

/// Bytes a lane moves with one global load, LDS write or LDS read in the
/// matmul lowering (dwordx4 / b128).
static constexpr unsigned kBytesPerAccess = 16;
/// Bytes a lane receives from one transposing LDS read (ds_read_b64_tr_b16).
static constexpr unsigned kBytesPerTransposedRead = 8;
/// Scalar and control instructions of a K step: the loop counter, compare
/// and branch, two s_waitcnt and the barrier.
static constexpr unsigned kScalarPerStep = 6;
/// VALU instructions per memory instruction for addresses and bounds masks,
/// and per 16-byte LDS read for rotating the operand registers between
/// register stages when the K loop is not unrolled: how the lowering emits
/// a K step today (each 16-byte read fills four registers that are copied
/// once per step).
static constexpr unsigned kValuPerMemoryAccess = 3;
static constexpr unsigned kRotationValuPerLdsRead = 4;
/// Registers beyond accumulators and operands (addresses, loop state, masks)
/// that every kernel holds, for occupancy.
static constexpr unsigned kBookkeepingVgprs = 32;
/// An 8-wave workgroup on a CDNA CU launches only at two waves per SIMD, so
/// the backend fits its registers into 256 whatever the bookkeeping.
/// Measured on the gfx942 and gfx950 bf16 4096^3 GEMMs with 8-wave 128x256,
/// 256x128 and 256x256 tiles: every config whose accumulators and operands
/// are estimated at up to 248 VGPRs compiled to at most 256 without
/// spilling (estimates of 208-248 gave 196-256). Only for kernels whose
/// epilogue keeps little else live (MatmulCandidate::leanEpilogue: a
/// residual tile, an activation's math or dynamic sizes' bounds made the
/// same tiles spill), counting 4 registers per epilogue operand and 8 for
/// an operand stored with K not contiguous (the NN 256x256x32 kernel took
/// 256 registers where NT took 252; with a bias column it spilled 3).
static constexpr unsigned kForcedTwoWavesMaxVgprs = 248;
static constexpr unsigned kVgprsPerEpilogueVector = 4;
static constexpr unsigned kNotKContiguousVgprs = 8;
static constexpr unsigned kTwoWavesVgprs = 256;
static constexpr unsigned kEstimatedSgprs = 80;
/// Stream-K's loop over tiles keeps its pieces' bounds, the K loop's
/// dynamic limits and the workspace addresses live across the K loop: the
/// gfx942 bf16 kernels with 32 and 64 accumulators per lane measured 0 to
/// 20 VGPRs above the same tiles without it. (Configs with more
/// accumulators are not offered stream-K: their sum of the pieces holds
/// two tiles of them.)
static constexpr unsigned kStreamKVgprs = 16;
/// How far the analytical register count may be off (it missed by up to
/// 30 VGPRs on the gfx942 bf16 GEMMs) before a stream-K config's
/// workgroups per CU, and so its workgroup count, would be wrong.
static constexpr unsigned kStreamKVgprMargin = 32;

SpreadRun tessel::getSpreadRun(int64_t perLane, int64_t maxVector,
                               int64_t maxRun, int64_t wantedRun) {
  SpreadRun spread;
  spread.vector = std::max<int64_t>(1, std::min(maxVector, perLane));
  // A run along the other dimension from the lane's spare elements, then
  // traded for vector width while the vector stays at least twice the run.
  while (spread.run < wantedRun && 2 * spread.run <= maxRun &&
         spread.vector * spread.run < perLane)
    spread.run *= 2;
  while (spread.run < wantedRun && 2 * spread.run <= maxRun &&
         spread.vector / 2 >= 2 * spread.run) {
    spread.vector /= 2;
    spread.run *= 2;
  }
  return spread;
}

bool tessel::writesOperandInKRuns(const MmaInstr &instr, unsigned waveSize,
                                  int64_t tileK, unsigned elementBytes) {
  return instr.getOperandElementsPerLane(waveSize) > 1 &&
         tileK * elementBytes >= 64;
}

bool tessel::readsOperandTransposed(const Chip &chip, const MmaInstr &instr,
                                    unsigned elementBytes) {
  unsigned waveSize = chip.defaultWaveSize;
  unsigned perLane = instr.getOperandElementsPerLane(waveSize);
  return chip.hasLdsTransposeReads() && !instr.isWmma() && waveSize == 64 &&
         elementBytes == 2 && perLane >= 4 && perLane % 4 == 0;
}

MatmulStepCounts tessel::countMatmulStep(const Chip &chip,
                                         const MatmulCandidate &candidate,
                                         const MatmulShape &shape) {
  const MmaInstr &instr = *candidate.instr;
  unsigned waveSize = chip.defaultWaveSize;
  unsigned lanes = waveSize * candidate.wavesM * candidate.wavesN;
  uint64_t waveM = candidate.tileM / candidate.wavesM;
  uint64_t waveN = candidate.tileN / candidate.wavesN;
  MatmulStepCounts step;
  step.matrix =
      (waveM / instr.m) * (waveN / instr.n) * (candidate.tileK / instr.k);
  step.matrixCycles = double(step.matrix) * instr.getCycles(chip);
  // Operands stored with K contiguous are loaded and written to LDS in
  // 16-byte accesses. One stored the other way is loaded as vectors along
  // its contiguous dimension times a run along K (getSpreadRun, as the
  // tiling lays it out) and written to LDS in K runs, each 32 bits of them
  // assembled by a register permute.
  uint64_t contiguousBytes = 0;
  unsigned perRegisterValu = 0;
  // Adds one operand of `rows` x tileK; returns its run along K in LDS (1
  // where it keeps its stored layout or K is contiguous).
  auto addOperandWrites = [&](uint64_t rows, unsigned bytes,
                              bool kContiguous) -> int64_t {
    if (kContiguous || readsOperandTransposed(chip, instr, bytes) ||
        !writesOperandInKRuns(instr, waveSize, candidate.tileK, bytes)) {
      contiguousBytes += uint64_t(candidate.tileK) * rows * bytes;
      return 1;
    }
    int64_t perLane = int64_t(
        llvm::divideCeil(uint64_t(candidate.tileK) * rows, uint64_t(lanes)));
    SpreadRun spread = getSpreadRun(
        perLane, std::min<int64_t>(kBytesPerAccess / bytes, rows),
        candidate.tileK, instr.getOperandElementsPerLane(waveSize));
    step.globalLoads += unsigned(llvm::divideCeil(perLane, spread.vector));
    step.ldsWrites += unsigned(llvm::divideCeil(perLane, spread.run));
    if (spread.run > 1)
      perRegisterValu += unsigned(llvm::divideCeil(perLane * bytes, 4));
    return spread.run;
  };
  int64_t runA =
      addOperandWrites(candidate.tileM, shape.bytesA, shape.aKContiguous);
  int64_t runB =
      addOperandWrites(candidate.tileN, shape.bytesB, shape.bKContiguous);
  unsigned contiguousLoads =
      unsigned(llvm::divideCeil(contiguousBytes, lanes * kBytesPerAccess));
  step.globalLoads += contiguousLoads;
  step.ldsWrites += contiguousLoads;
  // The loop reads an operand in K runs: 16 bytes where K is contiguous in
  // memory, 8 through a transposing read, the run it was written in
  // otherwise (one element: a 16-bit pair packed per VALU instruction).
  // Each read's registers rotate once per step unless the loop is unrolled
  // (four per 16-byte read).
  unsigned rotation = candidate.unrolled ? 0 : kRotationValuPerLdsRead;
  // Address arithmetic of the reads: per read, except that transposing
  // reads share their addresses two by two (the lowering gives them one
  // address register and constant offsets): 8-byte transposing reads then
  // cost what the 16-byte reads of a K-contiguous operand do.
  unsigned addressedReads = 0;
  auto operandReads = [&](uint64_t rows, unsigned bytes, bool kContiguous,
                          int64_t run) {
    uint64_t elements = uint64_t(candidate.tileK) * rows;
    bool transposed =
        !kContiguous && readsOperandTransposed(chip, instr, bytes);
    uint64_t readBytes = kContiguous ? kBytesPerAccess
                         : transposed
                             ? kBytesPerTransposedRead
                             : std::min<uint64_t>(run * bytes, kBytesPerAccess);
    unsigned reads = unsigned(
        llvm::divideCeil(elements * bytes, uint64_t(waveSize) * readBytes));
    perRegisterValu += rotation * reads * readBytes / kBytesPerAccess;
    addressedReads += transposed ? llvm::divideCeil(reads, 2) : reads;
    if (!kContiguous && !transposed && run == 1 && bytes < 4)
      perRegisterValu += reads / 2;
    return reads;
  };
  step.ldsReads = operandReads(waveM, shape.bytesA, shape.aKContiguous, runA) +
                  operandReads(waveN, shape.bytesB, shape.bKContiguous, runB);
  step.valu = perRegisterValu +
              kValuPerMemoryAccess *
                  (step.globalLoads + step.ldsWrites + addressedReads);
  step.scalar = kScalarPerStep;
  return step;
}

namespace {
/// What one K step costs on a CU that holds `workgroups` workgroups.
struct StepTime {
  double cycles = 0;
  double matrixBusy = 0; ///< matrix-pipe clocks per SIMD
  unsigned wavesPerSimd = 0, simdsBusy = 0;
  const char *limit = "";
};

/// The facts of one candidate that every CU load shares.
struct StepModel {
  const Chip &chip;
  const ModelParameters &parameters;
  MatmulStepCounts step;
  unsigned wavesPerWorkgroup;
  double stageBytes, waveReadBytes;
  unsigned stages;

  StepTime time(unsigned workgroups) const {
    StepTime result;
    unsigned waves = workgroups * wavesPerWorkgroup;
    result.simdsBusy = std::min(chip.simdsPerCU, waves);
    result.wavesPerSimd = llvm::divideCeil(waves, result.simdsBusy);
    // Waves of one workgroup on the same SIMD.
    unsigned sameGroup = llvm::divideCeil(wavesPerWorkgroup, chip.simdsPerCU);
    unsigned w = result.wavesPerSimd;
    // CDNA considers a wave every 4 clocks; a VALU pass of a wave64 on a
    // 16-lane SIMD takes 4 clocks.
    double interval = chip.isCDNA() ? 4 : 1;
    double valuPass = double(chip.defaultWaveSize) / 16;
    double issueOne = interval * step.issued();
    double port = valuPass * (step.matrix + step.valu);
    // Every wave's own work on the shared pipes.
    double matrix = w * step.matrixCycles, issue = w * port;
    // One workgroup's waves on the SIMD, alone: their work, then what they
    // wait for. A wave's MFMAs wait for its LDS reads and its next stage's
    // loads and LDS writes wait for the barrier, so its own issue and its
    // matrix work follow each other rather than overlap. A pipelined step
    // issues the next tile's loads early and waits for them before the LDS
    // write at the end of the step.
    // Where the workgroup puts several waves on a SIMD, the others' matrix
    // work hides part of each wave's issue: up to all but its share of it,
    // at most as long as their matrix work lasts (checked against the
    // ISA-level model on CDNA only; elsewhere nothing is hidden).
    double hidden = chip.isCDNA()
                        ? std::min((sameGroup - 1) * step.matrixCycles,
                                   issueOne * (sameGroup - 1) / sameGroup)
                        : 0.0;
    double own = sameGroup * step.matrixCycles + issueOne - hidden;
    double global = parameters.globalLoadLatency;
    if (stages > 1)
      global = std::max(0.0, global - own / 2);
    double chain =
        own + parameters.ldsLatency + global + parameters.barrierLatency;
    double lds = workgroups * (stageBytes + wavesPerWorkgroup * waveReadBytes) /
                 (chip.ldsBanks * chip.ldsBankBytes);
    double memory =
        workgroups * stageBytes /
        std::min(parameters.l1BytesPerClock, parameters.l2BytesPerClockPerCU);
    result.cycles = std::max({matrix, issue, chain, lds, memory});
    result.matrixBusy = matrix;
    if (result.cycles == matrix)
      result.limit = "matrix pipe";
    else if (result.cycles == issue)
      result.limit = "issue";
    else if (result.cycles == chain)
      result.limit = "latency";
    else if (result.cycles == lds)
      result.limit = "LDS bandwidth";
    else
      result.limit = "L1/L2 bandwidth";
    return result;
  }
};
} // namespace

MatmulEstimate tessel::estimateMatmul(const Chip &chip,
                                      const MatmulShape &shape,
                                      const MatmulCandidate &candidate,
                                      const ModelParameters &parameters) {
  MatmulEstimate estimate;
  estimate.seconds = std::numeric_limits<double>::infinity();
  estimate.step = countMatmulStep(chip, candidate, shape);
  unsigned waveSize = chip.defaultWaveSize;
  unsigned wavesPerWorkgroup = candidate.wavesM * candidate.wavesN;

  KernelResourceUsage usage;
  usage.archVgprs = candidate.vgprs + kBookkeepingVgprs +
                    (candidate.streamK ? kStreamKVgprs : 0);
  unsigned epilogueVgprs =
      kVgprsPerEpilogueVector * candidate.epilogueVectors +
      (shape.aKContiguous && shape.bKContiguous ? 0 : kNotKContiguousVgprs);
  if (chip.isCDNA() && wavesPerWorkgroup == 2 * chip.simdsPerCU &&
      candidate.leanEpilogue && !candidate.streamK &&
      candidate.vgprs + epilogueVgprs <= kForcedTwoWavesMaxVgprs)
    usage.archVgprs = std::min(usage.archVgprs, kTwoWavesVgprs);
  usage.sgprs = kEstimatedSgprs;
  usage.ldsBytes = candidate.ldsBytes;
  usage.workgroupSize = wavesPerWorkgroup * waveSize;
  usage.waveSize = waveSize;
  Occupancy occupancy = computeOccupancy(chip, usage);
  WorkgroupPlacement placement = placeWorkgroups(chip, usage, occupancy);
  estimate.workgroupsPerCU = placement.workgroupsPerCU;
  if (!placement.workgroupsPerCU) {
    estimate.limit = "placement";
    estimate.explanation = "no workgroup fits a CU";
    return estimate;
  }

  uint64_t waveM = candidate.tileM / candidate.wavesM;
  uint64_t waveN = candidate.tileN / candidate.wavesN;
  StepModel model{
      chip,
      parameters,
      estimate.step,
      wavesPerWorkgroup,
      double(candidate.tileK) *
          (candidate.tileM * shape.bytesA + candidate.tileN * shape.bytesB),
      double(candidate.tileK) * (waveM * shape.bytesA + waveN * shape.bytesB),
      candidate.stages};
  // Split-K: each split runs a whole number of K steps (the last may run
  // fewer; the busiest split sets the time).
  unsigned splits = std::max(1u, candidate.splits);
  uint64_t steps =
      llvm::divideCeil(llvm::divideCeil(shape.k, splits), candidate.tileK);
  // Before the first step: the first tile's loads and LDS round trip; after
  // the last: one store per run of accumulator elements of each lane. An
  // MFMA accumulator is laid out so that a lane holds runs of 4 along C's
  // contiguous dimension (transposed for a row-major C), stored as vectors
  // where that dimension (N: the estimate takes C row-major) is a multiple
  // of 4; WMMA ones are stored element by element.
  double accumulatorsPerLane = double(waveM * waveN) / waveSize;
  bool runsOfFour =
      candidate.instr && !candidate.instr->isWmma() && shape.n % 4 == 0;
  double storesPerLane = accumulatorsPerLane / (runsOfFour ? 4 : 1);
  double interval = chip.isCDNA() ? 4 : 1;
  double overhead = parameters.globalLoadLatency + parameters.ldsLatency +
                    interval * storesPerLane;
  // Split-K: every split stores its partial and counts its arrival (a
  // device-scope atomic after the stores); the last one loads all partials
  // before the epilogue.
  if (splits > 1)
    overhead += 2 * parameters.globalLoadLatency +
                interval * storesPerLane * (1 + splits);
  // Stream-K launches one workgroup per slot, a count fixed at compile
  // time: if the kernel held fewer workgroups per CU than estimated, a
  // second round would run. The estimate must hold with kStreamKVgprMargin
  // registers more than predicted.
  if (candidate.streamK) {
    KernelResourceUsage heavier = usage;
    heavier.archVgprs += kStreamKVgprMargin;
    WorkgroupPlacement fewer =
        placeWorkgroups(chip, heavier, computeOccupancy(chip, heavier));
    if (fewer.workgroupsPerCU != placement.workgroupsPerCU) {
      estimate.limit = "placement";
      estimate.explanation = "stream-K's workgroups per CU depend on the "
                             "register estimate";
      return estimate;
    }
  }
  uint64_t tiles = llvm::divideCeil(shape.m, candidate.tileM) *
                   llvm::divideCeil(shape.n, candidate.tileN) * shape.batch;
  uint64_t slots = uint64_t(chip.numCUs) * placement.workgroupsPerCU;
  // Stream-K: one workgroup per slot, each with an even share of all
  // steps; it runs up to tiles / workgroups + 1 pieces of tiles (each with
  // its own prologue and epilogue), stores the partials of its first and
  // last piece, and the last to arrive at a cut tile loads the pieces.
  uint64_t streamKSteps = tiles * steps;
  uint64_t streamKWorkgroups = std::min(slots, streamKSteps);
  double cutTiles = 0;
  if (candidate.streamK && streamKWorkgroups > tiles) {
    // More workgroups than tiles would cut every tile into pieces: its
    // partials' traffic and restarts cost more than the last round saves.
    estimate.limit = "placement";
    estimate.explanation = "stream-K needs at least one tile per workgroup";
    return estimate;
  }
  if (candidate.streamK) {
    uint64_t pieces = llvm::divideCeil(tiles, streamKWorkgroups) + 1;
    steps = llvm::divideCeil(streamKSteps, streamKWorkgroups);
    overhead = pieces * overhead + 2 * parameters.globalLoadLatency +
               interval * accumulatorsPerLane * 4;
    // Tiles cut by a workgroup boundary (at most one boundary each per
    // workgroup).
    cutTiles = double(std::min<uint64_t>(tiles, streamKWorkgroups));
  }
  auto tileCycles = [&](unsigned workgroupsOnCU) {
    return steps * model.time(workgroupsOnCU).cycles + overhead;
  };

  estimate.workgroups = candidate.streamK ? streamKWorkgroups : tiles * splits;
  uint64_t fullRounds = estimate.workgroups / slots;
  uint64_t rest = estimate.workgroups % slots;
  estimate.rounds = fullRounds + (rest ? 1 : 0);
  estimate.gridEfficiency =
      double(estimate.workgroups) / double(estimate.rounds * slots);
  double cycles = fullRounds * tileCycles(placement.workgroupsPerCU);
  if (rest)
    cycles += tileCycles(llvm::divideCeil(rest, chip.numCUs));

  // The loop as it runs in the busiest round.
  unsigned busiest = fullRounds ? placement.workgroupsPerCU
                                : llvm::divideCeil(rest, chip.numCUs);
  StepTime loop = model.time(busiest);
  estimate.stepCycles = loop.cycles;
  estimate.wavesPerSimd = loop.wavesPerSimd;
  estimate.simdsBusy = loop.simdsBusy;
  estimate.loopEfficiency = loop.matrixBusy / loop.cycles;
  estimate.limit = loop.limit;

  double clockMHz =
      parameters.clockMHz > 0 ? parameters.clockMHz : chip.clockGHz * 1000;
  double clockHz = clockMHz * 1e6;
  double uniqueBytes =
      double(shape.batch) * (double(shape.m) * shape.k * shape.bytesA +
                             double(shape.k) * shape.n * shape.bytesB +
                             double(shape.m) * shape.n * shape.bytesC);
  double hbmBytesPerSecond =
      chip.memoryBandwidthTBs * 1e12 * parameters.hbmEfficiency;
  double hbmSeconds = uniqueBytes / hbmBytesPerSecond;
  double computeSeconds = cycles / clockHz;
  // Split-K: the 32-bit partials are written and read back once (an upper
  // bound: they may not leave the L2).
  if (splits > 1)
    hbmSeconds += 2 * double(splits) * shape.batch * shape.m * shape.n * 4 /
                  hbmBytesPerSecond;
  // Stream-K: the pieces of cut tiles (about one per workgroup boundary
  // and one more per cut tile) written and read back once. A workspace that
  // fits the last-level cache is read back from it shortly after it was
  // written (a floor of its own); a larger one goes through HBM.
  double llcSeconds = 0;
  if (candidate.streamK) {
    double tileBytes = double(candidate.tileM) * candidate.tileN * 4;
    double pieceBytes = 2 * (cutTiles + double(streamKWorkgroups)) * tileBytes;
    double workspaceBytes = 2 * double(streamKWorkgroups) * tileBytes;
    if (chip.lastLevelCacheBandwidthTBs > 0 &&
        workspaceBytes <= double(chip.lastLevelCacheBytes))
      llcSeconds = pieceBytes / (chip.lastLevelCacheBandwidthTBs * 1e12);
    else
      hbmSeconds += pieceBytes / hbmBytesPerSecond;
  }
  estimate.seconds = std::max({computeSeconds, hbmSeconds, llcSeconds});
  if (hbmSeconds > computeSeconds && hbmSeconds >= llcSeconds)
    estimate.limit = "HBM bandwidth";
  else if (llcSeconds > computeSeconds)
    estimate.limit = "last-level cache bandwidth";

  double flops = 2.0 * shape.m * shape.n * shape.k * shape.batch;
  MatrixType type =
      getMatrixType(candidate.instr->name).value_or(MatrixType::F32);
  double opsPerClock = double(chip.numCUs) * chip.matrixOpsPerClock(type);
  estimate.tflops = flops / estimate.seconds / 1e12;
  double peak = chip.peakMatrixTeraOps(type);
  estimate.percentOfPeak = peak > 0 ? 100 * estimate.tflops / peak : 0;
  estimate.structuralEfficiency =
      opsPerClock > 0 ? flops / (estimate.seconds * clockHz * opsPerClock) : 0;
  estimate.explanation =
      llvm::formatv("K step of {0:F0} clocks bound by {1} ({2} wave(s) per "
                    "SIMD on {3} of {4} SIMDs, matrix pipe busy {5:F0}%); {6} "
                    "workgroup(s) in {7} round(s) of {8} ({9:F0}% full)",
                    loop.cycles, loop.limit, loop.wavesPerSimd, loop.simdsBusy,
                    chip.simdsPerCU, 100 * estimate.loopEfficiency,
                    estimate.workgroups, estimate.rounds, slots,
                    100 * estimate.gridEfficiency)
          .str();
  if (hbmSeconds > computeSeconds)
    estimate.explanation +=
        llvm::formatv("; HBM floor {0:F1} us over compute {1:F1} us",
                      hbmSeconds * 1e6, computeSeconds * 1e6);
  if (splits > 1)
    estimate.explanation += llvm::formatv(
        "; split-K over {0} workgroups per tile, the last one sums", splits);
  if (candidate.streamK)
    estimate.explanation += llvm::formatv(
        "; stream-K: {0} K steps of {1} tiles over {2} workgroups",
        streamKSteps, tiles, streamKWorkgroups);
  return estimate;
}
