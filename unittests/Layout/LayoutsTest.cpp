//===- LayoutsTest.cpp - Blocked, swizzled and chosen layouts ---*- C++ -*-===//

#include "tessel/Layout/Layouts.h"

#include "gtest/gtest.h"

#include <tuple>

using namespace tessel;
using llvm::SmallVector;

namespace {

template <typename T> T expectOk(llvm::Expected<T> value) {
  if (!value) {
    ADD_FAILURE() << llvm::toString(value.takeError());
    return T();
  }
  return std::move(*value);
}

template <typename T> std::string expectError(llvm::Expected<T> value) {
  if (value) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(value.takeError());
}

using Coords = SmallVector<int32_t, 4>;

TEST(BlockedLayoutTest, LanesThenWavesThenRepeats) {
  // 8 f16 per lane along dim1, 8x8 lanes, 4 waves down dim0.
  LinearLayout layout =
      expectOk(blockedLayout({64, 64}, {1, 8}, {8, 8}, {4, 1}, {1, 0}));
  EXPECT_EQ(layout.getInDimSize("register"), 16); // 8 per pass, 2 passes
  EXPECT_EQ(layout.apply({3, 9, 0}), (Coords{1, 11}));
  EXPECT_EQ(layout.apply({0, 0, 1}), (Coords{8, 0}));
  // Register 8 is the second pass, 32 rows further.
  EXPECT_EQ(layout.apply({8, 0, 0}), (Coords{32, 0}));
  EXPECT_TRUE(layout.isInjective());
  EXPECT_TRUE(layout.isSurjective());
}

TEST(BlockedLayoutTest, SmallTilesAreReplicated) {
  LinearLayout layout =
      expectOk(blockedLayout({4, 64}, {1, 8}, {8, 8}, {1, 1}, {1, 0}));
  EXPECT_EQ(layout.apply({0, 32, 0}), layout.apply({0, 0, 0}));
  EXPECT_EQ(layout.getReplication(), 2);
}

TEST(BlockedLayoutTest, RejectsBadParameters) {
  EXPECT_NE(expectError(blockedLayout({64, 64}, {1, 8}, {8, 8}, {4, 1}, {1, 1}))
                .find("permutation"),
            std::string::npos);
  EXPECT_NE(expectError(blockedLayout({64, 64}, {1, 6}, {8, 8}, {4, 1}, {1, 0}))
                .find("powers of two"),
            std::string::npos);
  EXPECT_NE(expectError(blockedLayout({64}, {1, 8}, {8, 8}, {4, 1}, {1, 0}))
                .find("one entry per tile dimension"),
            std::string::npos);
}

TEST(SwizzleTest, XorsColumnGroupsByRow) {
  LinearLayout memory = expectOk(swizzledLdsLayout({64, 64}, 8, 1, 8, {1, 0}));
  LinearLayout toOffset = expectOk(memory.invert());
  // (r, c) -> r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8
  for (int32_t r : {0, 3, 9, 63})
    for (int32_t c : {0, 5, 17, 63})
      EXPECT_EQ(toOffset.apply({r, c})[0],
                r * 64 + (((c / 8) ^ (r % 8)) * 8) + c % 8)
          << r << "," << c;
  // perPhase 2: rows 2 and 3 share a phase.
  LinearLayout slow = expectOk(swizzledLdsLayout({64, 64}, 8, 2, 4, {1, 0}));
  LinearLayout slowOffset = expectOk(slow.invert());
  EXPECT_EQ(slowOffset.apply({3, 0})[0], 3 * 64 + 8);
  // Column-major: dim0 contiguous.
  LinearLayout colMajor =
      expectOk(swizzledLdsLayout({32, 16}, 4, 1, 4, {0, 1}));
  EXPECT_EQ(expectOk(colMajor.invert()).apply({0, 1})[0], 32 + 4);
  EXPECT_NE(expectError(swizzledLdsLayout({64, 64}, 16, 1, 8, {1, 0}))
                .find("vec * maxPhase"),
            std::string::npos);
}

TEST(SwizzleTest, FoldXorsEveryPieceOfTheRow) {
  LinearLayout folded =
      expectOk(swizzledLdsLayout({128, 64}, 4, 1, 16, {1, 0}, /*fold=*/true));
  LinearLayout toOffset = expectOk(folded.invert());
  // (r, c) -> r * 64 + ((c / 4) ^ (r % 16) ^ (r / 16)) * 4 + c % 4
  for (int32_t r : {0, 5, 16, 24, 77, 127})
    for (int32_t c : {0, 3, 22, 63})
      EXPECT_EQ(toOffset.apply({r, c})[0],
                r * 64 + (((c / 4) ^ (r % 16) ^ (r / 16)) * 4) + c % 4)
          << r << "," << c;
  // No row past perPhase * maxPhase: the plain phase.
  EXPECT_EQ(expectOk(swizzledLdsLayout({16, 64}, 8, 2, 8, {1, 0}, true)),
            expectOk(swizzledLdsLayout({16, 64}, 8, 2, 8, {1, 0})));
  EXPECT_NE(expectOk(swizzledLdsLayout({128, 64}, 8, 1, 8, {1, 0}, true)),
            expectOk(swizzledLdsLayout({128, 64}, 8, 1, 8, {1, 0})));
}

/// The read layout of the A operand of `instr`-like MFMA: 64 lanes, lane l
/// holds `kWidth` consecutive k of row l % m starting at kWidth * (l / m),
/// repeated over a [rows, cols] tile.
LinearLayout mfmaOperandA(int32_t m, int32_t kWidth, int32_t rows,
                          int32_t cols) {
  SmallVector<SmallVector<int32_t, 4>> regs, lanes;
  for (int32_t v = 1; v < kWidth; v *= 2)
    regs.push_back({0, v});
  for (int32_t v = 1; v < m; v *= 2)
    lanes.push_back({v, 0});
  for (int32_t v = kWidth; v < kWidth * 64 / m; v *= 2)
    lanes.push_back({0, v});
  for (int32_t v = kWidth * 64 / m; v < cols; v *= 2)
    regs.push_back({0, v});
  for (int32_t v = m; v < rows; v *= 2)
    regs.push_back({v, 0});
  return expectOk(LinearLayout::get({{"register", regs}, {"lane", lanes}},
                                    {{"dim0", rows}, {"dim1", cols}}));
}

struct ChooserCase {
  const char *name;
  int64_t rows, cols;
  unsigned elementBytes;
  int32_t m, kWidth;
  unsigned readBytes;
};

class SwizzleChooserTest : public testing::TestWithParam<ChooserCase> {};

/// Attention's V^T ([head dims, keys], keys contiguous) is written from V's
/// head-dim runs: a lane holds 4 keys of 8 rows, and the lanes of a wave
/// are 8 rows apart. The plain phase repeats every 16 rows and leaves those
/// lanes on one bank; the folded phase spreads them, and the MFMA read (a
/// lane per row) stays conflict-free.
TEST(SwizzleChooserTest, StridedRowWritesChooseTheFoldedPhase) {
  SwizzleQuery query;
  query.shape = {128, 64};
  query.order = {1, 0};
  query.elementBytes = 2;
  query.storeBytes = 8;
  query.numWaves = 4;
  query.writeLayout = expectOk(LinearLayout::get(
      {{"register", {{0, 1}, {0, 2}, {1, 0}, {2, 0}, {4, 0}}},
       {"lane", {{8, 0}, {16, 0}, {32, 0}, {64, 0}, {0, 4}, {0, 8}}},
       {"wave", {{0, 16}, {0, 32}}}},
      {{"dim0", 128}, {"dim1", 64}}));
  query.readLayout = mfmaOperandA(32, 4, 128, 64);
  query.readBytes = 8;
  SwizzleChoice choice = expectOk(chooseSwizzle(query));
  EXPECT_TRUE(choice.fold);
  EXPECT_EQ(choice.totalConflicts(), 0u);
  LinearLayout unfolded = expectOk(swizzledLdsLayout(
      query.shape, choice.vec, choice.perPhase, choice.maxPhase, query.order));
  BankConflictReport write =
      expectOk(analyzeBankConflicts(*query.writeLayout, unfolded, 2, 8,
                                    /*isWrite=*/true, LdsBanking{}, 64));
  EXPECT_GT(write.conflictCycles, 0u);
}

/// The conflict cycles of every access of `registers` into `memory`,
/// computed one access at a time from each element's tile coordinates
/// (what analyzeBankConflicts shortens to one access where offsets are
/// aligned).
BankConflictReport conflictsAccessByAccess(const LinearLayout &registers,
                                           const LinearLayout &memory,
                                           unsigned elementBytes,
                                           unsigned accessBytes, bool isWrite,
                                           const LdsBanking &banking) {
  LinearLayout toOffset = expectOk(memory.invert());
  int32_t vector = accessBytes / elementBytes;
  int32_t lanes = registers.getInDimSize("lane");
  bool hasWaves = registers.hasInDim("wave");
  int32_t waves = hasWaves ? registers.getInDimSize("wave") : 1;
  BankConflictReport report;
  for (int32_t wave = 0; wave < waves; ++wave)
    for (int32_t reg = 0; reg < registers.getInDimSize("register");
         reg += vector) {
      std::vector<int64_t> addresses(64);
      for (int32_t lane = 0; lane < 64; ++lane) {
        Coords input = {reg, lane % lanes};
        if (hasWaves)
          input.push_back(wave);
        addresses[lane] =
            int64_t(toOffset.apply(registers.apply(input))[0]) * elementBytes;
      }
      unsigned extra =
          countLdsConflictCycles(addresses, accessBytes, isWrite, banking, 64);
      report.conflictCycles += extra;
      report.worstPerAccess = std::max(report.worstPerAccess, extra);
    }
  return report;
}

TEST(BankConflictTest, AlignedAccessesShareTheFirstOnesConflicts) {
  // Every swizzle of a K-contiguous 128x64 bf16 tile, written 16 bytes a
  // lane by four waves and read by MFMA A-operand lanes 2, 8 and 16 bytes at
  // a time (16: ds_read_b128's lane groups), on 32 and 64 banks: the
  // analysis matches the access-by-access count and worst access.
  SwizzleQuery query;
  query.shape = {128, 64};
  query.order = {1, 0};
  query.elementBytes = 2;
  query.storeBytes = 16;
  query.numWaves = 4;
  LinearLayout write = expectOk(ldsWriteLayout(query));
  LinearLayout read = mfmaOperandA(32, 4, 128, 64);
  LinearLayout wideRead = mfmaOperandA(16, 8, 128, 64);
  unsigned compared = 0, conflicted = 0;
  for (LdsBanking banking : {LdsBanking{}, LdsBanking{64, 4}})
    for (int64_t vec = 1; vec <= 64; vec *= 2)
      for (int64_t perPhase = 1; perPhase <= 4; perPhase *= 2)
        for (int64_t maxPhase = 1; maxPhase <= 8; maxPhase *= 2)
          for (bool fold : {false, true}) {
            llvm::Expected<LinearLayout> memory = swizzledLdsLayout(
                query.shape, vec, perPhase, maxPhase, query.order, fold);
            if (!memory) {
              llvm::consumeError(memory.takeError());
              continue;
            }
            for (auto [layout, bytes, isWrite] :
                 {std::tuple(&write, 16u, true), std::tuple(&read, 8u, false),
                  std::tuple(&read, 2u, false),
                  std::tuple(&wideRead, 16u, false)}) {
              llvm::Expected<BankConflictReport> report = analyzeBankConflicts(
                  *layout, *memory, 2, bytes, isWrite, banking, 64);
              if (!report) {
                llvm::consumeError(report.takeError());
                continue;
              }
              BankConflictReport expected = conflictsAccessByAccess(
                  *layout, *memory, 2, bytes, isWrite, banking);
              EXPECT_EQ(report->conflictCycles, expected.conflictCycles)
                  << "vec " << vec << " perPhase " << perPhase << " maxPhase "
                  << maxPhase << (fold ? " folded" : "")
                  << (isWrite ? " write " : " read ") << bytes;
              EXPECT_EQ(report->worstPerAccess, expected.worstPerAccess);
              ++compared;
              conflicted += expected.conflictCycles > 0;
            }
          }
  // The sweep covers conflicted and conflict-free candidates alike.
  EXPECT_GT(compared, 200u);
  EXPECT_GT(conflicted, 40u);
  EXPECT_LT(conflicted, compared);
}

TEST_P(SwizzleChooserTest, KMajorTilesGetConflictFreeSwizzles) {
  const ChooserCase &c = GetParam();
  SwizzleQuery query;
  query.shape = {c.rows, c.cols};
  query.order = {1, 0}; // K contiguous
  query.elementBytes = c.elementBytes;
  query.storeBytes = 16;
  query.numWaves = 4;
  query.readLayout = mfmaOperandA(c.m, c.kWidth, c.rows, c.cols);
  query.readBytes = c.readBytes;
  SwizzleChoice choice = expectOk(chooseSwizzle(query));
  EXPECT_EQ(choice.write.conflictCycles, 0u) << c.name;
  EXPECT_EQ(choice.read.conflictCycles, 0u) << c.name;
  EXPECT_GT(choice.maxPhase, 1) << c.name;

  // The analysis agrees when rerun on the chosen layout, and the plain
  // row-major layout is conflicted: the swizzle is what removes them.
  LinearLayout chosen = expectOk(swizzledLdsLayout(
      query.shape, choice.vec, choice.perPhase, choice.maxPhase, query.order));
  BankConflictReport read =
      expectOk(analyzeBankConflicts(query.readLayout, chosen, c.elementBytes,
                                    c.readBytes, false, LdsBanking{}, 64));
  EXPECT_EQ(read.conflictCycles, 0u);
  LinearLayout plain =
      expectOk(swizzledLdsLayout(query.shape, 1, 1, 1, query.order));
  BankConflictReport plainRead =
      expectOk(analyzeBankConflicts(query.readLayout, plain, c.elementBytes,
                                    c.readBytes, false, LdsBanking{}, 64));
  EXPECT_GT(plainRead.conflictCycles, 0u) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Tiles, SwizzleChooserTest,
    testing::Values(
        // f16/bf16 A tiles of v_mfma_f32_32x32x8 (8-byte reads) and of the
        // gfx950 16x16x32 (16-byte reads); fp8 v_mfma_f32_16x16x32 (8 bytes).
        ChooserCase{"f16-32x32x8", 128, 64, 2, 32, 4, 8},
        ChooserCase{"bf16-16x16x32", 64, 64, 2, 16, 8, 16},
        ChooserCase{"bf16-32x32x8-k32", 256, 32, 2, 32, 4, 8},
        ChooserCase{"fp8-16x16x32", 128, 128, 1, 16, 8, 8},
        ChooserCase{"fp8-32x32x16", 128, 64, 1, 32, 8, 8}),
    [](const testing::TestParamInfo<ChooserCase> &info) {
      std::string name = info.param.name;
      for (char &ch : name)
        if (!isalnum(ch))
          ch = '_';
      return name;
    });

TEST(SwizzleChooserMNMajorTest, ElementReadsOfAnMMajorTile) {
  // A stored M-contiguous ([K, M] in LDS order, here dim0 = M contiguous):
  // the MFMA's k-runs are strided in LDS, so the read is one element per
  // access; the chooser still finds a layout without conflicts for both.
  for (unsigned bytes : {2u, 1u}) {
    SwizzleQuery query;
    query.shape = {128, 64}; // [M, K]
    query.order = {0, 1};    // M contiguous
    query.elementBytes = bytes;
    query.storeBytes = 16;
    query.numWaves = 4;
    query.readLayout = mfmaOperandA(32, 4, 128, 64);
    query.readBytes = bytes;
    SwizzleChoice choice = expectOk(chooseSwizzle(query));
    EXPECT_EQ(choice.totalConflicts(), 0u) << bytes;
  }
}

TEST(SwizzleChooserMNMajorTest, VectorReadsAcrossTheContiguousDimFail) {
  SwizzleQuery query;
  query.shape = {128, 64};
  query.order = {0, 1};
  query.elementBytes = 2;
  query.readLayout = mfmaOperandA(32, 4, 128, 64);
  query.readBytes = 8; // 4 consecutive k are not contiguous in an M-major tile
  EXPECT_NE(expectError(chooseSwizzle(query)).find("not contiguous"),
            std::string::npos);
}

TEST(TransposedReadLayoutTest, ExchangeGivesTheTarget) {
  // The B operand of a 32x32x16 MFMA (K x N = 16 x 32): registers step K by
  // 1, 2, 4; lanes step N by 1..16, then K by 8.
  LinearLayout target = expectOk(LinearLayout::get(
      {{"register", {{1, 0}, {2, 0}, {4, 0}}},
       {"lane", {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {8, 0}}}},
      {{"dim0", 16}, {"dim1", 32}}));
  LinearLayout addresses = expectOk(transposedReadLayout(target));
  // Each lane reads four consecutive elements along N.
  EXPECT_EQ(addresses.apply({1, 0}), (Coords{0, 1}));
  EXPECT_EQ(addresses.apply({2, 0}), (Coords{0, 2}));
  // ds_read_b64_tr_b16: in a group of 16 lanes, lane j's element e is
  // element j % 4 of what lane 4e + j / 4 read.
  for (int32_t r = 0; r < 8; ++r)
    for (int32_t lane = 0; lane < 64; ++lane) {
      int32_t group = lane / 16 * 16, j = lane % 16, e = r % 4;
      int32_t source = group + 4 * e + j / 4;
      EXPECT_EQ(addresses.apply({(r & ~3) | (j % 4), source}),
                target.apply({r, lane}))
          << "register " << r << " lane " << lane;
    }
}

TEST(TransposedReadLayoutTest, NeedsFourRegistersAndSixteenLanes) {
  LinearLayout narrow = expectOk(LinearLayout::get(
      {{"register", {{1, 0}}}, {"lane", {{0, 1}, {0, 2}, {0, 4}, {0, 8}}}},
      {{"dim0", 2}, {"dim1", 16}}));
  EXPECT_NE(expectError(transposedReadLayout(narrow)).find("4 registers"),
            std::string::npos);
}

} // namespace
