//===- CacheTraffic.h - What the XCDs' L2 caches fetch ----------*- C++ -*-===//
//
// For kernels whose access pattern is known (Tessel's GEMMs and attention
// kernels), what each XCD's L2 fetches from the last-level cache or HBM,
// given how the grid's workgroups are spread over the XCDs (workgroup i on
// XCD i mod numXCDs) and how many run at a time. The ISA-level model turns
// the bytes into a floor on the kernel's time (docs/performance-model.md,
// "L2 fill over the XCDs"). Predictions, not cache simulations: they count
// reuse among the workgroups an XCD runs at the same time and none across
// rounds or XCDs.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PERF_CACHETRAFFIC_H
#define TESSEL_PERF_CACHETRAFFIC_H

#include "tessel/Support/KeyWindow.h"
#include "tessel/Target/Chip.h"

#include <cstdint>

namespace tessel {

/// What the L2 caches fetch of a kernel's inputs.
struct CacheTraffic {
  double l2FillBytes = 0;  ///< all XCDs together
  double operandBytes = 0; ///< the inputs once each
  unsigned xcds = 1;
  uint64_t residentPerXcd = 0; ///< workgroups an XCD runs at a time
};

/// A GEMM whose workgroups are laid out as Tessel's matmul kernels do (x: N
/// tiles, y: M tiles, z: batch; each batch's ids renumbered by
/// getMatmulTilePosition), `workgroupsPerCU` at a time on each CU. Each
/// XCD's L2 fetches once per round of its resident workgroups every A row
/// panel (tileM x K) and B column panel (K x tileN) they read: the
/// workgroups of a round walk K together, while one round's panels are gone
/// from the L2 before the next round starts (a panel is K elements long).
CacheTraffic estimateGemmL2Fill(const Chip &chip, int64_t m, int64_t n,
                                int64_t k, int64_t batch, int64_t tileM,
                                int64_t tileN, unsigned aBytes, unsigned bBytes,
                                unsigned workgroupsPerCU);

/// An attention forward (or the first stage of a split-KV plan) as Tessel's
/// kernels lay it out: workgroup (x, y, z) = (query block of `tileM` rows,
/// query head, batch x splits + split); query head h reads key/value head
/// h / (heads / kvHeads); split s reads its whole number of key blocks;
/// a key window (causal, local) limits a query block to the keys its
/// queries see (bottom-right aligned).
struct AttentionTrafficShape {
  int64_t batch = 1, heads = 1, kvHeads = 1, seqQ = 0, seqKV = 0;
  int64_t headDim = 0, headDimV = 0;
  unsigned elementBytes = 2;
  int64_t tileM = 0, blockN = 0, splits = 1;
  KeyWindow window;
  /// The workgroups run the query blocks longest first (GridRule): flat id
  /// i is query block X - 1 - i / (heads x batch), head and batch
  /// i mod (heads x batch).
  bool longestFirst = false;
};

/// Each XCD's L2 fetches, once per round, the keys and values every head
/// its resident workgroups read (the workgroups of one head walk the keys
/// together, so they share one fetch) and every query block they read.
CacheTraffic estimateAttentionL2Fill(const Chip &chip,
                                     const AttentionTrafficShape &shape,
                                     unsigned workgroupsPerCU);

} // namespace tessel

#endif // TESSEL_PERF_CACHETRAFFIC_H
