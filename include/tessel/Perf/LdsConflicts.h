//===- LdsConflicts.h - LDS bank conflicts from machine code ----*- C++ -*-===//
//
// Derives the per-lane byte address of every LDS access of a kernel from
// its work-item ids, by abstract interpretation of the integer code that
// computes the address, and counts each access's bank conflicts with the
// phase rules the swizzle chooser uses (countLdsConflictCycles). Works on
// any code object: it reads the machine code, not Tessel's IR.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PERF_LDSCONFLICTS_H
#define TESSEL_PERF_LDSCONFLICTS_H

#include "tessel/Perf/Disassembly.h"

#include <array>
#include <vector>

namespace tessel {

struct Chip;

/// The bank conflicts of one LDS instruction.
struct LdsConflict {
  size_t instruction = 0; ///< index into KernelCode::instructions
  /// Whether every analysed wave's per-lane addresses followed from the
  /// work-item ids (else the access is not counted, never guessed).
  bool derived = false;
  /// LDS cycles of a conflict-free access (its phases), and the cycles the
  /// conflicts add, averaged over the workgroup's waves.
  unsigned phases = 0;
  double extraCycles = 0;
  /// phases + extra over phases: 1 for conflict-free, 32 when every lane
  /// of a 32-lane phase hits one bank.
  double ways() const { return phases ? (phases + extraCycles) / phases : 1; }
};

/// Every LDS load and store of `code` on `chip` (ds_read*/ds_write* and
/// their read2/write2 forms, ds_load*/ds_store*, LDS atomics), for a
/// workgroup of `block` lanes (x, y, z) in waves of `waveSize`. Cross-lane
/// operations that do not address banks (ds_swizzle, ds_bpermute) and
/// transposing reads are not listed.
std::vector<LdsConflict> analyzeLdsConflicts(const KernelCode &code,
                                             const Chip &chip,
                                             std::array<uint64_t, 3> block,
                                             unsigned waveSize);

} // namespace tessel

#endif // TESSEL_PERF_LDSCONFLICTS_H
