//===- ControlFlow.h - Basic blocks of a disassembled kernel ----*- C++ -*-===//
//
// Internal to lib/Perf: the loop finder and the LDS address analysis both
// walk the kernel's control-flow graph.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_PERF_CONTROLFLOW_H
#define TESSEL_LIB_PERF_CONTROLFLOW_H

#include "tessel/Perf/Disassembly.h"

#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace tessel {

/// A basic block: instructions [begin, end) and its successors.
struct BasicBlock {
  size_t begin = 0, end = 0;
  llvm::SmallVector<size_t, 2> successors;
};

/// Splits the kernel into basic blocks at branch targets and after branches.
std::vector<BasicBlock> buildBasicBlocks(const KernelCode &code);

/// The predecessors of every block.
std::vector<llvm::SmallVector<size_t, 2>>
getPredecessors(const std::vector<BasicBlock> &blocks);

} // namespace tessel

#endif // TESSEL_LIB_PERF_CONTROLFLOW_H
