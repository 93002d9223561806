//===- MatrixPriority.cpp - s_setprio around MFMA clusters ----------------===//
//
// Two waves share a SIMD in Tessel's attention and matmul kernels: while one
// issues its matrix instructions, the other's VALU and memory work should
// fill the issue slots. Raising a wave's priority while it issues a
// cluster of MFMAs (s_setprio 1 ... s_setprio 0) makes the arbiter finish
// the cluster first, so the two waves fall into alternating phases (the
// ping-pong of expert kernels) instead of interleaving instruction by
// instruction.
//
// The priority is set on the final machine code, by a machine pass that runs
// after every pass of the AMDGPU backend and right before the asm printer:
// LLVM's AMDGPU scheduler treats s_setprio as a scheduling boundary, so
// placing the intrinsic in the IR would split the loop body into regions and
// undo the interleaving of LDS reads with the MFMAs. Inserting instructions
// never shortens the distance between two others, so the hazard padding the
// backend inserted stays valid.
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/Hsaco.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/CodeGen/MachineFunctionPass.h"
#include "llvm/CodeGen/MachineInstrBuilder.h"
#include "llvm/CodeGen/TargetInstrInfo.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"

#include <optional>

using namespace tessel;

/// Vector and memory instructions (lines of the printed code) between two
/// MFMAs of one cluster at most. Scalar instructions (a block's clamped
/// buffer offsets, waits) do not count: they do not keep the other wave
/// of the SIMD from issuing.
static constexpr size_t kClusterGap = 12;

llvm::SmallVector<std::pair<size_t, size_t>>
tessel::findMatrixClusters(llvm::ArrayRef<CodeLine> lines) {
  llvm::DenseMap<int, size_t> labels;
  for (auto [index, line] : llvm::enumerate(lines))
    if (line.definesLabel >= 0)
      labels[line.definesLabel] = index;
  // Clusters of MFMAs inside loops (a label and a later branch back to it):
  // runs in which consecutive MFMAs are at most kClusterGap vector or memory
  // lines apart.
  llvm::SmallVector<std::pair<size_t, size_t>> clusters;
  for (auto [end, line] : llvm::enumerate(lines)) {
    auto it = line.branchesTo < 0 ? labels.end() : labels.find(line.branchesTo);
    if (it == labels.end() || it->second >= end)
      continue;
    std::optional<std::pair<size_t, size_t>> cluster;
    size_t gap = 0; // non-scalar lines since the cluster's last MFMA
    for (size_t index = it->second; index < end; ++index) {
      if (!lines[index].isMatrix) {
        gap += !lines[index].isScalar;
        continue;
      }
      if (cluster && gap < kClusterGap) {
        cluster->second = index;
        gap = 0;
        continue;
      }
      if (cluster)
        clusters.push_back(*cluster);
      cluster = {index, index};
      gap = 0;
    }
    if (cluster)
      clusters.push_back(*cluster);
  }
  return clusters;
}

namespace {

/// The machine pass: lays the function out as the asm printer will print it
/// (a line per block label and per emitted instruction), finds the clusters
/// and brackets each with s_setprio.
class MatrixClusterPriority : public llvm::MachineFunctionPass {
public:
  static char ID;
  MatrixClusterPriority() : llvm::MachineFunctionPass(ID) {}

  llvm::StringRef getPassName() const override {
    return "Tessel: wave priority around matrix clusters";
  }

  void getAnalysisUsage(llvm::AnalysisUsage &usage) const override {
    usage.setPreservesCFG();
    llvm::MachineFunctionPass::getAnalysisUsage(usage);
  }

  bool runOnMachineFunction(llvm::MachineFunction &function) override;
};

} // namespace

char MatrixClusterPriority::ID = 0;

/// The opcode named `name` (the AMDGPU instruction tables are not installed
/// with LLVM, so opcodes are looked up by name).
static std::optional<unsigned> findOpcode(const llvm::TargetInstrInfo &info,
                                          llvm::StringRef name) {
  for (unsigned opcode = 0, e = info.getNumOpcodes(); opcode < e; ++opcode)
    if (info.getName(opcode) == name)
      return opcode;
  return std::nullopt;
}

static bool isMatrixInstruction(const llvm::TargetInstrInfo &info,
                                const llvm::MachineInstr &instr) {
  llvm::StringRef name = info.getName(instr.getOpcode());
  return name.starts_with("V_MFMA") || name.starts_with("V_SMFMAC");
}

