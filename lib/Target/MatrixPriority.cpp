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
// The priority is set on the scheduled machine code: LLVM's AMDGPU
// scheduler treats s_setprio as a scheduling boundary, so placing the
// intrinsic in the IR would split the loop body into regions and undo the
// interleaving of LDS reads with the MFMAs. Inserting instructions never
// shortens the distance between two others, so the hazard padding the
// backend inserted stays valid.
//
//===----------------------------------------------------------------------===//

#include "tessel/Target/Hsaco.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace tessel;

/// Instructions (lines) between two MFMAs of one cluster at most.
static constexpr size_t kClusterGap = 12;

/// The label a line defines (".LBB0_1:"), or empty.
static llvm::StringRef definedLabel(llvm::StringRef line) {
  line = line.rtrim();
  if (!line.starts_with(".LBB") || !line.ends_with(":"))
    return {};
  return line.drop_back();
}

/// The label a conditional or unconditional branch line targets, or empty.
static llvm::StringRef branchTarget(llvm::StringRef line) {
  llvm::StringRef text = line.trim();
  if (!text.starts_with("s_cbranch_") && !text.starts_with("s_branch"))
    return {};
  llvm::StringRef target = text.rsplit(' ').second.trim();
  return target.starts_with(".LBB") ? target : llvm::StringRef();
}

static bool isMatrixInstruction(llvm::StringRef line) {
  return line.trim().starts_with("v_mfma") ||
         line.trim().starts_with("v_smfmac");
}

std::string tessel::raiseMatrixClusterPriority(llvm::StringRef assembly) {
  llvm::SmallVector<llvm::StringRef> lines;
  assembly.split(lines, '\n');
  llvm::DenseMap<llvm::StringRef, size_t> labels;
  for (auto [index, line] : llvm::enumerate(lines))
    if (llvm::StringRef label = definedLabel(line); !label.empty())
      labels[label] = index;
  // Clusters of MFMAs inside loops (a label and a later branch back to it):
  // runs in which consecutive MFMAs are at most kClusterGap lines apart.
  llvm::SmallVector<std::pair<size_t, size_t>> clusters;
  for (auto [end, line] : llvm::enumerate(lines)) {
    llvm::StringRef target = branchTarget(line);
    auto it = target.empty() ? labels.end() : labels.find(target);
    if (it == labels.end() || it->second >= end)
      continue;
    std::optional<std::pair<size_t, size_t>> cluster;
    for (size_t index = it->second; index < end; ++index) {
      if (!isMatrixInstruction(lines[index]))
        continue;
      if (cluster && index - cluster->second <= kClusterGap) {
        cluster->second = index;
        continue;
      }
      if (cluster)
        clusters.push_back(*cluster);
      cluster = {index, index};
    }
    if (cluster)
      clusters.push_back(*cluster);
  }
  if (clusters.empty())
    return assembly.str();
  llvm::DenseMap<size_t, bool> raiseBefore, lowerAfter;
  for (auto [first, last] : clusters) {
    raiseBefore[first] = true;
    lowerAfter[last] = true;
  }
  std::string result;
  result.reserve(assembly.size() + clusters.size() * 32);
  for (auto [index, line] : llvm::enumerate(lines)) {
    if (raiseBefore.count(index))
      result += "\ts_setprio 1\n";
    result += line;
    if (index + 1 < lines.size())
      result += '\n';
    if (lowerAfter.count(index))
      result += "\ts_setprio 0\n";
  }
  return result;
}
