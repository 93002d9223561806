//===- LdsConflictsTest.cpp - LDS bank conflicts from machine code --------===//

#include "tessel/Perf/LdsConflicts.h"
#include "tessel/Target/Chip.h"

#include "gtest/gtest.h"

using namespace tessel;

namespace {

const Chip &gfx942() { return *lookupChip("gfx942"); }

/// A kernel from printed instructions, 4 bytes apart; "LOOP:" marks a
/// branch target and "-> LOOP" a conditional branch back to it.
KernelCode kernel(std::initializer_list<const char *> lines) {
  KernelCode code;
  code.name = "test";
  uint64_t address = 0, loop = 0;
  for (llvm::StringRef line : lines) {
    if (line == "LOOP:") {
      loop = address;
      continue;
    }
    bool branchBack = line.consume_back(" -> LOOP");
    Instruction instr = classifyInstruction(line, gfx942());
    instr.address = address;
    instr.size = 4;
    if (branchBack) {
      instr.branchTarget = loop;
      instr.isConditional = true;
    }
    code.instructions.push_back(instr);
    address += 4;
  }
  code.instructions.push_back(classifyInstruction("s_endpgm", gfx942()));
  code.instructions.back().address = address;
  return code;
}

/// The conflicts of the only (or the `index`th) LDS access, for one wave of
/// 64 lanes.
LdsConflict only(const KernelCode &code, size_t index = 0,
                 std::array<uint64_t, 3> block = {64, 1, 1}) {
  std::vector<LdsConflict> conflicts =
      analyzeLdsConflicts(code, gfx942(), block, 64);
  EXPECT_GT(conflicts.size(), index);
  return conflicts.size() > index ? conflicts[index] : LdsConflict();
}

// Lane l reads the dword at l * 128 bytes: every lane of a 32-lane phase
// hits bank 0, 31 extra cycles in each of the two phases.
TEST(LdsConflicts, StridedColumnIsThirtyTwoWay) {
  LdsConflict conflict = only(kernel({
      "v_lshlrev_b32_e32 v1, 7, v0",
      "ds_read_b32 v2, v1",
  }));
  EXPECT_TRUE(conflict.derived);
  EXPECT_EQ(conflict.phases, 2u);
  EXPECT_DOUBLE_EQ(conflict.extraCycles, 62);
  EXPECT_DOUBLE_EQ(conflict.ways(), 32);
}

// One float of padding per 32-float row spreads the column over all banks.
TEST(LdsConflicts, PaddedColumnIsFree) {
  LdsConflict conflict = only(kernel({
      "v_mul_u32_u24_e32 v1, 0x84, v0",
      "ds_read_b32 v2, v1 offset:64",
  }));
  EXPECT_TRUE(conflict.derived);
  EXPECT_DOUBLE_EQ(conflict.extraCycles, 0);
}

// Lanes reading the same dword share it: a broadcast is free.
TEST(LdsConflicts, BroadcastIsFree) {
  LdsConflict conflict = only(kernel({
      "v_mov_b32_e32 v1, s4",
      "ds_read_b32 v2, v1",
  }));
  EXPECT_TRUE(conflict.derived);
  EXPECT_DOUBLE_EQ(conflict.extraCycles, 0);
}

// An unknown uniform base (a kernel argument) rotates the banks and changes
// nothing; a per-lane value the analysis cannot follow is not guessed.
TEST(LdsConflicts, UniformBaseKeepsOffsetsUnknownLaneValueDoesNot) {
  KernelCode code = kernel({
      "v_lshlrev_b32_e32 v1, 7, v0",
      "v_add_u32_e32 v1, s6, v1",
      "ds_read_b32 v2, v1",
      "v_perm_b32 v3, v0, v1, s7",
      "ds_read_b32 v2, v3",
  });
  LdsConflict uniform = only(code, 0), lost = only(code, 1);
  EXPECT_TRUE(uniform.derived);
  EXPECT_DOUBLE_EQ(uniform.extraCycles, 62);
  EXPECT_FALSE(lost.derived);
}

// A ping-pong stage offset (0 or 4096 bytes, toggled by the loop) joined at
// the loop header keeps the lanes' offsets, and an xor swizzle below the
// stage bit applies to them: the 16-byte reads of a 64-element bf16 row
// tile are conflict-free with the swizzle and 8-way without it.
TEST(LdsConflicts, SwizzleUnderLoopCarriedStage) {
  KernelCode swizzled = kernel({
      "v_and_b32_e32 v1, 31, v0",    // row = lane % 32
      "v_lshrrev_b32_e32 v2, 5, v0", // chunk = lane / 32
      "v_and_b32_e32 v3, 7, v1",     // row % 8
      "v_xor_b32_e32 v2, v2, v3",    // swizzled chunk
      "v_lshlrev_b32_e32 v2, 4, v2",
      "v_lshlrev_b32_e32 v1, 7, v1", // 128-byte rows
      "v_or_b32_e32 v1, v1, v2",
      "s_mov_b32 s8, 0",
      "LOOP:",
      "v_add_u32_e32 v4, s8, v1",
      "ds_read_b128 v[8:11], v4",
      "s_xor_b32 s8, s8, 0x1000",
      "s_cmp_lg_u32 s9, 0",
      "s_cbranch_scc1 0 -> LOOP",
  });
  LdsConflict conflict = only(swizzled);
  EXPECT_TRUE(conflict.derived);
  EXPECT_EQ(conflict.phases, 8u);
  EXPECT_DOUBLE_EQ(conflict.extraCycles, 0);

  KernelCode plain = kernel({
      "v_and_b32_e32 v1, 31, v0",
      "v_lshrrev_b32_e32 v2, 5, v0",
      "v_lshlrev_b32_e32 v2, 4, v2",
      "v_lshlrev_b32_e32 v1, 7, v1",
      "v_or_b32_e32 v1, v1, v2",
      "s_mov_b32 s8, 0",
      "LOOP:",
      "v_add_u32_e32 v4, s8, v1",
      "v_xor_b32_e32 v5, 0x800, v4", // the other half of the stage
      "ds_read_b128 v[8:11], v5",
      "s_xor_b32 s8, s8, 0x1000",
      "s_cmp_lg_u32 s9, 0",
      "s_cbranch_scc1 0 -> LOOP",
  });
  conflict = only(plain);
  EXPECT_TRUE(conflict.derived);
  EXPECT_DOUBLE_EQ(conflict.ways(), 8);
}

// Modifiers change the arithmetic (a clamped add saturates): not followed.
TEST(LdsConflicts, ModifiersAreNotModelled) {
  LdsConflict conflict = only(kernel({
      "v_lshlrev_b32_e32 v1, 2, v0",
      "v_add_u32_e64 v1, v1, 4 clamp",
      "ds_read_b32 v2, v1",
  }));
  EXPECT_FALSE(conflict.derived);
}

// A loop counter that grows by a non-uniform amount is not followed.
TEST(LdsConflicts, NonUniformLoopIncrementIsUnknown) {
  LdsConflict conflict = only(kernel({
      "v_lshlrev_b32_e32 v1, 2, v0",
      "LOOP:",
      "ds_read_b32 v2, v1",
      "v_add_u32_e32 v1, v1, v0",
      "s_cbranch_scc1 0 -> LOOP",
  }));
  EXPECT_FALSE(conflict.derived);
}

// Values parked in AGPRs and read back keep their lanes; the two halves of a
// read2 each count.
TEST(LdsConflicts, AgprParkingAndReadTwo) {
  LdsConflict conflict = only(kernel({
      "v_lshlrev_b32_e32 v1, 7, v0",
      "v_accvgpr_write_b32 a3, v1",
      "v_mov_b32_e32 v1, 0",
      "v_accvgpr_read_b32 v5, a3",
      "ds_read2_b32 v[6:7], v5 offset1:1",
  }));
  EXPECT_TRUE(conflict.derived);
  EXPECT_EQ(conflict.phases, 4u);
  EXPECT_DOUBLE_EQ(conflict.extraCycles, 4 * 31);
}

// gfx950's three-input bit operation: bit i of the table is the result for
// inputs (src0 << 2 | src1 << 1 | src2); 0xe4 is (src2 & src0) | (src1 &
// ~src2).
TEST(LdsConflicts, BitOp3TruthTable) {
  LdsConflict conflict = only(kernel({
      "v_mov_b32_e32 v1, 0x7f",      // src0: keep the lane's bits
      "v_lshlrev_b32_e32 v2, 2, v0", // src1: lane * 4
      "v_mov_b32_e32 v3, 0",         // src2: select src1
      "v_bitop3_b32 v4, v1, v2, v3 bitop3:0xe4",
      "ds_read_b32 v5, v4",
  }));
  // lane * 4: consecutive dwords, conflict-free.
  EXPECT_TRUE(conflict.derived);
  EXPECT_DOUBLE_EQ(conflict.extraCycles, 0);
}

// The packed work-item ids of a 2-D workgroup: x in bits 0-9, y from bit
// 10; a column read of a 32x32 float tile (address x * 128 + y * 4) is
// 32-way in every wave.
TEST(LdsConflicts, PackedWorkItemIds) {
  LdsConflict conflict = only(kernel({
                                  "v_and_b32_e32 v1, 0x3ff, v0",
                                  "v_bfe_u32 v2, v0, 10, 10",
                                  "v_lshlrev_b32_e32 v1, 7, v1",
                                  "v_lshl_add_u32 v1, v2, 2, v1",
                                  "ds_read_b32 v3, v1",
                              }),
                              0, {32, 32, 1});
  EXPECT_TRUE(conflict.derived);
  EXPECT_DOUBLE_EQ(conflict.extraCycles, 62);
}

} // namespace
