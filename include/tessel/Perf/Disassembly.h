//===- Disassembly.h - A kernel's machine code, classified ------*- C++ -*-===//
//
// Reads one kernel of an AMDGPU code object (any producer: Tessel, hipcc,
// clang, hand-written assembly) with LLVM's MC disassembler, in process, and
// classifies every instruction by the pipe it occupies: what the performance
// model needs and nothing more.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PERF_DISASSEMBLY_H
#define TESSEL_PERF_DISASSEMBLY_H

#include "tessel/Target/Mma.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

struct Chip;

/// The pipe or event an instruction stands for.
enum class InstrKind {
  Matrix,         ///< v_mfma*, v_smfmac*, v_wmma*, v_swmmac*
  Valu,           ///< other v_* at full rate
  Transcendental, ///< v_exp, v_log, v_rcp, v_rsq, v_sqrt, v_sin, v_cos
  Salu,           ///< s_* arithmetic and moves
  LdsRead,        ///< ds_read*, ds_load*, ds_bpermute...
  LdsWrite,       ///< ds_write*, ds_store*, ds atomics
  GlobalLoad,     ///< global_/buffer_/flat_ loads (incl. loads to LDS)
  GlobalStore,    ///< global_/buffer_/flat_ stores and atomics
  ScalarLoad,     ///< s_load*, s_buffer_load*
  Wait,           ///< s_waitcnt and the gfx12 s_wait_* counters
  Barrier,        ///< s_barrier (and the gfx12 split barrier wait)
  Branch,         ///< s_branch, s_cbranch_*, s_setpc
  SetPriority,    ///< s_setprio
  Nop,            ///< s_nop (its count in nopCycles), scheduling hints
  EndProgram,     ///< s_endpgm
  Other,
};

llvm::StringRef stringifyInstrKind(InstrKind kind);

/// Counter values an s_waitcnt waits for; unset counters are not waited on.
struct WaitCounts {
  std::optional<unsigned> vm;   ///< vector memory (loads; stores too on gfx9)
  std::optional<unsigned> lgkm; ///< LDS, scalar memory, messages
  std::optional<unsigned> vs;   ///< vector stores (gfx10+)
};

struct Instruction {
  uint64_t address = 0; ///< offset from the kernel's entry
  unsigned size = 0;
  std::string text;     ///< as LLVM prints it
  std::string mnemonic; ///< first word of `text`
  InstrKind kind = InstrKind::Other;
  /// Matrix instructions: cycles the matrix pipe is busy and FLOPs.
  unsigned matrixCycles = 0;
  uint64_t matrixFlops = 0;
  /// A matrix instruction that only zeroes its destination (see
  /// markAccumulatorZeroing): it occupies the matrix pipe but does none of
  /// the problem's work, so its FLOPs are 0 and the model does not count
  /// its cycles as busy.
  bool zeroesAccumulator = false;
  /// A VALU instruction that does not issue while a matrix instruction of
  /// its own wave executes (waitsForOwnMatrix in Disassembly.cpp): it waits
  /// for the product to finish.
  bool waitsForMatrix = false;
  /// Memory instructions: bytes moved per lane.
  unsigned bytesPerLane = 0;
  /// Branches: target offset from the kernel's entry.
  std::optional<uint64_t> branchTarget;
  bool isConditional = false;
  WaitCounts wait;
  unsigned nopCycles = 0;
  /// LDS accesses through the banks (LdsConflicts.h) and, when their
  /// per-lane addresses were derived, the cycles bank conflicts add to the
  /// access (averaged over the workgroup's waves) and the cycles of a
  /// conflict-free access.
  bool ldsBankAccess = false;
  std::optional<double> ldsConflictCycles;
  unsigned ldsPhases = 0;
};

struct KernelCode {
  std::string name;
  std::string processor; ///< the code object's processor, e.g. "gfx942"
  std::vector<Instruction> instructions;

  /// Index of the instruction at `address`, if one starts there.
  std::optional<size_t> indexAt(uint64_t address) const;
};

/// Disassembles kernel `kernel` of code object `codeObject` for `chip`.
llvm::Expected<KernelCode> disassembleKernel(llvm::ArrayRef<char> codeObject,
                                             llvm::StringRef kernel,
                                             const Chip &chip);

/// Classifies one printed instruction (exposed for tests).
Instruction classifyInstruction(llvm::StringRef text, const Chip &chip);

/// Marks the matrix instructions that zero an accumulator the way Tessel's
/// prologues do: both multiplicands from the same registers and the
/// accumulator input the constant 0 or the destination of the previous
/// such instruction (a chain of products of zeros). Called by
/// disassembleKernel; exposed for tests.
void markAccumulatorZeroing(std::vector<Instruction> &instructions);

} // namespace tessel

#endif // TESSEL_PERF_DISASSEMBLY_H