/// A scalar instruction that lets the other wave issue (SALU, waits): not
/// a barrier, where the workgroup meets.
static bool isScalarInstruction(const llvm::TargetInstrInfo &info,
                                const llvm::MachineInstr &instr) {
  llvm::StringRef name = info.getName(instr.getOpcode());
  return name.starts_with("S_") && !name.starts_with("S_BARRIER");
}

/// Whether the instruction printed before `position` in its block is an
/// s_setprio of `priority` (the phase barriers of a ping-pong loop raise
/// the priority themselves; scheduling barriers between print nothing).
static bool followsSetPriority(const llvm::TargetInstrInfo &info,
                               llvm::MachineBasicBlock &block,
                               llvm::MachineBasicBlock::instr_iterator position,
                               unsigned setPriority, int64_t priority) {
  while (position != block.instr_begin()) {
    const llvm::MachineInstr &before = *--position;
    if (before.isBundle() || info.getInstSizeInBytes(before) == 0)
      continue;
    return before.getOpcode() == setPriority && before.getOperand(0).isImm() &&
           before.getOperand(0).getImm() == priority;
  }
  return false;
}

/// The block a branch instruction targets, or null.
static const llvm::MachineBasicBlock *
branchTarget(const llvm::MachineInstr &instr) {
  if (!instr.isBranch())
    return nullptr;
  for (const llvm::MachineOperand &operand : instr.operands())
    if (operand.isMBB())
      return operand.getMBB();
  return nullptr;
}

bool MatrixClusterPriority::runOnMachineFunction(
    llvm::MachineFunction &function) {
  const llvm::TargetInstrInfo &info = *function.getSubtarget().getInstrInfo();
  // Blocks the printer gives a label: those some branch targets.
  llvm::DenseSet<const llvm::MachineBasicBlock *> labelled;
  for (llvm::MachineBasicBlock &block : function)
    for (llvm::MachineInstr &instr : block.terminators())
      if (const llvm::MachineBasicBlock *target = branchTarget(instr))
        labelled.insert(target);
  // The printed lines: meta instructions (size 0) and bundle headers print
  // nothing.
  llvm::SmallVector<CodeLine> lines;
  llvm::SmallVector<llvm::MachineInstr *> instrs;
  for (llvm::MachineBasicBlock &block : function) {
    if (labelled.contains(&block)) {
      lines.push_back({/*isMatrix=*/false, block.getNumber(), -1});
      instrs.push_back(nullptr);
    }
    for (llvm::MachineInstr &instr : block.instrs()) {
      if (instr.isBundle() || info.getInstSizeInBytes(instr) == 0)
        continue;
      const llvm::MachineBasicBlock *target = branchTarget(instr);
      lines.push_back({isMatrixInstruction(info, instr), -1,
                       target ? target->getNumber() : -1,
                       isScalarInstruction(info, instr)});
      instrs.push_back(&instr);
    }
  }
  llvm::SmallVector<std::pair<size_t, size_t>> clusters =
      findMatrixClusters(lines);
  if (clusters.empty())
    return false;
  std::optional<unsigned> setPriority = findOpcode(info, "S_SETPRIO");
  if (!setPriority)
    return false;
  // A line may open or close several (nested loops') clusters: one
  // s_setprio each way.
  llvm::DenseSet<llvm::MachineInstr *> raiseBefore, lowerAfter;
  for (auto [first, last] : clusters) {
    raiseBefore.insert(instrs[first]);
    lowerAfter.insert(instrs[last]);
  }
  auto insert = [&](llvm::MachineInstr *at, bool after, int64_t priority) {
    llvm::MachineBasicBlock &block = *at->getParent();
    llvm::MachineBasicBlock::instr_iterator position = at->getIterator();
    if (after)
      ++position;
    if (followsSetPriority(info, block, position, *setPriority, priority))
      return;
    llvm::BuildMI(block, position, llvm::DebugLoc(), info.get(*setPriority))
        .addImm(priority);
  };
  for (llvm::MachineInstr *instr : raiseBefore)
    insert(instr, /*after=*/false, 1);
  for (llvm::MachineInstr *instr : lowerAfter)
    insert(instr, /*after=*/true, 0);
  return true;
}

llvm::Pass *tessel::createMatrixClusterPriorityPass() {
  return new MatrixClusterPriority();
}
