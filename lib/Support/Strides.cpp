//===- Strides.cpp - Dense strides for a memref's layout ------------------===//

#include "tessel/Support/Strides.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace tessel;

std::optional<llvm::SmallVector<int64_t, 4>>
tessel::denseStrides(llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> layoutStrides) {
  size_t rank = shape.size();
  if (layoutStrides.size() != rank ||
      llvm::any_of(shape, [](int64_t size) { return size < 0; }))
    return std::nullopt;
  // Innermost first: static strides ascending, then dynamic ones last to
  // first.
  llvm::SmallVector<unsigned, 4> order(rank);
  std::iota(order.begin(), order.end(), 0u);
  llvm::stable_sort(order, [&](unsigned x, unsigned y) {
    bool xStatic = layoutStrides[x] >= 0, yStatic = layoutStrides[y] >= 0;
    if (xStatic != yStatic)
      return xStatic;
    if (xStatic)
      return layoutStrides[x] < layoutStrides[y];
    return x > y;
  });
  llvm::SmallVector<int64_t, 4> strides(rank, 0);
  int64_t extent = 1; // elements spanned by the dimensions placed so far
  for (unsigned d : order) {
    strides[d] = layoutStrides[d] >= 0 ? layoutStrides[d] : extent;
    int64_t span = 0;
    if (llvm::MulOverflow(strides[d], std::max<int64_t>(shape[d], 1), span))
      return std::nullopt;
    extent = std::max(extent, span);
  }
  return strides;
}

std::optional<int64_t> tessel::stridedExtent(llvm::ArrayRef<int64_t> shape,
                                             llvm::ArrayRef<int64_t> strides) {
  if (shape.size() != strides.size())
    return std::nullopt;
  int64_t extent = 1;
  for (auto [size, stride] : llvm::zip(shape, strides)) {
    if (size < 0 || stride < 0)
      return std::nullopt;
    if (size == 0)
      return 0;
    int64_t span = 0;
    if (llvm::MulOverflow(size - 1, stride, span) ||
        llvm::AddOverflow(extent, span, extent))
      return std::nullopt;
  }
  return extent;
}
