//===- TileSupport.h - Shared pieces of the tile programs -------*- C++ -*-===//
//
// What the tile programs of tessel-tile (Tile.cpp, TileAttentionGrad.cpp)
// share: the target facts tiling needs, the MFMA/WMMA layout of a config,
// the memref views the programs read and write through, and the
// bookkeeping that turns a problem function into a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_LIB_DIALECT_TESSEL_TRANSFORMS_TILESUPPORT_H
#define TESSEL_LIB_DIALECT_TESSEL_TRANSFORMS_TILESUPPORT_H

#include "tessel/Dialect/Tessel/IR/TesselOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace tessel {

/// min(x, limit) of two key or step indices, computed in 32 bits (both are
/// element indices of one tensor dimension, which fit): the uniform
/// compare is then a scalar one (gfx9 has no 64-bit unsigned scalar
/// compare, and LLVM takes a VALU compare for the index's 64 bits).
inline mlir::Value minIndexIn32Bits(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value x, mlir::Value limit) {
  auto narrow = [&](mlir::Value v) -> mlir::Value {
    return mlir::arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v);
  };
  mlir::Value least =
      mlir::arith::MinUIOp::create(b, loc, narrow(x), narrow(limit));
  return mlir::arith::IndexCastUIOp::create(b, loc, b.getIndexType(), least);
}

/// What tiling needs of the target chip.
struct TileTarget {
  unsigned xcds = 1;      // XCDs (L2s) the workgroups are spread over
  unsigned waveSize = 64; // lanes per wave
  std::string chip;       // empty when no chip was given
};

/// What every tiler writes its program with: a builder at the problem op
/// the program replaces, and integer (index or i32) arithmetic, one op per
/// call, so that a statement creating several ops orders them itself.
class TileProgramBuilder {
protected:
  explicit TileProgramBuilder(mlir::Operation *problem)
      : b(problem), loc(problem->getLoc()),
        kernel(problem->getParentOfType<mlir::func::FuncOp>()) {}

  mlir::Value constIndex(int64_t value) {
    return mlir::arith::ConstantIndexOp::create(b, loc, value);
  }
  mlir::Value dim(mlir::Value memref, int64_t index) {
    return mlir::memref::DimOp::create(b, loc, memref, index);
  }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, loc, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubIOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, loc, x, y);
  }
  mlir::Value div(mlir::Value x, mlir::Value y) {
    return mlir::arith::DivUIOp::create(b, loc, x, y);
  }
  mlir::Value rem(mlir::Value x, mlir::Value y) {
    return mlir::arith::RemUIOp::create(b, loc, x, y);
  }
  mlir::Value less(mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::ult,
                                       x, y);
  }
  mlir::Value equal(mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::eq,
                                       x, y);
  }
  mlir::Value select(mlir::Value condition, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, loc, condition, x, y);
  }

  /// The workgroup's ids along grid x, y and z, in that order.
  std::tuple<mlir::Value, mlir::Value, mlir::Value> gridProgramIds();
  /// The (block, head, batch) of this workgroup when blocks of unequal work
  /// run longest first. The grid stays (blocks, heads, batch), but flat id
  /// i (x fastest) runs block position i / (heads x batch), counted from
  /// the last block if `fromLast`, of head and batch i mod (heads x
  /// batch): every head's block of one position runs before the next
  /// position's, so the short blocks come last and fill the slots that
  /// free first (the hardware starts workgroups in id order as slots free;
  /// longest processing time first). Consecutive ids are different heads:
  /// with heads x batch a multiple of the XCD count, all blocks of a head
  /// land on one XCD (ids go round-robin over them) and share its L2.
  /// Marks the function `tessel.longest_first` for the runtime's grid rule.
  std::tuple<mlir::Value, mlir::Value, mlir::Value>
  longestBlocksFirst(mlir::Value blocks, mlir::Value heads, mlir::Value batches,
                     bool fromLast);

  mlir::OpBuilder b;
  mlir::Location loc;
  /// The function the program is written into (the kernel to be).
  mlir::func::FuncOp kernel;
};

