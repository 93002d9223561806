//===- TesselAttrs.cpp - tessel attributes ----------------------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tessel;

LogicalResult
ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   ArrayRef<int64_t> tile, ArrayRef<int64_t> waves,
                   int64_t stages, StringAttr instr) {
  if (tile.size() != 2 && tile.size() != 3)
    return emitError() << "tile must have 3 sizes [M, N, K] (matmul) or 2 "
                          "sizes [M, N] (attention), got "
                       << tile.size();
  for (int64_t size : tile)
    if (size <= 0 || !llvm::isPowerOf2_64(size))
      return emitError() << "tile sizes must be positive powers of two, got "
                         << size;
  if (waves.size() != 2)
    return emitError() << "waves must have 2 counts [along M, along N], got "
                       << waves.size();
  for (auto [dim, count] : llvm::enumerate(waves)) {
    if (count <= 0 || !llvm::isPowerOf2_64(count))
      return emitError() << "wave counts must be positive powers of two, got "
                         << count;
    if (tile[dim] % count != 0)
      return emitError() << "tile size " << tile[dim] << " along "
                         << (dim == 0 ? "M" : "N")
                         << " is not divisible by its " << count << " waves";
  }
  if (waves[0] * waves[1] > 16)
    return emitError() << "a workgroup has at most 16 waves (1024 lanes of "
                          "wave64), got "
                       << waves[0] * waves[1];
  if (stages < 1 || stages > 4)
    return emitError() << "stages must be between 1 and 4, got " << stages;
  if (instr && !instr.getValue().starts_with("v_mfma_") &&
      !instr.getValue().starts_with("v_wmma_"))
    return emitError() << "instr must name an MFMA or WMMA instruction "
                          "(v_mfma_* or v_wmma_*), got \""
                       << instr.getValue() << "\"";
  return success();
}

int64_t ConfigAttr::getNumWaves() const {
  return getWaves()[0] * getWaves()[1];
}
