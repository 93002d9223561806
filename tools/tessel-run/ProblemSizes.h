//===- ProblemSizes.h - Sizes a problem-level kernel runs at ---*- C++ -*-===//
//
// A problem-level kernel is defined over a few sizes its arguments share
// (tessel.matmul: batch, M, N, K; tessel.attention: batch, heads, kv heads,
// seq-q, seq-kv, head dim). tessel-run fixes each size once -- from the
// static dimensions of the types, then from the arrays given with --arg or
// from --dynamic-size -- and checks every argument against that one set
// before any launch or host reference reads it, so arrays that disagree are
// an error naming the argument and dimension, never a read past a buffer.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TOOLS_TESSEL_RUN_PROBLEMSIZES_H
#define TESSEL_TOOLS_TESSEL_RUN_PROBLEMSIZES_H

#include "MatmulCheck.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tessel {

class ProblemSizes {
public:
  /// The sizes of `op` (tessel.matmul or tessel.attention) with those its
  /// operand types fix statically. Fails when an argument of its function
  /// is not an operand of `op` (or is several) or an operand is not an
  /// argument: tessel-run could not tell what shape such an argument has.
  static llvm::Expected<ProblemSizes> get(mlir::Operation *op);

  /// Binds the sizes the dynamic dimensions of argument `index` stand for
  /// to `shape` (an array given as `what`, e.g. "argument 1 ('b.npy')");
  /// fails when one is already bound to something else.
  llvm::Error bindArray(unsigned index, llvm::ArrayRef<int64_t> shape,
                        llvm::StringRef what);
  /// Binds every size still unknown to `value` (from `source`).
  void bindUnknown(int64_t value, llvm::StringRef source);
  /// Fails when a size is still unknown or the sizes contradict the
  /// problem (a broadcast operand's static size, heads that are not a
  /// multiple of kv heads).
  llvm::Error verify() const;
  /// Fails when a size is over 2^31-1: grid dimensions and the kernels'
  /// sizes are 32-bit.
  llvm::Error checkLimits() const;

  /// The concrete shape of argument `index`.
  llvm::SmallVector<int64_t> getShape(unsigned index) const;
  /// Fails unless `shape` (of argument `index`, given as `what`) is
  /// getShape(index), naming the first dimension that differs and why.
  llvm::Error checkShape(unsigned index, llvm::ArrayRef<int64_t> shape,
                         llvm::StringRef what) const;

  /// The sizes the dynamic dimensions of the types stand for, e.g. "M, K".
  std::string getDynamicNames() const;

  MatmulSizes getMatmulSizes() const;
  AttentionSizes getAttentionSizes() const;
  /// Paged attention: the cache's pages, keys per page and pages per
  /// sequence.
  PagedSizes getPagedSizes() const;
  /// Varlen attention: the number of packed sequences (the cumulative
  /// lengths' size less one); 0 otherwise.
  int64_t getVarlenSequences() const;

private:
  struct Size {
    llvm::StringRef name;
    int64_t value = mlir::ShapedType::kDynamic;
    bool dynamic = false; // some operand type leaves it dynamic
    std::string source;   // where `value` came from, for diagnostics
  };
  /// What one argument of the function is: its type and, for a memref,
  /// which size each dimension stands for.
  struct Role {
    mlir::Type type;
    llvm::SmallVector<unsigned, 4> dims;
    bool broadcasts = false; // an epilogue extra: static dims may be 1
  };

  static llvm::SmallVector<Size> getAttentionSizeList();
  llvm::Error bind(unsigned size, int64_t value, const std::string &source,
                   const std::string &what, unsigned dim);
  llvm::Error assignRole(mlir::Value operand, llvm::ArrayRef<unsigned> sizes,
                         bool broadcasts);
  std::string describeSize(unsigned size) const;

  mlir::Block *entry = nullptr; // the function's arguments
  bool isMatmul = true;
  std::string kernel;
  llvm::SmallVector<Size> sizes;
  llvm::SmallVector<Role> roles; // one per function argument
};

} // namespace tessel

#endif // TESSEL_TOOLS_TESSEL_RUN_PROBLEMSIZES_H
