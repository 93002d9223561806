//===- FuzzProperty.h - Properties the fuzz targets check -------*- C++ -*-===//

#ifndef TESSEL_FUZZ_FUZZPROPERTY_H
#define TESSEL_FUZZ_FUZZPROPERTY_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace tessel::fuzz {
/// A property of accepted input broke: abort, so that libFuzzer saves the
/// input as a crash and the replay program fails.
[[noreturn]] inline void violated(const llvm::Twine &what) {
  llvm::errs() << "fuzz property violated: " << what << "\n";
  std::abort();
}
} // namespace tessel::fuzz

#endif // TESSEL_FUZZ_FUZZPROPERTY_H
