//===- Layouts.h - Named layouts and the LDS swizzle chooser ----*- C++ -*-===//
//
// Constructors of the linear layouts the compiler names: blocked layouts for
// coalesced global access, swizzled LDS layouts, and the chooser that picks
// the swizzle with the fewest bank conflicts for a tile's LDS write and read.
// The matrix-instruction layouts are in tessel/Target/Mma.h.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LAYOUT_LAYOUTS_H
#define TESSEL_LAYOUT_LAYOUTS_H

#include "tessel/Layout/LinearLayout.h"

#include <optional>

namespace tessel {

/// A blocked layout over a tile of `shape`: each lane holds `sizePerThread`
/// consecutive elements per dimension, lanes and then waves tile the
/// dimensions in `order` (fastest first). A tile larger than the covered
/// block repeats it in further registers; a smaller one is replicated
/// (several lanes hold the same element).
llvm::Expected<LinearLayout> blockedLayout(
    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> sizePerThread,
    llvm::ArrayRef<int64_t> threadsPerWave,
    llvm::ArrayRef<int64_t> wavesPerWorkgroup, llvm::ArrayRef<int64_t> order);

/// An LDS layout (`offset` -> tile) for a 2-D tile whose dimension `order[0]`
/// is contiguous: element (r, c) lives at r * C + ((c / vec) ^ phase(r)) * vec
/// + c % vec with phase(r) = (r / perPhase) % maxPhase. maxPhase = 1 is the
/// plain row-major (or column-major) layout. With `fold`, the phase XORs
/// together every log2(maxPhase)-bit piece of r / perPhase instead of
/// keeping the lowest (see #tessel.swizzle).
llvm::Expected<LinearLayout> swizzledLdsLayout(llvm::ArrayRef<int64_t> shape,
                                               int64_t vec, int64_t perPhase,
                                               int64_t maxPhase,
                                               llvm::ArrayRef<int64_t> order,
                                               bool fold = false);

struct SwizzleQuery {
  llvm::SmallVector<int64_t, 2> shape; ///< the LDS tile
  llvm::SmallVector<int64_t, 2> order; ///< contiguous dimension first
  unsigned elementBytes = 2;
  unsigned storeBytes = 16; ///< per-lane width of the LDS write
  unsigned numWaves = 1;    ///< waves writing the tile
  LinearLayout readLayout;  ///< register layout reading the tile
  unsigned readBytes = 16;  ///< per-lane width of the LDS read
  LdsBanking banking;
  unsigned waveSize = 64;
  /// The register layout writing the tile, when it is not the coalesced one
  /// ldsWriteLayout describes (a tile written along its strided dimension).
  std::optional<LinearLayout> writeLayout;
};

/// Queries asking the same question (a kernel's key loops promote the same
/// tiles each).
bool operator==(const SwizzleQuery &a, const SwizzleQuery &b);

struct SwizzleChoice {
  int64_t vec = 1, perPhase = 1, maxPhase = 1;
  bool fold = false;
  BankConflictReport write, read;
  LinearLayout
      writeLayout; ///< the coalesced layout the write was analysed with
  unsigned totalConflicts() const {
    return write.conflictCycles + read.conflictCycles;
  }
};

/// The layout of the write side of a query: each lane stores `storeBytes`
/// along the contiguous dimension, lanes along it first, waves along the
/// other dimension.
llvm::Expected<LinearLayout> ldsWriteLayout(const SwizzleQuery &query);

/// Searches every power-of-two (vec, perPhase, maxPhase), plain and folded,
/// whose read and write stay vector accesses and returns the one with the
/// fewest bank conflicts of the two together (ties: the smallest maxPhase,
/// then the largest vec, then the plain phase).
llvm::Expected<SwizzleChoice> chooseSwizzle(const SwizzleQuery &query);

/// The layout of the addresses a transposing LDS read (gfx950's
/// `ds_read_b64_tr_b16`) must be given so that its lanes receive `target`.
/// The instruction works on groups of 16 lanes: lane i of a group reads four
/// 16-bit elements at its address, and lane j then holds, as its element e,
/// element j % 4 of what lane 4e + j / 4 read. So the address layout is
/// `target` with its register bits 0-1 and lane bits 0-3 rotated: the
/// target's lane bits 0-1 become the address layout's register bits 0-1 (the
/// four elements one lane reads), its lane bits 2-3 the address layout's
/// lane bits 0-1, and its register bits 0-1 the address layout's lane bits
/// 2-3. Register r of the read's result is element r of the address
/// layout's four-element access r & ~3 (docs/hardware.md §7b). Fails when
/// `target` has fewer than 4 registers or 16 lanes.
llvm::Expected<LinearLayout> transposedReadLayout(const LinearLayout &target);

} // namespace tessel

#endif // TESSEL_LAYOUT_LAYOUTS_H
