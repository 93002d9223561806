//===- Perf.h - The performance model on compiled Tessel kernels -*- C++
//-*-===//
//
// Fills in what tessel-perf asks a user for (the launch, the FLOPs, the bytes)
// from a compiled kernel's launch facts and its problem's sizes, then runs
// the model of tessel/Perf/Model.h on its code object.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_RUNTIME_PERF_H
#define TESSEL_RUNTIME_PERF_H

#include "tessel/Perf/Model.h"
#include "tessel/Runtime/Compiler.h"
#include "tessel/Support/KeyWindow.h"

#include "llvm/ADT/StringMap.h"

namespace tessel {

/// Sizes of the problem's named dimensions ("m", "n", "k", "batch", "heads",
/// "kv_heads", "seq_q", "seq_kv", "head_dim").
using DimensionSizes = llvm::StringMap<int64_t>;

/// The sizes the kernel's static argument shapes fix.
DimensionSizes getStaticDimensions(const CompiledKernel &kernel);

DimensionSizes getDimensions(const MatmulProblem &problem);
DimensionSizes getDimensions(const AttentionProblem &problem);

/// The useful FLOPs and the bytes of the arrays the kernel touches (a split
/// plan's stages: inputs or outputs, and the workspaces); an attention's
/// FLOPs count only the (query, key) pairs its `window` keeps.
ProblemWork getProblemWork(const CompiledKernel &kernel,
                           const DimensionSizes &sizes, KeyWindow window = {});

/// Predicts `kernel` of `module` over a problem of `sizes`.
llvm::Expected<PerfReport>
predictPerformance(const CompiledModule &module, const CompiledKernel &kernel,
                   const DimensionSizes &sizes, KeyWindow window = {},
                   const ModelParameters &parameters = {});

} // namespace tessel

#endif // TESSEL_RUNTIME_PERF_H
