//===- LlvmIrText.h - LLVM IR from and to text in unit tests ----*- C++ -*-===//
//
// The IR rewrites of lib/Target are tested on hand-written LLVM IR: parsed
// from a string (errors printed under the test's name) and printed back
// for the checks.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_UNITTESTS_TARGET_LLVMIRTEXT_H
#define TESSEL_UNITTESTS_TARGET_LLVMIRTEXT_H

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace tessel::testing {

/// The module `text` describes, or null after printing why under `test`.
inline std::unique_ptr<llvm::Module> parseLlvmIr(llvm::LLVMContext &context,
                                                 llvm::StringRef text,
                                                 llvm::StringRef test) {
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(text, error, context);
  if (!module)
    error.print(test.str().c_str(), llvm::errs());
  return module;
}

/// `module` as text.
inline std::string printLlvmIr(const llvm::Module &module) {
  std::string text;
  llvm::raw_string_ostream(text) << module;
  return text;
}

} // namespace tessel::testing

#endif // TESSEL_UNITTESTS_TARGET_LLVMIRTEXT_H
