//===- MatmulCheck.h - Host reference for tessel.matmul ---------*- C++ -*-===//
//
// What tessel-run checks problem-level kernels against: random inputs of the
// kernel's element types and the product with its epilogue computed on the
// host in double precision.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TOOLS_TESSEL_RUN_MATMULCHECK_H
#define TESSEL_TOOLS_TESSEL_RUN_MATMULCHECK_H

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Support/Npy.h"
#include "tessel/Target/Chip.h"

#include <random>

namespace tessel {

/// An argument's logical array as .npy bytes and as exact doubles.
struct HostArray {
  NpyArray npy;
  std::vector<double> values;
};

/// The .npy dtype holding `type`.
std::optional<std::string> getNpyDtype(mlir::Type type);

/// Random values of `type` in `shape`, exactly representable in it.
HostArray makeRandomArray(mlir::Type type, llvm::ArrayRef<int64_t> shape,
                          std::mt19937 &rng);

/// The doubles an array of `type` holds.
std::vector<double> decodeArray(mlir::Type type, const NpyArray &array);

/// Concrete sizes of one matmul (batch 0 when unbatched).
struct MatmulSizes {
  int64_t batch = 0, m = 0, n = 0, k = 0;
};

/// The sizes of `op`, with `dynamicSize` for every dynamic dimension.
MatmulSizes getMatmulSizes(MatmulOp op, int64_t dynamicSize);

/// The concrete shape of `type` for a matmul of `sizes` (which dimension is
/// which follows the operand's role: A [batch, M, K], B [batch, K, N], C and
/// extras broadcast against [batch, M, N]).
llvm::SmallVector<int64_t> concreteShape(mlir::MemRefType type,
                                         llvm::ArrayRef<int64_t> roleSizes);

/// C as the kernel should compute it, from A, B and the extras (in the
/// order of the matmul's extra operands; scalars as one-element arrays).
llvm::FailureOr<std::vector<double>>
computeMatmulReference(MatmulOp op, const MatmulSizes &sizes,
                       const HostArray &a, const HostArray &b,
                       llvm::ArrayRef<const HostArray *> extras);

/// Concrete sizes of one attention problem.
struct AttentionSizes {
  int64_t batch = 0, heads = 0, kvHeads = 0, seqQ = 0, seqKV = 0, headDim = 0;
};
AttentionSizes getAttentionSizes(AttentionOp op, int64_t dynamicSize);

/// O and the natural logsumexp per row, in double precision: softmax(scale
/// Q K^T) V with the causal mask aligned bottom-right; a row that sees no
/// key gets O = 0 and logsumexp -inf.
void computeAttentionReference(const AttentionSizes &sizes, double scale,
                               bool causal, const HostArray &q,
                               const HostArray &k, const HostArray &v,
                               std::vector<double> &o,
                               std::vector<double> &lse);

/// Max absolute error and max error relative to the largest reference
/// magnitude, and whether that is within the tolerance of C's type.
struct Comparison {
  double maxAbsError = 0, maxRelError = 0, tolerance = 0;
  bool passed = false;
};
/// `reducedPrecision`: the products used xf32 (10-bit mantissa) operands.
Comparison compareResults(mlir::Type cType, llvm::ArrayRef<double> got,
                          llvm::ArrayRef<double> expected, int64_t k,
                          bool reducedPrecision = false);

} // namespace tessel

#endif // TESSEL_TOOLS_TESSEL_RUN_MATMULCHECK_H
