//===- Emulator.h - Run AMDGPU kernels on the CPU ---------------*- C++ -*-===//
//
// The emulator runs the final kernels -- the LLVM/ROCDL-dialect gpu.module
// handed to the AMDGPU backend -- on the host, lane for lane
// (docs/architecture.md §9).
// `tessel-lower-to-emulator` turns the gpu.module into host code; Emulator
// JIT-compiles it with MLIR's ExecutionEngine and runs each workgroup in a
// SIMT runtime where every lane is a fiber. Lanes run one after another
// between synchronization points (s_barrier, wave collectives); wave
// collectives follow AMD's documented semantics (Collectives.h); accesses
// outside every argument buffer or the LDS allocation or below the
// alignment they assume, LDS races between synchronization points,
// collectives reached by part of a wave, barriers reached by part of a wave
// or workgroup or at different sites, and integer divisions by zero or
// overflowing are errors naming the kernel, workgroup, wave, lane and
// address or source location, never signals in the host process.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_EMULATOR_EMULATOR_H
#define TESSEL_EMULATOR_EMULATOR_H

#include "tessel/Target/Chip.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace tessel::emu {

/// Memory a kernel may access: its argument buffers.
struct BufferRegion {
  std::string name; // for messages, e.g. "argument 2"
  void *data;
  size_t bytes;
};

struct LaunchDims {
  std::array<unsigned, 3> grid = {1, 1, 1};  // workgroups
  std::array<unsigned, 3> block = {1, 1, 1}; // lanes per workgroup
};

/// What a launch did, for reports and benchmarks.
struct LaunchStats {
  uint64_t workgroups = 0;
  uint64_t lanes = 0;
  uint64_t barriers = 0;    // workgroup barriers released
  uint64_t collectives = 0; // wave collectives executed
  uint64_t memoryChecks = 0;
};

class Emulator {
public:
  /// JIT-compiles `host`, the output of tessel-lower-to-emulator for one
  /// gpu.module, for emulating `chip`.
  static llvm::Expected<std::unique_ptr<Emulator>> create(mlir::ModuleOp host,
                                                          const Chip &chip);
  ~Emulator();

  /// Runs `kernel` over `dims`. `args` holds one pointer per argument of the
  /// lowered (LLVM) kernel function, pointing at its value; `buffers` is the
  /// memory the kernel may touch besides LDS and its own stack.
  llvm::Error launch(llvm::StringRef kernel, const LaunchDims &dims,
                     llvm::ArrayRef<void *> args,
                     llvm::ArrayRef<BufferRegion> buffers,
                     LaunchStats *stats = nullptr);

  /// LDS bytes one workgroup of `kernel` allocates.
  uint64_t getLdsBytes(llvm::StringRef kernel) const {
    return ldsBytes.lookup(kernel);
  }
  const Chip &getChip() const { return chip; }

private:
  explicit Emulator(const Chip &chip);

  const Chip &chip;
  llvm::StringMap<uint64_t> ldsBytes;
  std::vector<std::string> sites; // source locations (Passes.h kSitesAttr)
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

} // namespace tessel::emu

#endif // TESSEL_EMULATOR_EMULATOR_H
