//===- MatmulEstimate.h - The analytical form of the model ------*- C++ -*-===//
//
// Predicts the time of a matmul kernel from its config alone, before any
// code exists, so that tessel-select-config can rank hundreds of candidates
// in microseconds. It is the ISA-level model (Model.h) in closed form: the
// same chip facts, the same stated assumptions (Parameters.h), and the
// instruction counts of one K step as Tessel's matmul lowering emits them
// (docs/performance-model.md, "The analytical form"). tessel-tune checks its
// ranking against the ISA-level model on the compiled candidates.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PERF_MATMULESTIMATE_H
#define TESSEL_PERF_MATMULESTIMATE_H

#include "tessel/Perf/Parameters.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Mma.h"

#include <string>

namespace tessel {

/// A matmul problem as the config chooser sees it (static sizes).
struct MatmulShape {
  uint64_t m = 0, n = 0, k = 0, batch = 1;
  unsigned bytesA = 2, bytesB = 2, bytesC = 2; ///< bytes per element
  /// The operand's contiguous dimension is K. Otherwise each lane loads a
  /// run along K next to its vector along the contiguous dimension
  /// (getSpreadRun) and writes it to LDS with K contiguous: narrower global
  /// loads, more LDS writes and a register permute per 32 bits written, but
  /// the loop reads the operand in K runs as in the K-contiguous case.
  bool aKContiguous = true, bKContiguous = true;
};

/// How a lane's `perLane` elements of a tile are loaded when the lane also
/// wants a run along the non-contiguous dimension: `vector` elements along
/// the contiguous dimension (at most `maxVector`, one 16-byte access) times
/// `run` along the other (at most `maxRun`: the tile's extent there). The
/// run grows to `wantedRun` from the lane's spare elements, then by
/// narrowing the vector while the vector stays at least twice the run.
struct SpreadRun {
  int64_t vector = 1, run = 1;
};
SpreadRun getSpreadRun(int64_t perLane, int64_t maxVector, int64_t maxRun,
                       int64_t wantedRun);

/// Whether an operand stored with K not contiguous goes through LDS with K
/// contiguous (loaded with runs along K, read in K runs) rather than as
/// stored (read one element at a time): where `instr` takes more than one
/// K element per lane and an LDS row of the K tile spans at least 64
/// bytes. Narrower rows put the 16 lanes of a write phase, whose runs start
/// rows four or more apart, on at most four distinct 8-byte bank groups
/// (4-way conflicts at 32 bytes, measured 128 extra LDS cycles per step on
/// the gfx942 128x256x16 tile).
bool writesOperandInKRuns(const MmaInstr &instr, unsigned waveSize,
                          int64_t tileK, unsigned elementBytes);

/// Whether an operand of `elementBytes` stored with K not contiguous keeps
/// its stored layout in LDS and is read with transposing LDS reads
/// (ds_read_b64_tr_b16, four K elements per lane per read): on chips that
/// have them, for 16-bit elements and an MFMA taking a multiple of four K
/// elements per lane. It is then loaded and written to LDS in 16-byte
/// accesses like a K-contiguous operand, with no register permutes, and
/// read in 8-byte accesses.
bool readsOperandTransposed(const Chip &chip, const MmaInstr &instr,
                            unsigned elementBytes);

/// One candidate config and the resources it is estimated to need.
struct MatmulCandidate {
  unsigned tileM = 0, tileN = 0, tileK = 0;
  unsigned wavesM = 1, wavesN = 1, stages = 2;
  /// Split-K: workgroups sharing the K dimension of one C tile; > 1 adds the
  /// partials' traffic and the last split's summing.
  unsigned splits = 1;
  /// Stream-K: one workgroup per resident slot of the chip, sharing all
  /// tiles' K steps evenly; adds the cut tiles' partials and their sums.
  /// The estimate's `workgroups` is then the config's stream_k count.
  bool streamK = false;
  /// The K loop is unrolled by two (no register copies between steps).
  bool unrolled = false;
  /// Nothing but the K loop's registers is live across it (static sizes, no
  /// tile-sized epilogue operand): the backend can fit a K loop estimated
  /// near the register limit (see estimateMatmul).
  bool leanEpilogue = false;
  unsigned epilogueVectors = 0; ///< its operands (scales, a bias)
  const MmaInstr *instr = nullptr;
  unsigned vgprs = 0;    ///< per lane, all of them (accumulators in VGPRs)
  unsigned ldsBytes = 0; ///< per workgroup
};

/// One K step of one wave, as the lowering emits it.
struct MatmulStepCounts {
  unsigned matrix = 0, valu = 0, ldsReads = 0, ldsWrites = 0, globalLoads = 0,
           scalar = 0;
  double matrixCycles = 0; ///< matrix-pipe busy clocks
  unsigned issued() const {
    return matrix + valu + ldsReads + ldsWrites + globalLoads + scalar;
  }
};

struct MatmulEstimate {
  double seconds = 0; ///< predicted time
  double tflops = 0, percentOfPeak = 0;
  /// Matrix pipes busy over the kernel (clock-free): useful matrix work over
  /// what the chip could do in the predicted clocks.
  double structuralEfficiency = 0;
  /// Matrix pipe busy in the K loop with the waves that share a SIMD.
  double loopEfficiency = 0;
  double stepCycles = 0; ///< one K step on a fully occupied CU
  MatmulStepCounts step;
  unsigned wavesPerSimd = 0, workgroupsPerCU = 0, simdsBusy = 0;
  uint64_t workgroups = 0, rounds = 0;
  double gridEfficiency = 0; ///< workgroups / (rounds * resident slots)
  /// What binds the K step ("matrix pipe", "issue", "latency", "LDS
  /// bandwidth", "L1/L2 bandwidth") or the kernel ("HBM bandwidth").
  std::string limit;
  std::string explanation; ///< one sentence: why this time
};

/// The instruction counts of one K step of one wave for `candidate`.
MatmulStepCounts countMatmulStep(const Chip &chip,
                                 const MatmulCandidate &candidate,
                                 const MatmulShape &shape);

/// Predicts `candidate` for `shape` on `chip`. A candidate that cannot be
/// placed (no workgroup fits a CU) gets an infinite time.
MatmulEstimate estimateMatmul(const Chip &chip, const MatmulShape &shape,
                              const MatmulCandidate &candidate,
                              const ModelParameters &parameters = {});

} // namespace tessel

#endif // TESSEL_PERF_MATMULESTIMATE_H
