//===- InitAllDialects.h - Dialects every Tessel tool parses ----*- C++ -*-===//

#ifndef TESSEL_INITALLDIALECTS_H
#define TESSEL_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tessel {

/// The tessel dialect and the upstream dialects Tessel IR is made of, at
/// every level: func/arith/math/memref/scf (L0-L1), gpu/amdgpu/vector (L2),
/// llvm/rocdl (L3), plus their LLVM IR translations.
void registerAllDialects(mlir::DialectRegistry &registry);

/// The tessel passes and pipelines, and the upstream passes they build on.
void registerAllPasses();

} // namespace tessel

#endif // TESSEL_INITALLDIALECTS_H
