//===- TesselAttrs.h - tessel attributes ------------------------*- C++ -*-===//

#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_H
#define TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_H

#include "tessel/Layout/LinearLayout.h"
#include "tessel/Target/Mma.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/TensorEncoding.h"

#include "tessel/Dialect/Tessel/IR/TesselAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselAttrs.h.inc"

namespace tessel {
/// The linear layout `attr` gives a tile of `shape`, with the reason it does
/// not fit emitted through `emitError`.
llvm::FailureOr<LinearLayout>
getLinearLayout(mlir::Attribute attr, llvm::ArrayRef<int64_t> shape,
                llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Bounds on a tile: what one workgroup can hold. Tiles are at most 2^16
/// along a dimension and 2^20 elements in all.
constexpr int64_t kMaxTileDim = int64_t(1) << 16;
constexpr int64_t kMaxTileElements = int64_t(1) << 20;

/// Checks `shape` against the bounds above (static, positive sizes).
llvm::LogicalResult
verifyTileShape(llvm::ArrayRef<int64_t> shape,
                llvm::function_ref<mlir::InFlightDiagnostic()> emitError);
} // namespace tessel

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_H
