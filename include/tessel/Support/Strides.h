//===- Strides.h - Dense strides for a memref's layout ----------*- C++ -*-===//
//
// A memref type fixes some strides statically and leaves others dynamic
// (`strided<[1, ?]>` for a column-major operand whose leading dimension is a
// run-time size). A caller that hands over a dense array of a given shape
// needs the dynamic strides filled in the order the static ones imply, never
// as a row-major default: that default silently reads a column-major operand
// with overlapping elements.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_STRIDES_H
#define TESSEL_SUPPORT_STRIDES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace tessel {

/// The strides of a dense array of `shape` laid out as `layoutStrides` says
/// (a negative entry is a dynamic stride). Innermost first: the dimensions
/// with static strides in increasing order of stride, then the dynamic ones
/// from the last dimension to the first (row-major among themselves). Each
/// dynamic stride is the extent of the dimensions inside it. Static strides
/// are kept as they are. Empty if a size is negative or a product overflows
/// int64.
std::optional<llvm::SmallVector<int64_t, 4>>
denseStrides(llvm::ArrayRef<int64_t> shape,
             llvm::ArrayRef<int64_t> layoutStrides);

/// Elements a strided array of `shape` spans from its offset: 1 + the sum of
/// (size - 1) * stride, or 0 when it has no element. Empty on overflow or a
/// negative size or stride.
std::optional<int64_t> stridedExtent(llvm::ArrayRef<int64_t> shape,
                                     llvm::ArrayRef<int64_t> strides);

} // namespace tessel

#endif // TESSEL_SUPPORT_STRIDES_H
