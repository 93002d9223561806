//===- Version.h - Tessel's version and build identity ----------*- C++ -*-===//
//
// The project version (TESSEL_VERSION_* in tessel-c/Tessel.h), the git
// revision the build came from and the LLVM it links, as every tool's
// --version prints them and the C API and the JIT cache key use them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_SUPPORT_VERSION_H
#define TESSEL_SUPPORT_VERSION_H

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tessel {

/// "0.1.0".
std::string getVersion();
/// The commit of the sources ("1234abcd5678", "...-modified", "unknown").
const char *getGitRevision();
/// "0.1.0 (git 1234abcd5678, LLVM 22.1.0)".
const std::string &getFullVersion();
/// The --version text: Tessel's version and revision, then LLVM's.
void printVersion(llvm::raw_ostream &os);
/// Makes --version of this process's command line print printVersion.
void registerVersionPrinter();

} // namespace tessel

#endif // TESSEL_SUPPORT_VERSION_H
