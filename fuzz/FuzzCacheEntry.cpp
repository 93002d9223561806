//===- FuzzCacheEntry.cpp - Fuzz target: the kernel cache reader -*- C++
//-*-===//
//
// The input is an entry's payload: the JSON line of launch facts followed by
// the code object and the emulator IR. The target reads it twice: as found on
// disk (header and all: almost every mutation must fail the checksum) and
// framed with a correct header, so that the facts parser, the code-object
// metadata reader and the consistency checks behind the checksum get the
// mutations. An entry it accepts must answer the key and chip it was read
// for, and must survive being written and read back unchanged.
//
//===----------------------------------------------------------------------===//

#include "FuzzProperty.h"
#include "tessel/Runtime/Cache.h"
#include "tessel/Runtime/Compiler.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>

using namespace tessel;
using tessel::fuzz::violated;

/// The key the seed entries are written for (scripts/fuzz.sh rewrites the
/// keys of the entries it collects to this one).
static constexpr llvm::StringLiteral kKey = "fuzz-key";

static void checkAccepted(const CompiledModule &entry) {
  if (entry.hsaco.empty())
    violated("an entry without a code object was accepted");
  for (const CompiledKernel &kernel : entry.kernels)
    if (kernel.metadata.name != kernel.name || kernel.blockSize == 0 ||
        kernel.grid.tile[0] <= 0 || kernel.grid.tile[1] <= 0 ||
        kernel.grid.splits < 1 || kernel.grid.packedHeads < 1)
      violated("kernel '" + kernel.name + "' was accepted with bad facts");
  std::string again = serializeCompiledModule(entry, kKey);
  std::optional<CompiledModule> reread = deserializeCompiledModule(again, kKey);
  if (!reread || reread->chip != entry.chip || reread->hsaco != entry.hsaco ||
      reread->emulatorIR != entry.emulatorIR ||
      reread->kernels.size() != entry.kernels.size())
    violated("an accepted entry does not survive a write and a read");
  if (deserializeCompiledModule(again, "another-key"))
    violated("an entry answered a key it was not written for");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  if (std::optional<CompiledModule> raw =
          deserializeCompiledModule(bytes, kKey))
    checkAccepted(*raw);
  if (std::optional<CompiledModule> framed =
          deserializeCompiledModule(frameCacheEntry(bytes), kKey))
    checkAccepted(*framed);
  return 0;
}
