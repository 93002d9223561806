//===- NpyTest.cpp - Parsing .npy bytes -----------------------------------===//

#include "tessel/Support/Npy.h"

#include "gtest/gtest.h"

#include <string>

using namespace tessel;

namespace {

/// A version 1.0 .npy file with `header` as its dictionary and `data` after.
std::string npyBytes(const std::string &header, const std::string &data) {
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += char(header.size() & 0xff);
  bytes += char(header.size() >> 8);
  return bytes + header + data;
}

std::string errorOf(llvm::Expected<NpyArray> parsed) {
  if (parsed)
    return "";
  return llvm::toString(parsed.takeError());
}

TEST(Npy, ParsesASmallArray) {
  std::string data(2 * 3 * 2, '\x01');
  llvm::Expected<NpyArray> parsed = parseNpy(
      npyBytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }",
               data),
      "a.npy");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->dtype, "<f2");
  EXPECT_EQ(parsed->getNumElements(), 6);
  EXPECT_EQ(parsed->data.size(), 12u);
}

TEST(Npy, ShapeWhoseByteCountWrapsAroundIsRejected) {
  // 2^62 * 2^2 elements of 4 bytes is 2^66 bytes: wrapped to 64 bits that is
  // 0, which an empty data section would have matched.
  std::string error = errorOf(
      parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': "
                        "(4611686018427387904, 4), }",
                        ""),
               "wrap.npy"));
  EXPECT_NE(error.find("needs more bytes than the file holds"),
            std::string::npos)
      << error;
}

TEST(Npy, HugeElementWidthIsRejected) {
  std::string error = errorOf(parseNpy(
      npyBytes("{'descr': '<f4294967295', 'fortran_order': False, 'shape': "
               "(1,), }",
               ""),
      "wide.npy"));
  EXPECT_NE(error.find("unsupported dtype"), std::string::npos) << error;
}

TEST(Npy, ZeroSizedDimensionNextToAHugeOne) {
  llvm::Expected<NpyArray> parsed =
      parseNpy(npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': "
                        "(4611686018427387904, 4611686018427387904, 0), }",
                        ""),
               "empty.npy");
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->getNumElements(), 0);
}

TEST(Npy, TruncatedDataIsRejected) {
  std::string error = errorOf(parseNpy(
      npyBytes("{'descr': '<u2', 'fortran_order': False, 'shape': (8,), }",
               std::string(15, '\0')),
      "short.npy"));
  EXPECT_NE(error.find("data bytes"), std::string::npos) << error;
}

} // namespace
