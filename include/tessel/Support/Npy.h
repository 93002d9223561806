//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes the NumPy array format (versions 1.0-3.0, C order) that
// tessel-run exchanges kernel arguments in.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_NPY_H
#define TESSEL_SUPPORT_NPY_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tessel {

struct NpyArray {
  /// The NumPy type descriptor: "<f4", "<f2", "<u2", "|u1", "|i1", "<i4", ...
  std::string dtype;
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<char> data; // C order, little-endian

  int64_t getNumElements() const;
  /// Bytes per element of `dtype`.
  unsigned getElementBytes() const;
};

/// Reads the .npy file at `path`.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);
/// Parses the bytes of a .npy file; `name` is what errors call it. Only
/// little-endian numbers of 1, 2, 4 or 8 bytes are accepted, and the header's
/// shape must describe exactly the data that follows it.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes, llvm::StringRef name);
/// Writes atomically: a temporary file renamed into place.
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

} // namespace tessel

#endif // TESSEL_SUPPORT_NPY_H
