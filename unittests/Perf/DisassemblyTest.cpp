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

} // namespace
