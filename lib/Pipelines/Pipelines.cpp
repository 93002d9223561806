//===- Pipelines.cpp - Named Tessel pass pipelines --------------*- C++ -*-===//

#include "tessel/Pipelines/Pipelines.h"

#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tessel::buildTesselToROCDLPipeline(OpPassManager &pm,
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

void tessel::registerTesselPipelines() {
  PassPipelineRegistration<TesselToROCDLOptions>(
      "tessel-to-rocdl",
      "Lower Tessel kernels to gpu.module code in the LLVM/ROCDL dialects",
      buildTesselToROCDLPipeline);
}
