//===- MatmulCheck.h - Host reference for tessel.matmul ---------*- C++ -*-===//
//
// What tessel-run checks problem-level kernels against: random inputs of the
// kernel's element types and the product with its epilogue computed on the
// host in double precision, the epilogue following the IR's own types.
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

/// A one-element array of `type` (a scalar argument) holding `value`
/// rounded to the type.
HostArray makeScalarArray(mlir::Type type, double value);

/// An array of `type` in `shape` holding `values`, each rounded to the type.
HostArray makeArrayFromValues(mlir::Type type, llvm::ArrayRef<int64_t> shape,
                              llvm::ArrayRef<double> values);

/// The doubles an array of `type` holds.
std::vector<double> decodeArray(mlir::Type type, const NpyArray &array);

/// `value` as a value of `type` holds it: rounded to nearest even for float
/// types (saturating for 8-bit floats, as storing them does), wrapped to the
/// bit width for integers (i1 as 0 or 1).
double roundToType(mlir::Type type, double value);

/// Concrete sizes of one matmul (batch 0 when unbatched).
struct MatmulSizes {
  int64_t batch = 0, m = 0, n = 0, k = 0;
};

/// C as the kernel should compute it. `poison[i]` marks an element the
/// epilogue leaves undefined (arith.fptosi of a value outside the result
/// type's range is poison): any value the kernel stores there is correct.
struct MatmulReference {
  std::vector<double> values;
  std::vector<bool> poison;
  int64_t poisonCount = 0;
};

/// C from A, B and the extras (in the order of the matmul's extra operands;
/// scalars as one-element arrays). Every array must hold exactly what
/// `sizes` imply (extras broadcast against [batch, M, N]); a mismatch is an
/// error on `op`, never a read past an array.
llvm::FailureOr<MatmulReference>
computeMatmulReference(MatmulOp op, const MatmulSizes &sizes,
                       const HostArray &a, const HostArray &b,
                       llvm::ArrayRef<const HostArray *> extras);

/// Concrete sizes of one attention problem.
struct AttentionSizes {
  int64_t batch = 0, heads = 0, kvHeads = 0, seqQ = 0, seqKV = 0, headDim = 0;
  int64_t headDimV = 0; // of V and O (Q and K have headDim)
};

/// A paged KV cache's sizes.
struct PagedSizes {
  int64_t pages = 0, pageSize = 0, maxPages = 0;
};

/// O and the natural logsumexp per row, in double precision: softmax(scale
/// Q K^T) V over the keys the op's window (causal, local) leaves each
/// query, aligned bottom-right, with the head's sink logit (when `sinks`
/// is given) in the denominator; a row that sees no key gets O = 0 and
/// logsumexp +inf (the sink's logit with sinks). Q, K, V and the sinks must
/// hold exactly what `sizes` imply and heads must be a multiple of kvHeads
/// (an error on `op` otherwise). `descale` (8-bit inputs) holds the q, k
/// and v dequantization scales: scores times dq * dk, O times dv.
llvm::LogicalResult
computeAttentionReference(AttentionOp op, const AttentionSizes &sizes,
                          const HostArray &q, const HostArray &k,
                          const HostArray &v, const HostArray *sinks,
                          std::vector<double> &o, std::vector<double> &lse,
                          std::array<double, 3> descale = {1.0, 1.0, 1.0});
/// The same for softmax scale `scale` and the keys `window` leaves each
/// query (errors are reported on `op`).
llvm::LogicalResult computeAttentionReference(
    mlir::Operation *op, double scale, KeyWindow window,
    const AttentionSizes &sizes, const HostArray &q, const HostArray &k,
    const HostArray &v, const HostArray *sinks, std::vector<double> &o,
    std::vector<double> &lse, std::array<double, 3> descale = {1.0, 1.0, 1.0});

/// dQ, dK and dV of tessel.attention_grad in double precision, from the
/// arrays as the kernel read them: P = exp(scale q.k - lse) over the keys
/// the op's window leaves each query, D = rowsum(dO * O), dS = P (dO.v -
/// D); dQ = scale dS K, dK = scale dS^T Q and dV = P^T dO summed over each
/// group's query heads. Arrays must hold what `sizes` imply.
llvm::LogicalResult computeAttentionGradReference(
    AttentionGradOp op, const AttentionSizes &sizes, const HostArray &q,
    const HostArray &k, const HostArray &v, const HostArray &o,
    const HostArray &gradO, const HostArray &lse, std::vector<double> &gradQ,
    std::vector<double> &gradK, std::vector<double> &gradV);

/// Max absolute error, and max error relative to the larger of the largest
/// reference magnitude and the error floor of the output type, and whether
/// that is within the tolerance of the type.
struct Comparison {
  double maxAbsError = 0, maxRelError = 0, tolerance = 0;
  int64_t poisonCount = 0; // elements not compared (see MatmulReference)
  bool passed = false;
};

/// Below this magnitude a relative error against values of `type` means
/// nothing: the smallest normal number of a float type (f16: 2^-14), under
/// which the type has only subnormal (absolute) precision or flushes to
/// zero; 1 for integers (compared exactly).
double getErrorFloor(mlir::Type type);

/// `reducedPrecision`: the products used xf32 (10-bit mantissa) operands.
/// `poison`, when not empty, marks elements left out of the comparison.
Comparison compareResults(mlir::Type cType, llvm::ArrayRef<double> got,
                          llvm::ArrayRef<double> expected, int64_t k,
                          bool reducedPrecision = false,
                          const std::vector<bool> &poison = {});

} // namespace tessel

#endif // TESSEL_TOOLS_TESSEL_RUN_MATMULCHECK_H
