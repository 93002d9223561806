//===- Hsaco.h - gpu.module to HSACO code objects ---------------*- C++ -*-===//
//
// A gpu.module already in the LLVM and ROCDL dialects becomes LLVM IR, is
// linked with the ROCm device libraries when it calls into them, optimized and
// compiled by the AMDGPU backend, and linked by lld inside the process into an
// HSACO code object. No subprocess, no /opt/rocm.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_TARGET_HSACO_H
#define TESSEL_TARGET_HSACO_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
class Pass;
} // namespace llvm

namespace mlir {
class DialectRegistry;
namespace gpu {
class GPUModuleOp;
} // namespace gpu
} // namespace mlir

namespace tessel {
struct Chip;

/// The code object version emitted unless asked otherwise: 5 loads on every
/// ROCm 6 runtime, while 6 (LLVM 22's default) needs ROCm 6.3 or later and
/// adds only generic targets, which Tessel does not use.
constexpr unsigned kDefaultCodeObjectVersion = 5;

/// Marks a kernel (gpu.func or llvm.func, unit attribute) whose loops the
/// code generator leaves to the lowering: LLVM's loop strength reduction is
/// skipped for a gpu.module whose kernels all carry it (see
/// compileGpuModule).
inline constexpr llvm::StringLiteral kSkipLoopStrengthReductionAttrName =
    "tessel.skip_loop_strength_reduction";

/// Marks a kernel (gpu.func or llvm.func, unit attribute) whose loads the
/// code generator's machine sinking must leave where the lowering put them:
/// the pass is skipped for a gpu.module whose kernels all carry it (see
/// compileGpuModule).
inline constexpr llvm::StringLiteral kSkipMachineSinkingAttrName =
    "tessel.skip_machine_sinking";

/// Whether LLVM can emit code object version `version` (4, 5 or 6).
bool isSupportedCodeObjectVersion(unsigned version);

/// The code object version of `hsaco` (from its ELF header's ABI version),
/// or 0 if it is not an AMDGPU HSA code object of version 4 or later.
unsigned getCodeObjectVersion(llvm::ArrayRef<char> hsaco);

struct HsacoOptions {
  /// LLVM optimization level of the device code (0-3).
  unsigned optLevel = 3;
  /// AMDHSA code object version: 4, 5 or 6 (see kDefaultCodeObjectVersion).
  unsigned codeObjectVersion = kDefaultCodeObjectVersion;
  /// Directory holding ocml.bc and ockl.bc. Empty: $TESSEL_ROCM_DEVICE_LIBS,
  /// else the directory configured at build time.
  std::string deviceLibsDir;
  /// Keep every artifact on the way to the code object (the optimized LLVM
  /// IR and the ISA text) for a dump. Otherwise a stage keeps only its own:
  /// the code object is emitted without printing the ISA.
  bool keepIntermediates = false;
};

/// What one gpu.module compiles to.
struct GpuModuleBinary {
  std::string llvmIR;      // optimized LLVM IR (text; HsacoStage::LLVMIR)
  std::string isa;         // AMDGPU assembly (HsacoStage::ISA)
  std::vector<char> hsaco; // the linked code object (HsacoStage::HSACO)
  bool linkedDeviceLibs = false;
};

/// The artifact to produce (HsacoOptions::keepIntermediates keeps the
/// earlier ones too).
enum class HsacoStage { LLVMIR, ISA, HSACO };

/// Registers the LLVM IR translations compileGpuModule needs (builtin, LLVM,
/// ROCDL, GPU) in `registry`.
void registerHsacoTranslations(mlir::DialectRegistry &registry);

/// One line of a function's code as the asm printer prints it, as the
/// search for matrix clusters sees it.
struct CodeLine {
  bool isMatrix = false; // an MFMA (or SMFMAC)
  int definesLabel = -1; // the number of the block whose label this is
  int branchesTo = -1;   // the number of the block a branch here targets
  bool isScalar = false; // a scalar ALU or wait instruction (s_*)
};

/// The clusters of matrix instructions inside loops (a label and a later
/// branch back to it) as (first, last) line indices: runs of MFMAs at most
/// 12 vector or memory instructions apart (scalar ones, which take no VALU
/// issue slot from the other wave, do not count). A line may open or close
/// clusters of several loops.
llvm::SmallVector<std::pair<size_t, size_t>>
findMatrixClusters(llvm::ArrayRef<CodeLine> lines);

/// The machine pass that raises each cluster of findMatrixClusters to wave
/// priority 1 (`s_setprio 1` before its first MFMA, `s_setprio 0` after its
/// last), so that the waves sharing a SIMD alternate between matrix and
/// other work (lib/Target/MatrixPriority.cpp). It runs after the AMDGPU
/// backend's own passes, right before the asm printer.
llvm::Pass *createMatrixClusterPriorityPass();

/// Rewrites the LDS accesses `getelementptr T, base, X ^ c` that share an
/// offset X into byte accesses off one shifted offset, (X << s) ^ (c << s)
/// (lib/Target/LdsByteOffsets.cpp): one XOR per access instead of a XOR
/// and a shift.
void xorLdsOffsetsInBytes(llvm::Module &module);

/// Rewrites each vector phi whose incoming values are all splats of
/// one-element vectors into a splat of a phi of those
/// (lib/Target/SplatPhis.cpp): GVN carries a splat it finds partially
/// redundant across a join as a whole vector, one register per lane.
void scalarizeSplatPhis(llvm::Module &module);

/// Gives the LDS reads of every function that copies global memory straight
/// into LDS an alias scope of their own (lib/Target/LdsCopyScopes.cpp): the
/// backend then stops making each of them wait for all copies in flight,
/// which Tessel orders with its own waits.
void scopeLdsReadsBesideCopies(llvm::Module &module);

/// Compiles `module` (LLVM/ROCDL dialect) for `chip`. Errors are emitted as
/// MLIR diagnostics at the module's location.
mlir::FailureOr<GpuModuleBinary> compileGpuModule(mlir::gpu::GPUModuleOp module,
                                                  const Chip &chip,
                                                  const HsacoOptions &options,
                                                  HsacoStage stage);

/// The device library directory `options` resolves to.
std::string resolveDeviceLibsDir(const HsacoOptions &options);

/// Turns LLVM fatal errors (for instance an instruction the backend cannot
/// select) into a one-line `error:` message and exit code 1 instead of an
/// abort. For command-line tools.
void installFatalErrorHandlerForTools(llvm::StringRef toolName);

} // namespace tessel

#endif // TESSEL_TARGET_HSACO_H
