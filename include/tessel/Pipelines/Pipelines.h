//===- Pipelines.h - Named Tessel pass pipelines ----------------*- C++ -*-===//
//
// The pipelines tesselc, the JIT and `tessel-opt --tessel-to-rocdl` share, so
// that any compile can be reproduced pass by pass from the command line.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PIPELINES_PIPELINES_H
#define TESSEL_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace tessel {

struct TesselToROCDLOptions
    : public mlir::PassPipelineOptions<TesselToROCDLOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target chip (gfx90a, gfx942, ...)"),
                           llvm::cl::init("gfx942")};
};

/// Lowers a module to gpu.module kernels in the LLVM and ROCDL dialects, ready
/// for HSACO emission. Today it starts at the per-lane GPU level (L2:
/// gpu/amdgpu/vector/memref/arith/math/scf); the tile-level passes join it
/// in front as they land.
void buildTesselToROCDLPipeline(mlir::OpPassManager &pm,
                                const TesselToROCDLOptions &options);

/// Registers `tessel-to-rocdl` with the pass registry.
void registerTesselPipelines();

} // namespace tessel

#endif // TESSEL_PIPELINES_PIPELINES_H
