//===- Pipelines.cpp - Named Tessel pass pipelines --------------*- C++ -*-===//

#include "tessel/Pipelines/Pipelines.h"
#include "tessel/Conversion/Passes.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tessel::buildTesselToGPUPipeline(OpPassManager &pm,
                                      const TesselToROCDLOptions &options) {
  // L0 -> L1: problem ops to tile programs, distributed and pipelined.
  pm.nest<func::FuncOp>().addPass(createTesselSelectConfigPass({options.chip}));
  pm.addPass(createTesselTilePass({options.chip}));
  OpPassManager &funcPM = pm.nest<func::FuncOp>();
  funcPM.addPass(createTesselSelectMfmaPass({options.chip}));
  funcPM.addPass(createTesselPromoteLdsPass({options.chip}));
  funcPM.addPass(createTesselPipelinePass());
  funcPM.addPass(createCanonicalizerPass());
  funcPM.addPass(createCSEPass());
  // L1 -> L2: per-lane GPU kernels.
  pm.addPass(createTesselLowerToGPUPass({options.chip}));
}

void tessel::buildGPUToROCDLPipeline(OpPassManager &pm,
                                     const TesselToROCDLOptions &options) {
  OpPassManager &gpuModulePM = pm.nest<gpu::GPUModuleOp>();
  gpuModulePM.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToROCDLOpsOptions rocdlOptions;
  rocdlOptions.chipset = options.chip;
  rocdlOptions.runtime = gpu::amd::Runtime::HIP;
  gpuModulePM.addPass(createConvertGpuOpsToROCDLOps(rocdlOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  gpuModulePM.addPass(createCanonicalizerPass());
  gpuModulePM.addPass(createCSEPass());
}

void tessel::buildTesselToROCDLPipeline(OpPassManager &pm,
                                        const TesselToROCDLOptions &options) {
  buildTesselToGPUPipeline(pm, options);
  buildGPUToROCDLPipeline(pm, options);
}

void tessel::registerTesselPipelines() {
  PassPipelineRegistration<TesselToROCDLOptions>(
      "tessel-to-rocdl",
      "Lower Tessel kernels to gpu.module code in the LLVM/ROCDL dialects",
      buildTesselToROCDLPipeline);
}
