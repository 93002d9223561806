//===- ChipIntrinsics.h - Intrinsics a chip lacks, before codegen -*- C++
//-*-===//
//
// The AMDGPU backend aborts the whole process ("LLVM ERROR: Cannot select")
// when a kernel calls an intrinsic its chip does not have. Hand-written
// gpu.modules can do that, so every module is checked against the chip first
// and such a call is a diagnostic at the op instead.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TARGET_CHIPINTRINSICS_H
#define TESSEL_TARGET_CHIPINTRINSICS_H

#include "tessel/Target/Chip.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace tessel {

/// Emits an error at every ROCDL op in `module` that `chip` is known not to
/// have: lane permutes of other architectures, and matrix instructions the
/// catalogue lists for other chips only. Ops it knows nothing about are left
/// to the backend.
mlir::LogicalResult verifyIntrinsicsForChip(mlir::gpu::GPUModuleOp module,
                                            const Chip &chip);

} // namespace tessel

#endif // TESSEL_TARGET_CHIPINTRINSICS_H
