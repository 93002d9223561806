//===- CacheTrafficTest.cpp - What the XCDs' L2 caches fetch --------------===//

#include "tessel/Perf/CacheTraffic.h"

#include "gtest/gtest.h"

using namespace tessel;

namespace {

const Chip &gfx942() { return *lookupChip("gfx942"); }
const Chip &gfx90a() { return *lookupChip("gfx90a"); }

// The XCDs' L2 fill of a GEMM. gfx942 bf16 4096^3 on 128x256 tiles, two
// workgroups per CU: 512 workgroups (16 along N, 32 along M), one round of
// 64 per XCD. Workgroup i runs on XCD i mod 8, and the kernel renumbers
// them (getMatmulTilePosition): XCD x gets positions 64x .. 64x + 63, half
// a group of 8 tile rows, 8 rows by 8 columns: 8 A panels (128 x 4096 bf16,
// 1 MiB each) and 8 B panels (2 MiB each), 24 MiB per XCD. In plain
// dispatch order an XCD would hold columns c and c + 8 of every row: 32 A
// panels and 2 B panels, 36 MiB.
TEST(CacheTraffic, RoundRobinOverXcds) {
  CacheTraffic traffic = estimateGemmL2Fill(gfx942(), 4096, 4096, 4096,
                                            /*batch=*/0, 128, 256, 2, 2, 2);
  EXPECT_EQ(traffic.xcds, 8u);
  EXPECT_EQ(traffic.residentPerXcd, 76u); // 38 CUs x 2
  EXPECT_DOUBLE_EQ(traffic.operandBytes, 64.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(traffic.l2FillBytes, 8 * 24.0 * (1 << 20));
}

// One XCD and one round: every panel is fetched once. With one workgroup
// per CU on a one-XCD chip of 110 CUs, 256 workgroups (16 x 16) take three
// rounds, and panels shared by two rounds are fetched twice.
TEST(CacheTraffic, RoundsOnOneXcd) {
  CacheTraffic once =
      estimateGemmL2Fill(gfx90a(), 1024, 1024, 1024, 0, 128, 128, 2, 2, 2);
  EXPECT_EQ(once.xcds, 1u);
  EXPECT_DOUBLE_EQ(once.l2FillBytes, once.operandBytes);
  CacheTraffic rounds =
      estimateGemmL2Fill(gfx90a(), 2048, 2048, 1024, 0, 128, 128, 2, 2, 1);
  EXPECT_EQ(rounds.residentPerXcd, 110u);
  // Rounds of ids [0, 110), [110, 220), [220, 256) over rows of 16: rows
  // 0-6 (7 A panels, 16 B), rows 6-13 (8, 16), rows 13-15 (3, 16).
  double panel = 128.0 * 1024 * 2;
  EXPECT_DOUBLE_EQ(rounds.l2FillBytes, (7 + 8 + 3 + 3 * 16) * panel);
  EXPECT_DOUBLE_EQ(rounds.operandBytes, 32 * panel);
}

AttentionTrafficShape attention(int64_t heads, int64_t kvHeads, int64_t seqQ,
                                int64_t seqKV) {
  AttentionTrafficShape shape;
  shape.heads = heads;
  shape.kvHeads = kvHeads;
  shape.seqQ = seqQ;
  shape.seqKV = seqKV;
  shape.headDim = shape.headDimV = 128;
  shape.elementBytes = 2;
  shape.tileM = 128;
  shape.blockN = 64;
  return shape;
}

constexpr double kBytesPerKey = 2 * 128 * 2; // K and V rows, bf16

// gfx942, 16 heads of 4096 queries and keys, 128-row query blocks, one
// workgroup per CU: 512 workgroups, 64 per XCD in rounds of 38 and 26.
// Workgroup i (query block i mod 32 of head i / 32) runs on XCD i mod 8, so
// every XCD holds four query blocks of every head: its first round reads
// heads 0-9, its second heads 9-15, and each XCD fetches 17 heads' keys
// and values where the inputs hold 16 for the whole chip.
TEST(CacheTraffic, AttentionHeadsSpreadOverXcds) {
  CacheTraffic traffic =
      estimateAttentionL2Fill(gfx942(), attention(16, 16, 4096, 4096), 1);
  EXPECT_EQ(traffic.residentPerXcd, 38u);
  double queries = 16.0 * 4096 * 128 * 2;
  double keysPerHead = 4096 * kBytesPerKey;
  EXPECT_DOUBLE_EQ(traffic.operandBytes, queries + 16 * keysPerHead);
  EXPECT_DOUBLE_EQ(traffic.l2FillBytes, queries + 8 * 17 * keysPerHead);
}

// Grouped queries: the four query heads of a key/value head share its
// fetch in a round.
TEST(CacheTraffic, AttentionGroupedQueriesShareKeys) {
  CacheTraffic traffic =
      estimateAttentionL2Fill(gfx90a(), attention(8, 2, 128, 1024), 1);
  EXPECT_EQ(traffic.xcds, 1u);
  EXPECT_DOUBLE_EQ(traffic.l2FillBytes, traffic.operandBytes);
  EXPECT_DOUBLE_EQ(traffic.operandBytes,
                   8.0 * 128 * 128 * 2 + 2 * 1024 * kBytesPerKey);
}

// Causal: a round reads keys up to its last query block's diagonal. 220
// query blocks on gfx90a's 110 CUs run in two rounds; the first reads the
// first 110 x 128 keys, the second all of them.
TEST(CacheTraffic, AttentionCausalRounds) {
  AttentionTrafficShape shape = attention(1, 1, 220 * 128, 220 * 128);
  shape.window.right = 0; // causal
  CacheTraffic traffic = estimateAttentionL2Fill(gfx90a(), shape, 1);
  double queries = 220.0 * 128 * 128 * 2;
  EXPECT_DOUBLE_EQ(traffic.l2FillBytes,
                   queries + (110 + 220) * 128 * kBytesPerKey);
}

// Causal, longest first (GridRule::longestFirst): id i runs query block
// 31 - i / 16 of head i mod 16, so XCD x (ids x, x + 8, ...) holds heads x
// and x + 8 only. gfx942, 16 heads of 4096, one workgroup per CU: its 64
// ids run in rounds of 38 (query blocks 31 down to 13: every key) and 26
// (blocks 12 down to 0: the first 13 x 128 keys), each for its two heads.
TEST(CacheTraffic, AttentionLongestFirstKeepsHeadsOnXcds) {
  AttentionTrafficShape shape = attention(16, 16, 4096, 4096);
  shape.window.right = 0;
  shape.longestFirst = true;
  CacheTraffic traffic = estimateAttentionL2Fill(gfx942(), shape, 1);
  double queries = 16.0 * 4096 * 128 * 2;
  EXPECT_DOUBLE_EQ(traffic.l2FillBytes,
                   queries + 8 * 2 * (4096 + 13 * 128) * kBytesPerKey);
}

// Split-KV decode: each split reads its own whole key blocks (4 splits of
// 1000 keys: 256, 256, 256 and 232), together every key once.
TEST(CacheTraffic, AttentionSplitsPartitionTheKeys) {
  AttentionTrafficShape shape = attention(4, 4, 1, 1000);
  shape.splits = 4;
  CacheTraffic traffic = estimateAttentionL2Fill(gfx90a(), shape, 1);
  EXPECT_DOUBLE_EQ(traffic.l2FillBytes, traffic.operandBytes);
  EXPECT_DOUBLE_EQ(traffic.operandBytes,
                   4.0 * 128 * 2 + 4 * 1000 * kBytesPerKey);
}

// Shapes the kernels reject give no traffic rather than a division by zero.
TEST(CacheTraffic, AttentionInvalidShape) {
  EXPECT_EQ(estimateAttentionL2Fill(gfx942(), attention(6, 4, 128, 128), 1)
                .l2FillBytes,
            0.0);
  EXPECT_EQ(estimateAttentionL2Fill(gfx942(), attention(4, 0, 128, 128), 1)
                .l2FillBytes,
            0.0);
}

} // namespace
