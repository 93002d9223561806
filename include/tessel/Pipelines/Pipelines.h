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
/// for HSACO emission: problem ops (L0) become tile programs (L1) and
/// per-lane kernels (L2, buildTesselToGPUPipeline), which become ROCDL (L3,
/// buildGPUToROCDLPipeline). Input already at L2 passes the first half
/// untouched.
void buildTesselToROCDLPipeline(mlir::OpPassManager &pm,
                                const TesselToROCDLOptions &options);
/// L0 -> L2: select-config, tile, select-mfma, promote-lds, pipeline,
/// lower-to-gpu.
void buildTesselToGPUPipeline(mlir::OpPassManager &pm,
                              const TesselToROCDLOptions &options);
/// L2 -> L3: the upstream GPU/AMDGPU to ROCDL conversions.
void buildGPUToROCDLPipeline(mlir::OpPassManager &pm,
                             const TesselToROCDLOptions &options);

/// Registers `tessel-to-rocdl` with the pass registry.
void registerTesselPipelines();

} // namespace tessel

#endif // TESSEL_PIPELINES_PIPELINES_H
