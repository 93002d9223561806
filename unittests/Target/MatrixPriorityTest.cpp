//===- MatrixPriorityTest.cpp - s_setprio around MFMA clusters ------------===//

#include "tessel/Target/Hsaco.h"

#include "gtest/gtest.h"

using namespace tessel;

namespace {

// Two clusters in a loop (MFMAs at most 12 lines apart belong together)
// get the priority raised before their first and lowered after their last
// MFMA; an MFMA outside any loop is left alone.
TEST(MatrixPriority, ClustersInLoops) {
  std::string input = "\tv_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], 0\n"
                      ".LBB0_1:\n"
                      "\tds_read_b128 v[4:7], v8\n"
                      "\tv_mfma_f32_32x32x8_f16 v[10:25], v[0:1], v[2:3], 0\n"
                      "\tv_add_f32_e32 v30, v31, v32\n"
                      "\tv_mfma_f32_32x32x8_f16 v[10:25], v[4:5], v[6:7], 0\n";
  for (int i = 0; i < 13; ++i)
    input += "\tv_exp_f32_e32 v40, v41\n";
  input += "\tv_mfma_f32_32x32x8_f16 v[50:65], v[0:1], v[2:3], 0\n"
           "\ts_cbranch_vccnz .LBB0_1\n"
           "\ts_endpgm\n";
  std::string output = raiseMatrixClusterPriority(input);
  std::string expected =
      "\tv_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], 0\n"
      ".LBB0_1:\n"
      "\tds_read_b128 v[4:7], v8\n"
      "\ts_setprio 1\n"
      "\tv_mfma_f32_32x32x8_f16 v[10:25], v[0:1], v[2:3], 0\n"
      "\tv_add_f32_e32 v30, v31, v32\n"
      "\tv_mfma_f32_32x32x8_f16 v[10:25], v[4:5], v[6:7], 0\n"
      "\ts_setprio 0\n";
  for (int i = 0; i < 13; ++i)
    expected += "\tv_exp_f32_e32 v40, v41\n";
  expected += "\ts_setprio 1\n"
              "\tv_mfma_f32_32x32x8_f16 v[50:65], v[0:1], v[2:3], 0\n"
              "\ts_setprio 0\n"
              "\ts_cbranch_vccnz .LBB0_1\n"
              "\ts_endpgm\n";
  EXPECT_EQ(output, expected);
}

// Code without loops, or loops without MFMAs, comes back unchanged.
TEST(MatrixPriority, NothingToRaise) {
  std::string straight = "\tv_mfma_f32_32x32x8_f16 v[0:15], v[0:1], v[2:3], 0\n"
                         "\ts_endpgm\n";
  EXPECT_EQ(raiseMatrixClusterPriority(straight), straight);
  std::string loop = ".LBB0_1:\n\tv_add_f32_e32 v0, v1, v2\n"
                     "\ts_cbranch_scc1 .LBB0_1\n";
  EXPECT_EQ(raiseMatrixClusterPriority(loop), loop);
}

} // namespace
