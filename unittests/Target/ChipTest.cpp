//===- ChipTest.cpp - The chip table and occupancy rules --------*- C++ -*-===//

#include "tessel/Target/Chip.h"

#include "gtest/gtest.h"

#include <set>

using namespace tessel;

namespace {

const Chip &chip(llvm::StringRef name) {
  const Chip *found = lookupChip(name);
  EXPECT_NE(found, nullptr) << name.str();
  return *found;
}

TEST(ChipTest, KnowsTheFiveTargets) {
  EXPECT_EQ(knownChipNames(), "gfx90a, gfx942, gfx950, gfx1100, gfx1201");
  EXPECT_EQ(lookupChip("gfx908"), nullptr);
  EXPECT_EQ(lookupChip(""), nullptr);
}

TEST(ChipTest, WaveSizesAndRegisterFiles) {
  for (llvm::StringRef name : {"gfx90a", "gfx942", "gfx950"}) {
    EXPECT_EQ(chip(name).defaultWaveSize, 64u);
    EXPECT_TRUE(chip(name).isCDNA());
    EXPECT_EQ(chip(name).maxAccVgprs, 256u);
    EXPECT_EQ(chip(name).totalVgprsWave64, 512u);
    EXPECT_EQ(chip(name).maxWavesPerSimd, 8u);
  }
  for (llvm::StringRef name : {"gfx1100", "gfx1201"}) {
    EXPECT_EQ(chip(name).defaultWaveSize, 32u);
    EXPECT_TRUE(chip(name).isRDNA());
    EXPECT_EQ(chip(name).maxWavesPerSimd, 16u);
  }
}

TEST(ChipTest, LdsSizes) {
  EXPECT_EQ(chip("gfx942").ldsBytesPerCU, 64u * 1024);
  EXPECT_EQ(chip("gfx950").ldsBytesPerCU, 160u * 1024);
  EXPECT_EQ(chip("gfx950").maxLdsBytesPerWorkgroup, 160u * 1024);
  EXPECT_EQ(chip("gfx1100").maxLdsBytesPerWorkgroup, 64u * 1024);
  EXPECT_EQ(chip("gfx942").ldsBanks, 32u);
}

TEST(ChipTest, PeakRatesMatchTheReference) {
  // docs/hardware.md §2.3: MI300X 1307.4 TF bf16, 2614.9 TF fp8; MI355X
  // 2.5 PF f16; RX 9070 XT 194.6 TF f16.
  EXPECT_NEAR(chip("gfx942").peakMatrixTeraOps(MatrixType::BF16), 1307.4, 0.5);
  EXPECT_NEAR(chip("gfx942").peakMatrixTeraOps(MatrixType::FP8), 2614.9, 0.5);
  EXPECT_NEAR(chip("gfx942").peakMatrixTeraOps(MatrixType::F64), 163.4, 0.5);
  EXPECT_NEAR(chip("gfx950").peakMatrixTeraOps(MatrixType::F16), 2516.6, 1.0);
  EXPECT_NEAR(chip("gfx1201").peakMatrixTeraOps(MatrixType::F16), 194.6, 0.5);
  EXPECT_NEAR(chip("gfx1100").peakMatrixTeraOps(MatrixType::F16), 122.9, 0.5);
  // No xf32 on gfx950 and no fp8 on gfx90a or gfx11.
  EXPECT_EQ(chip("gfx950").matrixOpsPerClock(MatrixType::XF32), 0u);
  EXPECT_EQ(chip("gfx90a").matrixOpsPerClock(MatrixType::FP8), 0u);
  EXPECT_EQ(chip("gfx1100").matrixOpsPerClock(MatrixType::FP8), 0u);
  EXPECT_EQ(chip("gfx942").fp8Format, Fp8Format::Fnuz);
  EXPECT_EQ(chip("gfx950").fp8Format, Fp8Format::Ocp);
  EXPECT_EQ(chip("gfx1201").fp8Format, Fp8Format::Ocp);
}

TEST(ChipTest, IsaVersionEncoding) {
  EXPECT_EQ(chip("gfx90a").isaVersion(), 9010u);
  EXPECT_EQ(chip("gfx942").isaVersion(), 9402u);
  EXPECT_EQ(chip("gfx950").isaVersion(), 9500u);
  EXPECT_EQ(chip("gfx1100").isaVersion(), 11000u);
  EXPECT_EQ(chip("gfx1201").isaVersion(), 12001u);
}

unsigned wavesWithVgprs(llvm::StringRef name, unsigned arch, unsigned acc = 0) {
  KernelResourceUsage usage;
  usage.archVgprs = arch;
  usage.accVgprs = acc;
  usage.waveSize = chip(name).defaultWaveSize;
  return computeOccupancy(chip(name), usage).byVgprs;
}

TEST(ChipTest, VgprOccupancyTableOfTheReference) {
  // docs/hardware.md §6: <=64 -> 8, 65-72 -> 7, 73-80 -> 6, 81-96 -> 5,
  // 97-128 -> 4, 129-168 -> 3, 169-256 -> 2, 257-512 -> 1.
  const std::pair<unsigned, unsigned> table[] = {
      {1, 8},   {64, 8},  {65, 7},  {72, 7},  {73, 6},  {80, 6},
      {81, 5},  {96, 5},  {97, 4},  {128, 4}, {129, 3}, {168, 3},
      {169, 2}, {256, 2}, {257, 1}, {512, 1}};
  for (auto [vgprs, waves] : table)
    EXPECT_EQ(wavesWithVgprs("gfx942", vgprs), waves) << vgprs << " VGPRs";
  // AGPRs start at alignTo(arch, 4): 61 arch + 4 acc = 68 -> 7 waves.
  EXPECT_EQ(wavesWithVgprs("gfx942", 61, 4), 7u);
  EXPECT_EQ(wavesWithVgprs("gfx942", 128, 128), 2u);
}

TEST(ChipTest, Rdna3Wave32VgprOccupancy) {
  // docs/hardware.md §6, RDNA: w32 96 -> 16, 128 -> 10, 192 -> 8, 256 -> 5.
  EXPECT_EQ(wavesWithVgprs("gfx1100", 96), 16u);
  EXPECT_EQ(wavesWithVgprs("gfx1100", 128), 10u);
  EXPECT_EQ(wavesWithVgprs("gfx1100", 192), 8u);
  EXPECT_EQ(wavesWithVgprs("gfx1100", 256), 5u);
}

TEST(ChipTest, LdsAndSgprLimits) {
  KernelResourceUsage usage;
  usage.archVgprs = 32;
  usage.sgprs = 40;
  usage.workgroupSize = 256; // 4 waves
  usage.ldsBytes = 32 * 1024;
  // Two workgroups fit in 64 KiB: 8 waves over 4 SIMDs.
  Occupancy occupancy = computeOccupancy(chip("gfx942"), usage);
  EXPECT_EQ(occupancy.byLds, 2u);
  EXPECT_EQ(occupancy.wavesPerSimd, 2u);
  EXPECT_EQ(occupancy.limiter, "LDS");
  // gfx950's 160 KiB holds five.
  EXPECT_EQ(computeOccupancy(chip("gfx950"), usage).byLds, 5u);
  // LDS is allocated in 512-byte granules: 32769 bytes take 33280.
  usage.ldsBytes = 32 * 1024 + 1;
  EXPECT_EQ(computeOccupancy(chip("gfx942"), usage).byLds, 1u);

  usage.ldsBytes = 0;
  usage.sgprs = 104;
  occupancy = computeOccupancy(chip("gfx942"), usage);
  EXPECT_EQ(occupancy.bySgprs, 7u);
  EXPECT_EQ(occupancy.limiter, "SGPRs");
  usage.sgprs = 20;
  occupancy = computeOccupancy(chip("gfx942"), usage);
  EXPECT_EQ(occupancy.wavesPerSimd, 8u);
  EXPECT_EQ(occupancy.limiter, "wave slots");
}

} // namespace

