//===- Version.cpp - Tessel's version and build identity ------------------===//

#include "tessel/Support/Version.h"
#include "tessel-c/Tessel.h"
#include "tessel/Support/GitRevision.inc"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"

std::string tessel::getVersion() {
  return llvm::formatv("{0}.{1}.{2}", TESSEL_VERSION_MAJOR,
                       TESSEL_VERSION_MINOR, TESSEL_VERSION_PATCH)
      .str();
}

const char *tessel::getGitRevision() { return TESSEL_GIT_REVISION; }

const std::string &tessel::getFullVersion() {
  static const std::string text =
      llvm::formatv("{0} (git {1}, LLVM {2})", getVersion(), getGitRevision(),
                    LLVM_VERSION_STRING)
          .str();
  return text;
}

void tessel::printVersion(llvm::raw_ostream &os) {
  os << "Tessel version " << getVersion() << "\n"
     << "  git revision " << getGitRevision() << "\n"
     << "  LLVM version " << LLVM_VERSION_STRING << " (MLIR, lld and the "
     << "AMDGPU backend of the same release)\n";
}

void tessel::registerVersionPrinter() {
  llvm::cl::SetVersionPrinter(printVersion);
}
