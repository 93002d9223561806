//===- Passes.h - Emulator passes -------------------------------*- C++ -*-===//

#ifndef TESSEL_EMULATOR_PASSES_H
#define TESSEL_EMULATOR_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessel {

#define GEN_PASS_DECL
#include "tessel/Emulator/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Emulator/Passes.h.inc"

/// Names of the runtime entry points the lowering calls.
namespace emu {
inline constexpr llvm::StringLiteral kLdsBytesAttr = "tessel.emu.lds_bytes";
inline constexpr llvm::StringLiteral kChipAttr = "tessel.emu.chip";
/// On a host module: the source location ("file:line:col", or "" when
/// unknown) of every barrier, indexed by the site number its runtime call
/// passes, for the runtime's reports.
inline constexpr llvm::StringLiteral kSitesAttr = "tessel.emu.sites";
} // namespace emu

} // namespace tessel

#endif // TESSEL_EMULATOR_PASSES_H