TEST(MatmulTileOrderTest, EveryTileExactlyOnce) {
  for (unsigned xcds : {1u, 8u})
    for (auto [gridX, gridY] : {std::pair<int64_t, int64_t>{1, 1},
                                {3, 5},
                                {16, 16},
                                {7, 19},
                                {32, 9},
                                {1, 37}}) {
      std::set<std::pair<int64_t, int64_t>> seen;
      for (int64_t id = 0; id < gridX * gridY; ++id) {
        TilePosition tile = getMatmulTilePosition(id, gridX, gridY, xcds);
        EXPECT_GE(tile.row, 0);
        EXPECT_LT(tile.row, gridY);
        EXPECT_GE(tile.col, 0);
        EXPECT_LT(tile.col, gridX);
        seen.insert({tile.row, tile.col});
      }
      EXPECT_EQ(int64_t(seen.size()), gridX * gridY)
          << xcds << " XCDs, grid " << gridX << "x" << gridY;
    }
}

TEST(MatmulTileOrderTest, OneXcdWalksGroupsOfRows) {
  // 4 columns, 10 rows: the first group is rows 0-7, walked down each
  // column; the last group holds rows 8-9.
  auto at = [](int64_t id) { return getMatmulTilePosition(id, 4, 10, 1); };
  EXPECT_EQ(at(0).row, 0);
  EXPECT_EQ(at(0).col, 0);
  EXPECT_EQ(at(7).row, 7);
  EXPECT_EQ(at(7).col, 0);
  EXPECT_EQ(at(8).row, 0);
  EXPECT_EQ(at(8).col, 1);
  EXPECT_EQ(at(32).row, 8);
  EXPECT_EQ(at(32).col, 0);
  EXPECT_EQ(at(33).row, 9);
  EXPECT_EQ(at(34).row, 8);
  EXPECT_EQ(at(34).col, 1);
}

