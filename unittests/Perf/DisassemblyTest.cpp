//===- DisassemblyTest.cpp - Classifying printed instructions -------------===//

#include "tessel/Perf/Disassembly.h"
#include "tessel/Target/Chip.h"

#include "gtest/gtest.h"

using namespace tessel;

namespace {

const Chip &gfx942() { return *lookupChip("gfx942"); }

std::vector<Instruction> classify(std::initializer_list<const char *> lines) {
  std::vector<Instruction> instructions;
  for (const char *line : lines)
    instructions.push_back(classifyInstruction(line, gfx942()));
  markAccumulatorZeroing(instructions);
  return instructions;
}

TEST(Disassembly, AccumulatorZeroingChain) {
  // A prologue's chain of products of zeros (one register pair for both
  // multiplicands, the constant 0 then the previous result as C), other
  // instructions between its links, then the loop's real products.
  std::vector<Instruction> code = classify({
      "v_mfma_f32_32x32x8_f16 v[2:17], v[94:95], v[94:95], 0",
      "v_add_u32_e32 v1, v2, v3",
      "v_mfma_f32_32x32x8_f16 v[18:33], v[94:95], v[94:95], v[2:17]",
      "v_mfma_f32_32x32x8_bf16 v[18:33], v[40:41], v[42:43], v[18:33]",
      "v_mfma_f32_32x32x8_bf16 v[2:17], v[40:41], v[44:45], 0",
      "v_mfma_f32_32x32x8_f16 v[50:65], v[46:47], v[46:47], v[18:33]",
  });
  EXPECT_TRUE(code[0].zeroesAccumulator);
  EXPECT_EQ(code[0].matrixFlops, 0u);
  EXPECT_FALSE(code[1].zeroesAccumulator);
  EXPECT_TRUE(code[2].zeroesAccumulator);
  // Real products: different multiplicands, even with C = 0.
  EXPECT_FALSE(code[3].zeroesAccumulator);
  EXPECT_EQ(code[3].matrixFlops, 32u * 32 * 8 * 2);
  EXPECT_FALSE(code[4].zeroesAccumulator);
  // One register pair for both multiplicands but C neither 0 nor the
  // chain's last result (the chain ended at a real product): a product.
  EXPECT_FALSE(code[5].zeroesAccumulator);
  EXPECT_GT(code[5].matrixFlops, 0u);
}

// The vector instructions that do not issue beside their own wave's matrix
// instruction: packed math, dot products and 8-bit pair conversions on
// CDNA3 and CDNA4, transcendentals on CDNA3 only; none on CDNA2.
TEST(Disassembly, InstructionsThatWaitForTheirWavesProduct) {
  auto waits = [](const char *chip, const char *line) {
    return classifyInstruction(line, *lookupChip(chip)).waitsForMatrix;
  };
  for (const char *chip : {"gfx942", "gfx950"}) {
    EXPECT_TRUE(waits(chip, "v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]"));
    EXPECT_TRUE(waits(chip, "v_pk_add_f32 v[0:1], v[2:3], v[4:5]"));
    EXPECT_TRUE(
        waits(chip, "v_pk_mov_b32 v[0:1], v[2:3], v[4:5] op_sel:[0,1]"));
    EXPECT_TRUE(waits(chip, "v_dot2c_f32_f16_e32 v0, v1, v2"));
    EXPECT_TRUE(waits(chip, "v_cvt_pk_fp8_f32 v0, v1, v2"));
    EXPECT_FALSE(waits(chip, "v_fma_f32 v0, v1, v2, v3"));
    EXPECT_FALSE(waits(chip, "v_add_f32_e32 v0, v1, v2"));
    EXPECT_FALSE(waits(chip, "v_cvt_pkrtz_f16_f32 v0, v1, v2"));
    EXPECT_FALSE(waits(chip, "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17], "
                             "v[18:19], v[0:15]"));
    EXPECT_FALSE(waits(chip, "ds_read_b128 v[0:3], v4"));
  }
  EXPECT_TRUE(waits("gfx942", "v_exp_f32_e32 v0, v1"));
  EXPECT_FALSE(waits("gfx950", "v_exp_f32_e32 v0, v1"));
  EXPECT_FALSE(waits("gfx90a", "v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7]"));
  EXPECT_FALSE(waits("gfx90a", "v_exp_f32_e32 v0, v1"));
  EXPECT_FALSE(waits("gfx1100", "v_exp_f32_e32 v0, v1"));
}

} // namespace
