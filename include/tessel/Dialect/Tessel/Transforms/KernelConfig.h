//===- KernelConfig.h - Matmul kernel configurations ------------*- C++ -*-===//
//
// The choices behind a matmul kernel (tiles, waves, stages, instruction) and
// the resource budgets they are checked against, shared by the passes that
// make and use them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELCONFIG_H
#define TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELCONFIG_H

#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"
#include "tessel/Target/Chip.h"
#include "tessel/Target/Mma.h"

#include "mlir/IR/BuiltinTypes.h"

namespace tessel {

/// The MmaElement of an MLIR element type, if it has one.
std::optional<MmaElement> getMmaElement(mlir::Type type);

/// The best matrix instruction of `chip` for A/B element types `a`/`b` and
/// an instruction tile of `m` x `m` (16 or 32): the most FLOPs per cycle.
/// xf32 is chosen only when `xf32` is set. Null when there is none.
const MmaInstr *chooseMmaInstr(const Chip &chip, mlir::Type a, mlir::Type b,
                               unsigned m, bool xf32 = false);

/// Why `chip` cannot multiply `a` by `b` (unsupported pair, fp8 format of
/// another chip), or empty when it can.
std::string explainUnsupportedTypes(const Chip &chip, mlir::Type a,
                                    mlir::Type b);

/// The default config of a matmul of the given sizes (dynamic sizes are
/// ShapedType::kDynamic) on `chip`.
ConfigAttr getDefaultMatmulConfig(mlir::MLIRContext *context, const Chip &chip,
                                  mlir::Type a, mlir::Type b, int64_t m,
                                  int64_t n, int64_t k);

/// What a matmul config costs on chip.
struct MatmulResources {
  int64_t ldsBytes = 0;         // LDS per workgroup
  int64_t accumulatorVgprs = 0; // per lane
  int64_t operandVgprs = 0;     // per lane: MFMA operands and prefetch
  int64_t totalVgprs() const { return accumulatorVgprs + operandVgprs; }
};
MatmulResources estimateMatmulResources(ConfigAttr config, mlir::Type a,
                                        mlir::Type b, unsigned waveSize);

/// Checks `config` against `chip` for a matmul of `a` x `b`: instruction
/// available with these types, tile a multiple of the instruction per
/// wave, LDS and registers within budget.
mlir::LogicalResult
checkMatmulConfig(ConfigAttr config, const Chip &chip, mlir::Type a,
                  mlir::Type b,
                  llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The default attention config: blocks of 64 queries (32 for short query
/// sequences) on 32-row waves, 64 keys per step (32 x 32 blocks past head
/// dim 128), the chip's fastest 32x32 instruction for the input type; for
/// decode (16 queries or fewer) the keys split over workgroups, about 256
/// each. Null when the chip has none.
ConfigAttr getDefaultAttentionConfig(mlir::MLIRContext *context,
                                     const Chip &chip, mlir::Type element,
                                     int64_t seqQ, int64_t seqKV,
                                     int64_t headDim);

/// Checks an attention config against `chip` for head dimension `headDim`:
/// instruction, waves only along the queries, LDS and registers within
/// budget.
mlir::LogicalResult
checkAttentionConfig(ConfigAttr config, const Chip &chip, mlir::Type element,
                     int64_t headDim,
                     llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// The coalesced layout of a `shape` tile of `elementBytes` elements stored
/// with dimension `contiguousDim` contiguous: 16 bytes per lane along it,
/// lanes along it first, the workgroup's waves along the other dimension.
BlockedAttr getCoalescedLayout(mlir::MLIRContext *context,
                               llvm::ArrayRef<int64_t> shape,
                               int64_t contiguousDim, unsigned elementBytes,
                               unsigned numWaves, unsigned waveSize = 64);

/// Which of the last two dimensions of `type` has unit stride (1 for a
/// row-major or dynamic layout).
int64_t getContiguousTileDim(mlir::MemRefType type);

} // namespace tessel

#endif // TESSEL_DIALECT_TESSEL_TRANSFORMS_KERNELCONFIG_H