TEST(MatmulTileOrderTest, EachXcdGetsAContiguousRange) {
  // 16x16 tiles over 8 XCDs: XCD x receives ids x, x + 8, ...; they become
  // 32 consecutive positions, so XCD 0 works on rows 0-7 of columns 0-3.
  for (int64_t local = 0; local < 32; ++local) {
    TilePosition tile = getMatmulTilePosition(local * 8, 16, 16, 8);
    EXPECT_LT(tile.row, 8);
    EXPECT_LT(tile.col, 4);
  }
  // 3x5 = 15 tiles over 8 XCDs: XCDs 0-6 get 2 workgroups, XCD 7 one.
  // Id 14 is XCD 6's second (position 13); id 7 is XCD 7's only one
  // (position 14, the last).
  auto samePosition = [](TilePosition x, TilePosition y) {
    return x.row == y.row && x.col == y.col;
  };
  EXPECT_TRUE(samePosition(getMatmulTilePosition(14, 3, 5, 8),
                           getMatmulTilePosition(13, 3, 5, 1)));
  EXPECT_TRUE(samePosition(getMatmulTilePosition(7, 3, 5, 8),
                           getMatmulTilePosition(14, 3, 5, 1)));
}

TEST(ChipTest, TargetIdsNameTheirProcessor) {
  // As the HIP runtime and torch report them; features LLVM's target parser
  // knows for the processor, each once.
  EXPECT_EQ(lookupChip("gfx942:sramecc+:xnack-"), lookupChip("gfx942"));
  EXPECT_EQ(lookupChip("gfx90a:xnack+"), lookupChip("gfx90a"));
  EXPECT_EQ(lookupChip("gfx950:sramecc-"), lookupChip("gfx950"));
  EXPECT_NE(lookupChip("gfx942"), nullptr);
  EXPECT_EQ(lookupChip("gfx942:foo+"), nullptr);
  EXPECT_EQ(lookupChip("gfx942:xnack"), nullptr);
  EXPECT_EQ(lookupChip("gfx942:xnack+:xnack-"), nullptr);
  EXPECT_EQ(lookupChip("gfx1100:sramecc+"), nullptr); // RDNA has no SRAMECC
  EXPECT_EQ(lookupChip("gfx9000:xnack+"), nullptr);
  EXPECT_EQ(lookupChip(""), nullptr);
}
