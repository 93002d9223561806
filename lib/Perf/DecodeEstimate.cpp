//===- DecodeEstimate.cpp - Split-KV decode in closed form ----------------===//
//
// A decode reads every key and value once and does little arithmetic per
// byte: its time is the HBM floor unless too few waves are in flight to
// cover the memory latency. Each wave of the split kernel loads a key block,
// waits for it (the latency), and computes on it; a CU holding R resident
// workgroups overlaps R such chains, and no CU can take more than its share
// of the HBM bandwidth. Splitting the keys multiplies the workgroups (more
// chains in flight, shorter chains) at the price of the combine: the last
// split of each query block to arrive reads every split's partial rows.
//
//===----------------------------------------------------------------------===//

#include "tessel/Perf/DecodeEstimate.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>

using namespace tessel;

/// VALU instructions per score in the online softmax (scale, max, exponent
/// argument, sum, conversion) besides its exp (ModelParameters::
/// transcendentalPasses passes), and per output element for the rescale;
/// clocks per VALU pass of a wave64.
static constexpr double kValuPerScore = 6, kValuPerOutput = 0.5;
static constexpr double kClocksPerValu = 4;
/// VALU instructions per score to round P to bf16 where the chip has no
/// conversion instruction (before gfx950).
static constexpr double kValuPerSoftwareBf16 = 5;
/// Waves per SIMD a decode wave's registers allow (Q, O and one key block).
static constexpr unsigned kWavesPerSimd = 2;
/// 16-byte loads per lane the lowering keeps in flight before waiting,
/// and the fewest load latencies of a block: its V^T is permuted in
/// registers before its LDS writes, and the code generator interleaves the
/// first permutes with the block's last loads, which then wait for the
/// first (gfx942's 16-key paged blocks: two latencies for 8 loads a lane).
static constexpr double kLoadsInFlight = 8, kMinLatencies = 2;
/// The merge of the splits' partials: its loops over the splits run
/// unrolled (getMergeUnroll: one load latency per group of splits). Per
/// split, a lane spends about kMergeMaxValuPerRow VALU instructions per row
/// it holds on the rows' maximum, then per chunk kMergeValuPerRow per row
/// on the row's weight (its log2-sum-exp loaded, the exponent taken
/// against the maximum, the sum), kMergeValuPerElement per element on the
/// multiply-add (a v_pk_fma_f32 per pair), and kMergeValuPerSplit on
/// addresses in each loop; kMergeClocksPerValu clocks each (issue and the
/// dependences between them: fitted to the ISA-level model of gfx942's
/// one-wave decode merges, batch 1, 8 queries of 4 packed heads, 32
/// splits: 53.7k clocks against 55.7k here, when the multiply and the add
/// were separate instructions).
static constexpr double kMergeMaxValuPerRow = 2, kMergeValuPerRow = 8,
                        kMergeValuPerElement = 0.5, kMergeValuPerSplit = 6,
                        kMergeClocksPerValu = 5.5;

int64_t tessel::getMergeUnroll(int64_t splits, int64_t elementsPerLane) {
  constexpr int64_t kMaxUnroll = 8, kRegistersInFlight = 128;
  int64_t factor = kMaxUnroll;
  while (factor > 1 &&
         (factor * std::max<int64_t>(1, elementsPerLane) > kRegistersInFlight ||
          splits % factor))
    factor /= 2;
  return factor;
}

int64_t tessel::getMergeGroup(int64_t splits) {
  constexpr int64_t kOneLevelSplits = 8;
  if (splits <= kOneLevelSplits)
    return 1;
  int64_t group = int64_t(std::ceil(std::sqrt(double(splits))));
  for (; group <= splits / 2; ++group)
    if (splits % group == 0)
      return group;
  return 1;
}

