//===- StridesTest.cpp - Dense strides for a memref's layout --------------===//

#include "tessel/Support/Strides.h"

#include "gtest/gtest.h"

using namespace tessel;

namespace {
constexpr int64_t kDyn = -1;

llvm::SmallVector<int64_t, 4> dense(llvm::ArrayRef<int64_t> shape,
                                    llvm::ArrayRef<int64_t> layout) {
  std::optional<llvm::SmallVector<int64_t, 4>> strides =
      denseStrides(shape, layout);
  EXPECT_TRUE(strides.has_value());
  return strides ? *strides : llvm::SmallVector<int64_t, 4>();
}

TEST(Strides, RowMajorWhenAllDynamic) {
  EXPECT_EQ(dense({3, 5, 7}, {kDyn, kDyn, kDyn}),
            (llvm::SmallVector<int64_t, 4>{35, 7, 1}));
}

TEST(Strides, ColumnMajorOperandWithDynamicLeadingStride) {
  // memref<?x64xf16, strided<[1, ?]>>: element (k, n) at k + n * K.
  EXPECT_EQ(dense({48, 64}, {1, kDyn}), (llvm::SmallVector<int64_t, 4>{1, 48}));
}

TEST(Strides, BatchedColumnMajor) {
  // strided<[?, 1, ?]>: the batch outside the column-major matrix.
  EXPECT_EQ(dense({4, 48, 64}, {kDyn, 1, kDyn}),
            (llvm::SmallVector<int64_t, 4>{48 * 64, 1, 48}));
}

TEST(Strides, StaticStridesAreKept) {
  // Padded rows: the static leading stride stays, the batch goes outside.
  EXPECT_EQ(dense({2, 8, 6}, {kDyn, 16, 1}),
            (llvm::SmallVector<int64_t, 4>{128, 16, 1}));
}

TEST(Strides, RejectsNegativeSizesAndOverflow) {
  EXPECT_FALSE(denseStrides({-1, 4}, {kDyn, 1}).has_value());
  EXPECT_FALSE(denseStrides({int64_t(1) << 40, int64_t(1) << 40}, {kDyn, kDyn})
                   .has_value());
  EXPECT_FALSE(denseStrides({4}, {kDyn, 1}).has_value());
}

TEST(Strides, Extent) {
  EXPECT_EQ(stridedExtent({48, 64}, {1, 48}), 48 * 64);
  EXPECT_EQ(stridedExtent({2, 8, 6}, {128, 16, 1}), 128 + 7 * 16 + 6);
  EXPECT_EQ(stridedExtent({0, 8}, {8, 1}), 0);
  EXPECT_FALSE(stridedExtent({4, 4}, {-1, 1}).has_value());
  EXPECT_FALSE(
      stridedExtent({int64_t(1) << 62, 4}, {int64_t(1) << 4, 1}).has_value());
}
} // namespace
