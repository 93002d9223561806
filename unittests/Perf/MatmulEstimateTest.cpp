//===- MatmulEstimateTest.cpp - The analytical form of the model ----------===//

#include "tessel/Perf/MatmulEstimate.h"
#include "tessel/Target/Mma.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace tessel;

namespace {

const Chip &gfx942() { return *lookupChip("gfx942"); }

MatmulCandidate candidate(unsigned tileM, unsigned tileN, unsigned tileK,
                          unsigned wavesM, unsigned wavesN, unsigned vgprs,
                          unsigned ldsBytes) {
  MatmulCandidate result;
  result.tileM = tileM;
  result.tileN = tileN;
  result.tileK = tileK;
  result.wavesM = wavesM;
  result.wavesN = wavesN;
  result.instr = lookupMma("v_mfma_f32_32x32x8_bf16", gfx942());
  result.vgprs = vgprs;
  result.ldsBytes = ldsBytes;
  return result;
}

MatmulShape bf16(uint64_t m, uint64_t n, uint64_t k) {
  MatmulShape shape;
  shape.m = m;
  shape.n = n;
  shape.k = k;
  return shape;
}

// The counts of one K step follow the lowering: 128x128x32 on 2x2 waves is
// 16 MFMAs, four 16-byte loads and LDS writes and eight 16-byte LDS reads
// per lane, and 4 x 8 rotation + 3 x 20 addressing VALU.
TEST(MatmulEstimate, StepCounts) {
  MatmulStepCounts step =
      countMatmulStep(gfx942(), candidate(128, 128, 32, 2, 2, 144, 32768),
                      bf16(4096, 4096, 4096));
  EXPECT_EQ(step.matrix, 16u);
  EXPECT_EQ(step.globalLoads, 4u);
  EXPECT_EQ(step.ldsWrites, 4u);
  EXPECT_EQ(step.ldsReads, 8u);
  EXPECT_EQ(step.valu, 4u * 8 + 3u * 16);
  // v_mfma_f32_32x32x8_bf16 keeps the matrix pipe 32 clocks on gfx942.
  EXPECT_DOUBLE_EQ(step.matrixCycles, 16.0 * 32);
}

// An unrolled K loop copies no registers between steps. B stored K x N on
// a K tile of 32 (64 bytes per LDS row) is loaded in runs of four rows per
// lane: 16 elements per lane as four 8-byte loads (A: two 16-byte loads
// for the whole stage), written to LDS as four 8-byte K runs, assembled by
// 8 register permutes, and read back in 8-byte K runs (a wave's 64 columns
// x 32 K: 8 reads); the ISA of this kernel has 12 loads, 12 writes and 24
// reads per two steps. On a K tile of 16 (32-byte rows) B keeps its stored
// layout and comes one element per LDS read (16 reads), two elements
// packed per VALU instruction.
TEST(MatmulEstimate, StepCountsUnrolledAndTransposedB) {
  MatmulCandidate unrolled = candidate(128, 128, 32, 2, 2, 144, 32768);
  unrolled.unrolled = true;
  MatmulShape shape = bf16(4096, 4096, 4096);
  MatmulStepCounts step = countMatmulStep(gfx942(), unrolled, shape);
  EXPECT_EQ(step.ldsReads, 8u);
  EXPECT_EQ(step.valu, 3u * 16);
  shape.bKContiguous = false;
  step = countMatmulStep(gfx942(), unrolled, shape);
  EXPECT_EQ(step.globalLoads, 2u + 4u);
  EXPECT_EQ(step.ldsWrites, 2u + 4u);
  EXPECT_EQ(step.ldsReads, 4u + 8u);
  EXPECT_EQ(step.valu, 8u + 3u * (6 + 6 + 12));
  MatmulCandidate shortK = candidate(128, 128, 16, 2, 2, 144, 16384);
  shortK.unrolled = true;
  step = countMatmulStep(gfx942(), shortK, shape);
  EXPECT_EQ(step.globalLoads, 2u);
  EXPECT_EQ(step.ldsReads, 2u + 16u);
  EXPECT_EQ(step.valu, 8u + 3u * (2 + 2 + 18));
}

// The load shape of a lane that wants a run along the other dimension: the
// run first takes the lane's spare elements, then trades vector width while
// the vector stays twice the run.
TEST(MatmulEstimate, SpreadRun) {
  SpreadRun spread = getSpreadRun(16, 8, 32, 4);
  EXPECT_EQ(spread.vector, 4);
  EXPECT_EQ(spread.run, 4);
  spread = getSpreadRun(32, 8, 32, 4);
  EXPECT_EQ(spread.vector, 8);
  EXPECT_EQ(spread.run, 4);
  spread = getSpreadRun(8, 8, 32, 4);
  EXPECT_EQ(spread.vector, 4);
  EXPECT_EQ(spread.run, 2);
  spread = getSpreadRun(16, 8, 1, 4); // one row: no run
  EXPECT_EQ(spread.run, 1);
  const MmaInstr &bf16Instr =
      *lookupMmaByName("v_mfma_f32_32x32x8_bf16").front();
  const MmaInstr &f32Instr = *lookupMmaByName("v_mfma_f32_32x32x2_f32").front();
  EXPECT_TRUE(writesOperandInKRuns(bf16Instr, 64, 32, 2));
  EXPECT_FALSE(writesOperandInKRuns(bf16Instr, 64, 16, 2));
  // One K element per lane: nothing to gather into runs.
  EXPECT_FALSE(writesOperandInKRuns(f32Instr, 64, 64, 4));
}

// Workgroups run in rounds: 1024 tiles of 128x128 with two workgroups per
// CU (32 KiB of LDS each) take two rounds of 608 on 304 CUs.
TEST(MatmulEstimate, Rounds) {
  MatmulEstimate estimate =
      estimateMatmul(gfx942(), bf16(4096, 4096, 4096),
                     candidate(128, 128, 32, 2, 2, 144, 32768));
  EXPECT_EQ(estimate.workgroups, 1024u);
  EXPECT_EQ(estimate.workgroupsPerCU, 2u);
  EXPECT_EQ(estimate.rounds, 2u);
  EXPECT_NEAR(estimate.gridEfficiency, 1024.0 / 1216, 1e-9);
  EXPECT_GT(estimate.structuralEfficiency, 0.0);
  EXPECT_LE(estimate.structuralEfficiency, 1.0);
  EXPECT_LE(estimate.loopEfficiency, 1.0);
}

// A small grid leaves CUs idle: 64 tiles of 128x128 for 304 CUs cannot beat
// 256 tiles of 64x64 on the same problem.
TEST(MatmulEstimate, SmallGridPrefersSmallTiles) {
  MatmulShape shape = bf16(1024, 1024, 1024);
  MatmulEstimate large = estimateMatmul(
      gfx942(), shape, candidate(128, 128, 32, 2, 2, 144, 32768));
  MatmulEstimate small =
      estimateMatmul(gfx942(), shape, candidate(64, 64, 32, 2, 2, 60, 16384));
  EXPECT_EQ(large.workgroups, 64u);
  EXPECT_EQ(small.workgroups, 256u);
  EXPECT_LT(small.seconds, large.seconds);
}

// Only waves of other workgroups hide a workgroup's memory latency: one
// 8-wave workgroup per CU is slower than two 4-wave workgroups with the
// same waves per SIMD and the same work per wave.
TEST(MatmulEstimate, BarrierCouplesWavesOfOneWorkgroup) {
  MatmulShape shape = bf16(8192, 8192, 8192);
  MatmulEstimate twoGroups = estimateMatmul(
      gfx942(), shape, candidate(128, 128, 32, 2, 2, 144, 32768));
  MatmulEstimate oneGroup = estimateMatmul(
      gfx942(), shape, candidate(256, 128, 32, 4, 2, 144, 49152));
  EXPECT_EQ(twoGroups.wavesPerSimd, oneGroup.wavesPerSimd);
  EXPECT_EQ(oneGroup.workgroupsPerCU, 1u);
  EXPECT_GT(oneGroup.stepCycles, twoGroups.stepCycles);
  EXPECT_LT(twoGroups.seconds, oneGroup.seconds);
}

// A workgroup that fits no CU (more LDS than a CU has) cannot run.
TEST(MatmulEstimate, Unplaceable) {
  MatmulEstimate estimate =
      estimateMatmul(gfx942(), bf16(4096, 4096, 4096),
                     candidate(128, 128, 32, 2, 2, 144, 128 * 1024));
  EXPECT_TRUE(std::isinf(estimate.seconds));
  EXPECT_EQ(estimate.limit, "placement");
}

// A problem too small to keep the matrix pipes busy can still be bound by
// nothing but HBM when its arrays are large and its work small: a GEMV-like
// shape reads all of B once.
TEST(MatmulEstimate, HbmFloor) {
  MatmulShape shape = bf16(16, 65536, 65536);
  MatmulCandidate thin = candidate(32, 256, 32, 1, 4, 144, 36864);
  MatmulEstimate estimate = estimateMatmul(gfx942(), shape, thin);
  double bBytes = 65536.0 * 65536 * 2;
  double floor = bBytes / (gfx942().memoryBandwidthTBs * 1e12 * 0.88);
  EXPECT_GE(estimate.seconds, floor);
}

} // namespace