DecodeEstimate tessel::estimateDecode(const Chip &chip,
                                      const DecodeShape &shape, int64_t splits,
                                      const ModelParameters &parameters) {
  DecodeEstimate estimate;
  if (shape.seqKV <= 0 || shape.blockM <= 0 || shape.blockN <= 0 ||
      splits <= 0 || shape.packedHeads <= 0)
    return estimate;
  double clock = (parameters.clockMHz > 0 ? parameters.clockMHz * 1e6
                                          : chip.clockGHz * 1e9);
  // The split kernel: each workgroup walks ceil(keys / splits) keys in
  // whole blocks.
  int64_t perSplit = llvm::divideCeil(shape.seqKV, splits);
  int64_t iterations = llvm::divideCeil(perSplit, shape.blockN);
  int64_t rows = shape.seqQ * shape.packedHeads;
  uint64_t workgroups =
      uint64_t(shape.batch) * uint64_t(shape.heads / shape.packedHeads) *
      uint64_t(llvm::divideCeil(rows, shape.blockM)) * uint64_t(splits);
  estimate.workgroups = workgroups;
  if (workgroups == 0)
    return estimate;
  // One wave's iteration: the key and value block's latency, then its two
  // products and softmax (the block's rows over its waves: 32 query
  // columns a wave, 16 in a 16-row block or in each of a 32-row block's
  // two waves).
  unsigned wavesPerWorkgroup = unsigned(std::max<int64_t>(1, shape.waves));
  double waveRows = double(shape.blockM) / wavesPerWorkgroup;
  double headDimV = double(shape.headDimV > 0 ? shape.headDimV : shape.headDim);
  double headDims = double(shape.headDim) + headDimV;
  double flops = 2.0 * double(shape.blockN) * waveRows * headDims;
  double matrixClocks = shape.matrixOpsPerClockPerSimd > 0
                            ? flops / shape.matrixOpsPerClockPerSimd
                            : 0;
  double scoresPerLane = double(shape.blockN) * waveRows / 64;
  double outputsPerLane = headDimV * waveRows / 64;
  double valuPerScore =
      kValuPerScore + (shape.softwareBf16 ? kValuPerSoftwareBf16 : 0);
  double valuClocks = scoresPerLane *
                          (valuPerScore + parameters.transcendentalPasses) *
                          kClocksPerValu +
                      outputsPerLane * kValuPerOutput * kClocksPerValu;
  // The block's loads are waited for in batches of at most
  // kLoadsInFlight 16-byte loads per lane, one latency each; the block
  // then goes through LDS (a write, a barrier and a read).
  double bytesPerIteration =
      double(shape.blockN) * headDims * shape.elementBytes;
  double loadsPerLane = bytesPerIteration / (64.0 * 16 * wavesPerWorkgroup);
  double latencies =
      std::max(kMinLatencies, std::ceil(loadsPerLane / kLoadsInFlight));
  // Waves that share the block meet at a second barrier (before the next
  // block overwrites it) and wait on each other's writes: one more LDS
  // round trip.
  double exchanges = wavesPerWorkgroup > 1 ? 2 : 1;
  // Workgroups resident per CU: the register and LDS limits (K and V^T
  // blocks), or fewer when the grid is small.
  unsigned byWaves = chip.simdsPerCU * kWavesPerSimd / wavesPerWorkgroup;
  unsigned byLds = unsigned(chip.ldsBytesPerCU / bytesPerIteration);
  unsigned maxResident = std::max(1u, std::min(byWaves, byLds));
  uint64_t perCU = llvm::divideCeil(workgroups, uint64_t(chip.numCUs));
  estimate.residentPerCU = unsigned(std::min<uint64_t>(maxResident, perCU));
  // A wave's share of the block crosses the CU's vector-memory path (the
  // L1's bytes a clock) shared by the busy SIMDs; a paged block's address
  // waits for its block-table entry first.
  double busySimds = std::min<double>(
      chip.simdsPerCU, double(estimate.residentPerCU) * wavesPerWorkgroup);
  double transferClocks = bytesPerIteration / wavesPerWorkgroup /
                          (parameters.l1BytesPerClock / busySimds);
  double iterationClocks =
      latencies * parameters.globalLoadLatency + transferClocks +
      (shape.paged ? parameters.scalarLoadLatency : 0) +
      exchanges * (2 * parameters.ldsLatency + parameters.barrierLatency) +
      matrixClocks + valuClocks;
  // The busiest CU runs perCU workgroups, R at a time; all of them
  // together move their bytes at no more than the HBM bandwidth.
  double cuIterations = double(perCU) * double(iterations);
  double latencyClocks =
      cuIterations * iterationClocks / double(estimate.residentPerCU);
  double bytesPerClock =
      chip.memoryBandwidthTBs * 1e12 * parameters.hbmEfficiency / clock;
  // The splits' partials (f32 O and log2-sum-exp rows) count once, as the
  // ISA-level model counts every array the kernel touches.
  double workspaceBytes =
      splits > 1
          ? double(shape.batch) * double(shape.heads / shape.packedHeads) *
                double(splits) * double(rows) * (headDimV + 1) * 4
          : 0;
  double bandwidthClocks =
      (double(workgroups) * double(iterations) * bytesPerIteration +
       workspaceBytes) /
      bytesPerClock;
  // The Q load and the final store of each round of workgroups.
  double rounds = std::ceil(double(perCU) / estimate.residentPerCU);
  double fixedClocks = rounds * 2 * parameters.globalLoadLatency;
  estimate.limit =
      latencyClocks > bandwidthClocks ? "memory latency" : "HBM bandwidth";
  // The larger of the two, as the ISA-level model takes the larger of its
  // floors. (A smooth maximum, 9 % above both where they are equal, made
  // the estimate prefer 64 splits where the ISA-level model, and this
  // maximum, find 32 faster: batch 1, 8 queries of 4 heads, 32768 keys.)
  double bound = std::max(latencyClocks, bandwidthClocks);
  estimate.splitSeconds = (bound + fixedClocks) / clock;
  if (splits > 1) {
    // The last split of each query block to arrive (in the same kernel)
    // merges every split's partials (f32 O and log2-sum-exp) and writes O:
    // a tail after the last key block, behind the partial's store and the
    // arrival's latency. A pass over the rows' statistics, then one over
    // the weighted partials per chunk of head-dim columns.
    double rows = double(shape.mergeRows > 0 ? shape.mergeRows : shape.blockM);
    double columns = double(shape.mergeColumns > 0 ? shape.mergeColumns
                                                   : std::min(headDimV, 32.0));
    double lanes = 64.0 * double(std::max<int64_t>(1, shape.waves));
    double elementsPerLane = std::max(1.0, rows * columns / lanes);
    // A lane holds one row where the lanes outnumber the rows
    // (the merge's layout puts the lanes along the rows first).
    double rowsPerLane = std::max(1.0, rows / lanes);
    double chunks = std::ceil(headDimV / columns);
    // One merge of `partials` partials: each unrolled group of them one
    // load latency per pass, and the VALU.
    auto mergeClocks = [&](int64_t partials) {
      double latencies =
          double(partials /
                 getMergeUnroll(partials, int64_t(std::ceil(elementsPerLane))));
      double valu = double(partials) *
                    (rowsPerLane * kMergeMaxValuPerRow + kMergeValuPerSplit +
                     chunks * (rowsPerLane * kMergeValuPerRow +
                               elementsPerLane * kMergeValuPerElement +
                               kMergeValuPerSplit));
      return latencies * (1 + chunks) * parameters.globalLoadLatency +
             valu * kMergeClocksPerValu;
    };
    // Two levels (getMergeGroup): the last group's merge, its partial's
    // store and arrival, then the groups'.
    int64_t group = getMergeGroup(splits);
    double merges = group > 1 ? mergeClocks(group) +
                                    2 * parameters.globalLoadLatency +
                                    mergeClocks(splits / group)
                              : mergeClocks(splits);
    double outputs = rows * headDimV * shape.elementBytes;
    estimate.combineSeconds = (merges + outputs / parameters.l1BytesPerClock +
                               2 * parameters.globalLoadLatency) /
                              clock;
  }
  estimate.seconds = estimate.splitSeconds + estimate.combineSeconds;
  return estimate;
}

int64_t tessel::chooseDecodeSplits(const Chip &chip, const DecodeShape &shape,
                                   const ModelParameters &parameters) {
  int64_t best = 1;
  double bestSeconds = estimateDecode(chip, shape, 1, parameters).seconds;
  for (int64_t splits = 2; splits <= 64; splits *= 2) {
    if (int64_t(llvm::divideCeil(shape.seqKV, splits)) < shape.blockN)
      break;
    double seconds = estimateDecode(chip, shape, splits, parameters).seconds;
    if (seconds < bestSeconds) {
      best = splits;
      bestSeconds = seconds;
    }
  }
  return best;
}
