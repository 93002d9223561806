//===- DecodeEstimateTest.cpp - Split-KV decode in closed form ------------===//

#include "tessel/Perf/DecodeEstimate.h"

#include "gtest/gtest.h"

using namespace tessel;

namespace {

const Chip &gfx942() { return *lookupChip("gfx942"); }

/// A bf16 grouped-query decode on gfx942: 32 query heads on 8 key/value
/// heads, the group of four stacked in one 32-row, one-wave block, whose
/// merge works on the 4 rows its queries fill, 128 columns at a time
/// (getAttentionMergeTile).
DecodeShape decode(int64_t batch, int64_t seqKV) {
  DecodeShape shape;
  shape.batch = batch;
  shape.heads = 32;
  shape.seqQ = 1;
  shape.seqKV = seqKV;
  shape.headDim = 128;
  shape.blockM = 16; // one query of 4 packed heads: a 16-row block
  shape.blockN = 32;
  shape.packedHeads = 4;
  shape.matrixOpsPerClockPerSimd = 512;
  shape.softwareBf16 = true;
  shape.mergeRows = 4;
  shape.mergeColumns = 128;
  return shape;
}

// Eight workgroups (one per key/value head) cannot cover the memory
// latency of 32k keys: the model splits, and the split kernel is then
// bound by HBM bandwidth, with the last splits' merge as a tail.
TEST(DecodeEstimate, FewWorkgroupsSplit) {
  DecodeShape shape = decode(1, 32768);
  DecodeEstimate whole = estimateDecode(gfx942(), shape, 1);
  EXPECT_EQ(whole.workgroups, 8u);
  EXPECT_EQ(whole.limit, "memory latency");
  EXPECT_DOUBLE_EQ(whole.combineSeconds, 0);
  int64_t splits = chooseDecodeSplits(gfx942(), shape);
  EXPECT_GT(splits, 8);
  DecodeEstimate split = estimateDecode(gfx942(), shape, splits);
  EXPECT_EQ(split.limit, "HBM bandwidth");
  EXPECT_GT(split.combineSeconds, 0);
  EXPECT_LT(split.combineSeconds, split.splitSeconds);
  EXPECT_LT(split.seconds, whole.seconds / 10);
}

// The merge's tail grows with the splits and with the rows merged: all 32
// rows of the block (8 queries of each packed head) in 4 chunks cost more
// than 4 rows in one; two waves merging the 32 rows cost less than one.
TEST(DecodeEstimate, MergeCostLimitsSplits) {
  DecodeShape few = decode(1, 4096);
  DecodeShape many = few;
  many.seqQ = 8;
  many.blockM = 32;
  many.mergeRows = 32;
  many.mergeColumns = 32;
  int64_t fewSplits = chooseDecodeSplits(gfx942(), few);
  EXPECT_GT(estimateDecode(gfx942(), many, fewSplits).combineSeconds,
            2 * estimateDecode(gfx942(), few, fewSplits).combineSeconds);
  // Two waves share the merge's rows.
  DecodeShape twoWaves = many;
  twoWaves.waves = 2;
  EXPECT_LT(estimateDecode(gfx942(), twoWaves, 64).combineSeconds,
            estimateDecode(gfx942(), many, 64).combineSeconds);
}

// More than 8 splits merge in groups: the smallest divisor from the split
// count's square root up that leaves two groups or more.
TEST(DecodeEstimate, MergeGroup) {
  EXPECT_EQ(getMergeGroup(8), 1);
  EXPECT_EQ(getMergeGroup(16), 4);
  EXPECT_EQ(getMergeGroup(32), 8);
  EXPECT_EQ(getMergeGroup(64), 8);
  EXPECT_EQ(getMergeGroup(12), 4);
  EXPECT_EQ(getMergeGroup(9), 3);
  EXPECT_EQ(getMergeGroup(13), 1);
}

// The merge's loops over the splits unroll by the largest power of two up
// to 8 that divides the split count and keeps 128 registers a lane of
// partials in flight.
TEST(DecodeEstimate, MergeUnroll) {
  EXPECT_EQ(getMergeUnroll(32, 8), 8);
  EXPECT_EQ(getMergeUnroll(32, 16), 8);
  EXPECT_EQ(getMergeUnroll(32, 32), 4);
  EXPECT_EQ(getMergeUnroll(12, 4), 4);
  EXPECT_EQ(getMergeUnroll(6, 4), 2);
  EXPECT_EQ(getMergeUnroll(5, 1), 1);
  EXPECT_EQ(getMergeUnroll(64, 128), 1);
}

// 64 x 8 workgroups already keep enough loads in flight to reach the HBM
// floor: splitting gains nothing worth counting (at most 2 splits, within
// 1 % of one kernel; the ISA-level model: 230.4 us whole, 230.9 us in 2).
TEST(DecodeEstimate, LargeBatchKeepsOneKernel) {
  DecodeShape shape = decode(64, 4096);
  EXPECT_EQ(estimateDecode(gfx942(), shape, 1).limit, "HBM bandwidth");
  int64_t splits = chooseDecodeSplits(gfx942(), shape);
  EXPECT_LE(splits, 2);
  EXPECT_LT(estimateDecode(gfx942(), shape, 1).seconds,
            1.01 * estimateDecode(gfx942(), shape, splits).seconds);
}

// Where the split kernel is bound by HBM bandwidth, more splits only add
// partials to move: batch 1, 8 queries of 4 packed heads (a 32-row block
// on two waves of 16, merged 64 columns at a time), 32768 keys in 64-key
// blocks. 32 splits have latency chains about equal to the bandwidth
// time and 64 more partials; the estimate takes 32, as the ISA-level
// model's best (76.9 % of HBM bandwidth against 73.6 % at 64, 2026-12-07).
TEST(DecodeEstimate, PartialsCountInBandwidth) {
  DecodeShape shape = decode(1, 32768);
  shape.seqQ = 8;
  shape.blockM = 32;
  shape.blockN = 64;
  shape.waves = 2;
  shape.mergeRows = 32;
  shape.mergeColumns = 64;
  DecodeEstimate at32 = estimateDecode(gfx942(), shape, 32);
  DecodeEstimate at64 = estimateDecode(gfx942(), shape, 64);
  EXPECT_EQ(at64.limit, "HBM bandwidth");
  EXPECT_GT(at64.splitSeconds, at32.splitSeconds - 1e-9);
  EXPECT_EQ(chooseDecodeSplits(gfx942(), shape), 32);
}

// A paged cache of 16-key pages: a block is one page, whose loads (8 a
// lane) still take two latencies, behind its block-table lookup. Batch 8,
// 8192 keys: 16 splits reach the HBM floor (87.3 % of the bandwidth by the
// ISA-level model, 2026-12-07) where 8 leave the chains longer (65.6 %).
TEST(DecodeEstimate, PagedSixteenKeyBlocks) {
  DecodeShape shape = decode(8, 8192);
  shape.softwareBf16 = false;
  shape.blockN = 16;
  shape.paged = true;
  EXPECT_EQ(estimateDecode(gfx942(), shape, 8).limit, "memory latency");
  EXPECT_EQ(chooseDecodeSplits(gfx942(), shape), 16);
}

// Splits never go below one key block each; degenerate shapes estimate 0.
TEST(DecodeEstimate, Bounds) {
  DecodeShape shape = decode(1, 100);
  EXPECT_LE(chooseDecodeSplits(gfx942(), shape), 2);
  shape.seqKV = 0;
  EXPECT_DOUBLE_EQ(estimateDecode(gfx942(), shape, 4).seconds, 0);
}

} // namespace