/// The `#tessel.mma` layout of instruction `name` over `waves`: WMMA names
/// carry the chip (their layouts differ between gfx11 and gfx12), MFMA ones
/// do not need it. `transposed`: see #tessel.mma.
mlir::FailureOr<MmaAttr> getMmaLayout(mlir::Operation *op, llvm::StringRef name,
                                      llvm::ArrayRef<int64_t> waves,
                                      const TileTarget &target,
                                      bool transposed = false);

/// Whether a matmul writing `c` with instruction `name` takes the transposed
/// accumulator layout: a square MFMA and a C whose rows are contiguous, so
/// that each lane stores runs along N (the hardware layout runs along M).
bool storesTransposedAccumulator(mlir::MemRefType c, llvm::StringRef name);

/// Records on the kernel function what lowering and launching need (lanes
/// per workgroup, the output tile of one workgroup, the configuration) and
/// removes the problem op it was tiled from.
void finishKernel(mlir::Operation *problem, int64_t lanes,
                  llvm::ArrayRef<int64_t> tile, ConfigAttr config);

/// Workgroup `linear` of `total` renumbered so that the workgroups one XCD
/// runs (consecutive ids go round-robin over the `xcds` XCDs) take
/// consecutive numbers, so that neighbouring tiles share an L2.
mlir::Value remapOverXcds(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value linear, mlir::Value total, unsigned xcds);

/// `memref` with its last two dimensions swapped (a tile's transpose).
mlir::Value transposedView(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value memref);

/// A view of the buffer `metadata` describes (at its offset) with these
/// sizes and strides, static in its type where they are known before run
/// time.
mlir::Value stridedView(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::memref::ExtractStridedMetadataOp metadata,
                        mlir::Type element,
                        llvm::ArrayRef<mlir::OpFoldResult> sizes,
                        llvm::ArrayRef<mlir::OpFoldResult> strides);

/// `memref` with a stride-0 dimension inserted before dimension `position`
/// (of size `width`, or 1 without one). At the end, a [.., rows, 1] view:
/// storing a tile there writes its column 0 only, and a [.., rows, width]
/// view repeats each row's value. Before the last, a [.., 1, queries] view
/// of a [.., queries] memref (the logsumexp): a statistic tile of one row
/// stores there.
mlir::Value unitDimView(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value memref, int64_t position,
                        mlir::Value width = {});

/// `type`'s strides, dynamic where its layout does not fix them.
llvm::SmallVector<int64_t> getStaticStrides(mlir::MemRefType type);

/// Varlen: sequence `sequence`'s rows of a packed array of `total` rows,
/// from the cumulative lengths `cumulative` (i32): rows cu[b] to cu[b + 1],
/// both clamped to [0, total], as (start, length).
std::pair<mlir::Value, mlir::Value>
getSequenceRange(mlir::OpBuilder &b, mlir::Location loc, mlir::Value cumulative,
                 mlir::Value sequence, mlir::Value total);

/// `memref`'s rows [start, start + length) of dimension 2 (the sequence),
/// keeping its static sizes (but the rows') and strides: the lowering
/// vectorizes along a statically contiguous dimension.
mlir::Value getRowRange(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value memref, mlir::Value start,
                        mlir::Value length);

/// Replaces `function`, which holds `op`, by the backward plan's two
/// kernels `<name>__dq` and `<name>__dkdv` (TileAttentionGrad.cpp).
mlir::LogicalResult tileAttentionGrad(mlir::func::FuncOp function,
                                      AttentionGradOp op,
                                      const TileTarget &target);

} // namespace tessel

#endif // TESSEL_LIB_DIALECT_TESSEL_TRANSFORMS_TILESUPPORT_H
