//===- FuzzNpy.cpp - Fuzz target: the .npy reader ---------------*- C++ -*-===//
//
// Feeds arbitrary bytes to parseNpy, the reader tessel-run takes kernel
// arguments with, and checks what it accepts: a known element width and
// exactly as many data bytes as the shape says.
//
//===----------------------------------------------------------------------===//

#include "FuzzProperty.h"
#include "tessel/Support/Npy.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

using tessel::fuzz::violated;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  llvm::Expected<tessel::NpyArray> array = tessel::parseNpy(bytes, "input");
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  unsigned width = array->getElementBytes();
  if (width != 1 && width != 2 && width != 4 && width != 8)
    violated("parseNpy accepted an element width other than 1, 2, 4 or 8");
  if (uint64_t(array->getNumElements()) * width != array->data.size())
    violated("parseNpy accepted a shape that disagrees with its data");
  return 0;
}
