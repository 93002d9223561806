//===- Problems.h - Problem descriptions to problem-level IR ----*- C++ -*-===//
//
// A matmul or attention problem as plain data (sizes, types, layouts,
// epilogue), and the problem-level (L0) function that states it. Used by
// tessel-gen, by tessel::Compiler's problem entry points and so by every
// embedding that does not write IR itself.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_PROBLEMS_PROBLEMS_H
#define TESSEL_PROBLEMS_PROBLEMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

struct MatmulProblem {
  std::string name = "matmul";
  int64_t m = 1024, n = 1024, k = 1024;
  int64_t batch = 0; // 0: not batched
  /// Sizes passed at run time instead: any of "m", "n", "k", "batch".
  std::vector<std::string> dynamic;
  /// Element types (f32, f16, bf16, i8, i32, fp8 names); empty bType is
  /// aType, empty cType is i32 for i8, f32 for fp8, else aType.
  std::string aType = "f16", bType, cType;
  /// Stored column-major (the two innermost dimensions swapped).
  bool transposeA = false, transposeB = false, transposeC = false;
  /// Epilogue: C = activation(alpha * scaleA * scaleB * acc + bias +
  /// residual).
  bool alpha = false;
  /// Dequantization scales as torch._scaled_mm takes them (f32 arrays):
  /// scaleA none, tensor (one value, memref<1xf32>) or row (one per row of A,
  /// [batch,] M x 1); scaleB none, tensor or column (one per column of B, N).
  std::string scaleA = "none", scaleB = "none";
  std::string bias = "none"; // none, m (per row) or n (per column)
  bool residual = false;
  std::string activation = "none"; // none, relu, gelu, silu
  /// A #tessel.config<...> to fix the tiling; empty: the compiler chooses.
  std::string config;
};

struct AttentionProblem {
  std::string name = "attention";
  int64_t batch = 1, heads = 8;
  int64_t kvHeads = 0; // 0: as many as query heads
  int64_t seqQ = 1024, seqKV = 1024, headDim = 128;
  int64_t headDimV = 0; // of V and O; 0: headDim
  /// Sizes passed at run time instead: any of "seq-q", "seq-kv", "batch".
  std::vector<std::string> dynamic;
  std::string type = "f16", outType; // empty outType: type (bf16 for fp8)
  bool causal = false;
  /// Local attention: {left, right} keys around each query's position, -1
  /// unbounded (tessel.attention's `window`); empty: no window.
  std::vector<int64_t> window;
  std::optional<float> scale; // none: 1/sqrt(headDim)
  bool lse = false;           // also write the logsumexp
  bool sinks = false;         // one sink logit per query head, after lse
  /// 8-bit inputs: per-tensor dequantization scales of q, k and v (three
  /// memref<1xf32> arguments, last), as FlashAttention-3's descale_q/k/v.
  bool descale = false;
  /// The backward (tessel.attention_grad): arguments Q, K, V, O, dO, the
  /// forward's logsumexp, then dQ, dK, dV (of outType; O and dO of type).
  bool backward = false;
  /// Variable-length (packed) sequences, as FlashAttention's varlen
  /// functions: Q, K, V, O (and the lse) hold the batch's sequences one
  /// after another ([1, heads, total, head_dim] views of FlashAttention's
  /// (total, heads, head_dim) arrays), then cu_seqlens_q, cu_seqlens_k
  /// (i32, batch + 1) and max_seqlen_q (index) follow the other arguments.
  bool varlen = false;
  /// A paged KV cache (vLLM's) with pages of this many keys (0: none): K
  /// and V are [pages, kv_heads, page_size, head_dim] views of
  /// [pages, page_size, kv_heads, head_dim] caches with a run-time page
  /// count, then block_table (i32, [batch, ceil(seqKV / page_size)]) and
  /// context_lens (i32, [batch]) follow the other arguments.
  int64_t pageSize = 0;
  /// The paged cache's pages; 0: a run-time count.
  int64_t numPages = 0;
  std::string config;
};

/// Builds the problem's function at `builder`'s insertion point; errors are
/// emitted at `loc`.
mlir::FailureOr<mlir::func::FuncOp> buildProblem(mlir::OpBuilder &builder,
                                                 mlir::Location loc,
                                                 const MatmulProblem &problem);
mlir::FailureOr<mlir::func::FuncOp>
buildProblem(mlir::OpBuilder &builder, mlir::Location loc,
             const AttentionProblem &problem);

/// The verified problem-level module as MLIR text.
llvm::Expected<std::string> printProblem(const MatmulProblem &problem);
llvm::Expected<std::string> printProblem(const AttentionProblem &problem);

} // namespace tessel

#endif // TESSEL_PROBLEMS_PROBLEMS_H
