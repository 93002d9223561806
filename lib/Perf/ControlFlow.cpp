//===- ControlFlow.cpp - Basic blocks of a disassembled kernel ------------===//

#include "ControlFlow.h"

#include "llvm/ADT/STLExtras.h"

using namespace tessel;

/// Splits the kernel into basic blocks at branch targets and after branches.
std::vector<BasicBlock> tessel::buildBasicBlocks(const KernelCode &code) {
  size_t count = code.instructions.size();
  std::vector<bool> leader(count + 1, false);
  leader[0] = true;
  leader[count] = true;
  for (auto [index, instr] : llvm::enumerate(code.instructions)) {
    if (instr.kind == InstrKind::Branch || instr.kind == InstrKind::EndProgram)
      leader[index + 1] = true;
    if (instr.branchTarget)
      if (std::optional<size_t> target = code.indexAt(*instr.branchTarget))
        leader[*target] = true;
  }
  std::vector<BasicBlock> blocks;
  std::vector<size_t> blockOf(count + 1, 0);
  for (size_t i = 0; i < count; ++i) {
    if (leader[i])
      blocks.push_back({i, i, {}});
    blockOf[i] = blocks.size() - 1;
    blocks.back().end = i + 1;
  }
  for (auto [index, block] : llvm::enumerate(blocks)) {
    const Instruction &last = code.instructions[block.end - 1];
    bool isBranch = last.kind == InstrKind::Branch;
    if (last.branchTarget)
      if (std::optional<size_t> target = code.indexAt(*last.branchTarget))
        block.successors.push_back(blockOf[*target]);
    bool fallsThrough =
        last.kind != InstrKind::EndProgram && (!isBranch || last.isConditional);
    if (fallsThrough && index + 1 < blocks.size())
      block.successors.push_back(index + 1);
  }
  return blocks;
}

std::vector<llvm::SmallVector<size_t, 2>>
tessel::getPredecessors(const std::vector<BasicBlock> &blocks) {
  std::vector<llvm::SmallVector<size_t, 2>> predecessors(blocks.size());
  for (auto [index, block] : llvm::enumerate(blocks))
    for (size_t successor : block.successors)
      predecessors[successor].push_back(index);
  return predecessors;
}
