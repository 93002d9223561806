//===- DecodeEstimate.h - Split-KV decode in closed form --------*- C++ -*-===//
//
// The analytical model of Tessel's split-KV attention decode, for choosing
// its split count before code exists (docs/performance-model.md, "Decode").
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PERF_DECODEESTIMATE_H
#define TESSEL_PERF_DECODEESTIMATE_H

#include "tessel/Perf/Parameters.h"
#include "tessel/Target/Chip.h"

#include <cstdint>
#include <string>

namespace tessel {

/// An attention decode as the kernels lay it out: workgroups of `blockM`
/// query rows (a group of `packedHeads` query heads stacked, or one head's
/// queries) on blockM / 32 waves, walking their share of the keys in
/// blocks of `blockN`.
struct DecodeShape {
  int64_t batch = 1, heads = 1, seqQ = 1, seqKV = 0;
  /// Of Q and K, and of V and O (0: headDim); padded to the instruction
  /// tile.
  int64_t headDim = 128, headDimV = 0;
  unsigned elementBytes = 2;
  int64_t blockM = 32, blockN = 64, packedHeads = 1;
  /// Matrix operations per clock of one SIMD for the input type.
  double matrixOpsPerClockPerSimd = 0;
  /// P is rounded to bf16 in software (bf16 before gfx950).
  bool softwareBf16 = false;
  /// Each key block's address comes from a paged cache's block table (a
  /// scalar load before the block's loads).
  bool paged = false;
  /// Waves per workgroup, and the tile the last split merges the partials
  /// on (getAttentionMergeTile; 0: blockM rows, 32 columns).
  int64_t waves = 1, mergeRows = 0, mergeColumns = 0;
};

struct DecodeEstimate {
  double seconds = 0; ///< the kernel, the last splits' combine included
  double splitSeconds = 0, combineSeconds = 0;
  uint64_t workgroups = 0;
  unsigned residentPerCU = 0; ///< split workgroups resident per CU
  std::string limit;          ///< "HBM bandwidth" or "memory latency"
};

/// The factor a split-KV kernel's merge unrolls its loops over `splits`
/// splits by, each iteration loading `elementsPerLane` f32 values a lane:
/// the largest power of two up to 8 that divides the count and keeps at
/// most 128 registers a lane of loads in flight (1: rolled).
int64_t getMergeUnroll(int64_t splits, int64_t elementsPerLane);

/// The splits a split-KV kernel merges in a first level (1: one level).
/// With more than 8 splits, the last of each group of that many splits to
/// arrive merges its group into the group's first partial, and the last
/// group to arrive merges the groups: the merge after the last key block
/// walks a group and the groups instead of every split. The smallest
/// divisor of `splits` from its square root up (1 where none leaves two
/// groups or more).
int64_t getMergeGroup(int64_t splits);

/// The time of the decode with `splits` splits (1: one kernel).
DecodeEstimate estimateDecode(const Chip &chip, const DecodeShape &shape,
                              int64_t splits,
                              const ModelParameters &parameters = {});

/// The split count among 1, 2, 4, ..., 64 (at least one key block each)
/// with the lowest estimate.
int64_t chooseDecodeSplits(const Chip &chip, const DecodeShape &shape,
                           const ModelParameters &parameters = {});

} // namespace tessel

#endif // TESSEL_PERF_DECODEESTIMATE_H
