//===- MatrixPriorityTest.cpp - s_setprio around MFMA clusters ------------===//
//
// The cluster search of the wave-priority machine pass, on code laid out as
// the asm printer prints it. test/Target/matrix-priority.mlir checks the
// pass's s_setprio in the ISA and the code object of a compiled kernel.
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/Hsaco.h"

#include "gtest/gtest.h"

using namespace tessel;

namespace {

CodeLine label(int block) { return {false, block, -1}; }
CodeLine other() { return {false, -1, -1}; }
CodeLine mfma() { return {true, -1, -1}; }
CodeLine branch(int block) { return {false, -1, block}; }
CodeLine scalar() { return {false, -1, -1, /*isScalar=*/true}; }

using Clusters = llvm::SmallVector<std::pair<size_t, size_t>>;

// Two clusters in a loop (MFMAs at most 12 lines apart belong together);
// an MFMA outside any loop is left alone.
TEST(MatrixPriority, ClustersInLoops) {
  std::vector<CodeLine> lines = {mfma(), label(1), other(),
                                 mfma(), other(),  mfma()};
  for (int i = 0; i < 13; ++i)
    lines.push_back(other());
  lines.push_back(mfma());    // 19: 14 lines after the MFMA at 5
  lines.push_back(branch(1)); // 20: back to line 1
  lines.push_back(other());
  EXPECT_EQ(findMatrixClusters(lines), (Clusters{{3, 5}, {19, 19}}));
}

// Twelve lines apart still joins a cluster; thirteen splits it.
TEST(MatrixPriority, ClusterGap) {
  std::vector<CodeLine> lines = {label(0), mfma()};
  for (int i = 0; i < 11; ++i)
    lines.push_back(other());
  lines.push_back(mfma()); // 13: 12 after the MFMA at 1
  for (int i = 0; i < 12; ++i)
    lines.push_back(other());
  lines.push_back(mfma()); // 26: 13 after the MFMA at 13
  lines.push_back(branch(0));
  EXPECT_EQ(findMatrixClusters(lines), (Clusters{{1, 13}, {26, 26}}));
}

// Scalar lines (address arithmetic, waits) between two MFMAs do not count
// toward the gap: eleven vector lines and any number of scalar ones keep a
// cluster together.
TEST(MatrixPriority, ScalarLinesDoNotSplit) {
  std::vector<CodeLine> lines = {label(0), mfma()};
  for (int i = 0; i < 11; ++i)
    lines.push_back(other());
  for (int i = 0; i < 6; ++i)
    lines.push_back(scalar());
  lines.push_back(mfma()); // 19: 11 vector lines after the MFMA at 1
  for (int i = 0; i < 12; ++i)
    lines.push_back(other());
  lines.push_back(scalar());
  lines.push_back(mfma()); // 33: 12 vector lines after the MFMA at 19
  lines.push_back(branch(0));
  EXPECT_EQ(findMatrixClusters(lines), (Clusters{{1, 19}, {33, 33}}));
}

// A nested loop's clusters are found for the inner loop and again for the
// outer one (whose scan may join them differently).
TEST(MatrixPriority, NestedLoops) {
  std::vector<CodeLine> lines = {label(0),  mfma(), label(1), mfma(),
                                 branch(1), mfma(), branch(0)};
  EXPECT_EQ(findMatrixClusters(lines), (Clusters{{3, 3}, {1, 5}}));
}

// Code without loops, loops without MFMAs and forward branches raise
// nothing.
TEST(MatrixPriority, NothingToRaise) {
  EXPECT_TRUE(findMatrixClusters({mfma(), other()}).empty());
  EXPECT_TRUE(findMatrixClusters({label(1), other(), branch(1)}).empty());
  EXPECT_TRUE(
      findMatrixClusters({mfma(), branch(2), mfma(), label(2)}).empty());
}

} // namespace
