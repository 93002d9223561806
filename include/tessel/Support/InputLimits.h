//===- InputLimits.h - Bounds on IR text before it is parsed ----*- C++ -*-===//
//
// MLIR's parser recurses once per nesting level of regions, attributes and
// types, so deeply nested input overflows the stack; and some well-formed
// looking input reaches parser bugs (`array<index: 1>` asks a dense array
// for the bit width of `index`). Tessel checks the text first and answers
// with a diagnostic at the offending location instead of crashing. The
// upstream bugs are listed in docs/robustness.md.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_INPUTLIMITS_H
#define TESSEL_SUPPORT_INPUTLIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <optional>
#include <string>

namespace tessel {

/// Deepest bracket nesting accepted ((), [], {}, <>): far beyond any real
/// kernel, far below what exhausts an 8 MiB stack in the parser.
constexpr unsigned kMaxInputNesting = 256;
/// Largest IR text accepted (a large kernel's problem IR is a few KiB).
constexpr size_t kMaxInputBytes = size_t(64) << 20;

struct InputViolation {
  size_t offset; // where in the text
  std::string message;
};

/// The first place `text` breaks a limit, if any.
std::optional<InputViolation> checkInputLimits(llvm::StringRef text);

/// Checks the main buffer of `sourceMgr`; on a violation prints it as an
/// error at its location to `os` and returns false.
bool checkInputLimits(const llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os);

} // namespace tessel

#endif // TESSEL_SUPPORT_INPUTLIMITS_H
