//===- LoopsTest.cpp - Natural loops of a kernel's machine code -----------===//

#include "tessel/Perf/Model.h"
#include "tessel/Target/Chip.h"

#include "llvm/ADT/StringMap.h"

#include "gtest/gtest.h"

#include <tuple>

using namespace tessel;

namespace {

/// A kernel from printed instructions, 4 bytes apart: "NAME:" labels the
/// next instruction, a trailing "-> NAME" makes it a conditional branch to
/// it and "=> NAME" an unconditional one.
KernelCode kernel(std::initializer_list<const char *> lines) {
  const Chip &chip = *lookupChip("gfx942");
  KernelCode code;
  code.name = "test";
  llvm::StringMap<uint64_t> labels;
  uint64_t address = 0;
  for (llvm::StringRef line : lines) {
    if (line.consume_back(":"))
      labels[line] = address;
    else
      address += 4;
  }
  address = 0;
  for (llvm::StringRef line : lines) {
    if (line.ends_with(":"))
      continue;
    auto [text, target] = line.split(" -> ");
    bool conditional = !target.empty();
    if (!conditional)
      std::tie(text, target) = line.split(" => ");
    Instruction instr = classifyInstruction(text, chip);
    instr.address = address;
    instr.size = 4;
    if (!target.empty()) {
      instr.branchTarget = labels.lookup(target);
      instr.isConditional = conditional;
    }
    code.instructions.push_back(instr);
    address += 4;
  }
  code.instructions.push_back(classifyInstruction("s_endpgm", chip));
  code.instructions.back().address = address;
  return code;
}

// A loop whose rarely taken branch (attention's lazy rescale) LLVM laid out
// after the back edge: the block jumps back into the loop and belongs to
// its natural loop, but does not repeat in its steady state.
TEST(Loops, BlockAfterTheBackEdgeIsNotRepeated) {
  std::vector<LoopRange> loops = findLoops(kernel({
      "v_mov_b32_e32 v0, 0",
      "HEAD:",
      "v_cmp_gt_f32_e32 vcc, v1, v2",
      "s_cbranch_vccnz -> RARE",
      "BODY:",
      "v_add_f32_e32 v0, v0, v1",
      "s_cbranch_scc1 -> HEAD",
      "s_branch => EXIT",
      "RARE:",
      "v_mul_f32_e32 v0, v0, v3",
      "s_branch => BODY",
      "EXIT:",
      "v_mov_b32_e32 v4, v0",
  }));
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].instructions, (std::vector<size_t>{1, 2, 3, 4}));
  EXPECT_EQ(loops[0].begin, 1u);
  EXPECT_EQ(loops[0].end, 4u);
}

// A block every iteration passes through stays in the loop wherever it is
// laid out: here the latch sits above the header and the body after both.
TEST(Loops, BlockOnEveryPathStaysAfterTheBackEdge) {
  std::vector<LoopRange> loops = findLoops(kernel({
      "s_branch => HEAD",
      "LATCH:",
      "v_add_u32_e32 v5, 1, v5",
      "HEAD:",
      "v_cmp_gt_f32_e32 vcc, v1, v2",
      "s_cbranch_vccnz -> EXIT",
      "BODY:",
      "v_add_f32_e32 v0, v0, v1",
      "s_branch => LATCH",
      "EXIT:",
      "v_mov_b32_e32 v4, v0",
  }));
  ASSERT_EQ(loops.size(), 1u);
  EXPECT_EQ(loops[0].instructions, (std::vector<size_t>{1, 2, 3, 4, 5}));
}

// An outer loop's blocks after its back edge are its inner loop's, and
// run: only innermost loops drop such blocks.
TEST(Loops, OuterLoopKeepsItsInnerLoopLaidOutAfterItsBackEdge) {
  std::vector<LoopRange> loops = findLoops(kernel({
      "OUTER:",
      "v_mov_b32_e32 v0, 0",
      "s_cbranch_scc0 -> INNER",
      "LATCH:",
      "v_add_u32_e32 v5, 1, v5",
      "s_cbranch_scc1 -> OUTER",
      "s_branch => EXIT",
      "INNER:",
      "v_add_f32_e32 v0, v0, v1",
      "s_cbranch_vccnz -> INNER",
      "s_branch => LATCH",
      "EXIT:",
      "s_nop 0",
  }));
  ASSERT_EQ(loops.size(), 2u);
  const LoopRange &outer = loops[0].depth == 0 ? loops[0] : loops[1];
  const LoopRange &inner = loops[0].depth == 0 ? loops[1] : loops[0];
  EXPECT_EQ(outer.instructions, (std::vector<size_t>{0, 1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(inner.instructions, (std::vector<size_t>{5, 6}));
}

} // namespace
