//===- FuzzIRPipeline.cpp - Fuzz target: IR text to code object -*- C++ -*-===//
//
// Compiles arbitrary text through Tessel's whole pipeline, exactly as
// tesselCompile does on a cache miss (input limits, parsing, verifiers,
// select-config to ROCDL, the AMDGPU backend, lld), but without the C API's
// crash-recovery context: a crash must reach the fuzzer, not become an error
// value. The chip follows from the input's length so that one corpus covers
// gfx90a, gfx942 and gfx950. What compiles must name the chip it was built
// for and give every kernel its launch facts.
//
//===----------------------------------------------------------------------===//

#include "FuzzProperty.h"
#include "tessel/Runtime/Compiler.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

using tessel::fuzz::violated;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const kChips[] = {"gfx90a", "gfx942", "gfx950"};
  tessel::CompileOptions options;
  options.chip = kChips[size % 3];
  llvm::StringRef ir(reinterpret_cast<const char *>(data), size);
  auto compiled = tessel::compileUncached(ir, options);
  if (!compiled) {
    llvm::consumeError(compiled.takeError());
    return 0;
  }
  const tessel::CompiledModule &module = **compiled;
  if (module.chip != options.chip)
    violated("a module compiled for " + options.chip + " names chip " +
             module.chip);
  if (module.hsaco.empty() || module.emulatorIR.empty())
    violated("a compile succeeded without a code object or emulator form");
  for (const tessel::CompiledKernel &kernel : module.kernels)
    if (kernel.metadata.name != kernel.name || kernel.blockSize == 0 ||
        kernel.blockSize > 1024)
      violated("kernel '" + kernel.name + "' has inconsistent launch facts");
  return 0;
}
