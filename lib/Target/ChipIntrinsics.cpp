//===- ChipIntrinsics.cpp - Intrinsics a chip lacks, before codegen -------===//

#include "tessel/Target/ChipIntrinsics.h"
#include "tessel/Target/Mma.h"

#include "llvm/ADT/StringSwitch.h"

#include <string>

using namespace mlir;
using namespace tessel;

namespace {
/// Which chips have a lane-permute op (the AMDGPU ISA manuals of each
/// generation; docs/hardware.md).
enum class LaneOpNeeds { Nothing, Rdna, Rdna3OrLater, Gfx950 };
} // namespace

static LaneOpNeeds laneOpNeeds(StringRef name) {
  return llvm::StringSwitch<LaneOpNeeds>(name)
      .Cases({"rocdl.permlanex16", "rocdl.permlane16"}, LaneOpNeeds::Rdna)
      .Case("rocdl.permlane64", LaneOpNeeds::Rdna3OrLater)
      .Cases({"rocdl.permlane16.swap", "rocdl.permlane32.swap"},
             LaneOpNeeds::Gfx950)
      .Default(LaneOpNeeds::Nothing);
}

static std::optional<std::string> laneOpProblem(StringRef name,
                                                const Chip &chip) {
  switch (laneOpNeeds(name)) {
  case LaneOpNeeds::Nothing:
    return std::nullopt;
  case LaneOpNeeds::Rdna:
    if (chip.isRDNA())
      return std::nullopt;
    return std::string("it exists on RDNA chips (gfx10 and later) only");
  case LaneOpNeeds::Rdna3OrLater:
    if (chip.isRDNA() && chip.isaVersion() >= 11000)
      return std::nullopt;
    return std::string("it exists on gfx11 and later only");
  case LaneOpNeeds::Gfx950:
    if (chip.name == "gfx950")
      return std::nullopt;
    return std::string("it exists on gfx950 only");
  }
  return std::nullopt;
}

static std::optional<std::string> matrixOpProblem(StringRef name,
                                                  const Chip &chip) {
  bool isMfma =
      name.starts_with("rocdl.mfma.") || name.starts_with("rocdl.smfmac.");
  bool isWmma = name.starts_with("rocdl.wmma.");
  if (!isMfma && !isWmma)
    return std::nullopt;
  if (isMfma && !chip.isCDNA())
    return std::string("MFMA instructions exist on CDNA chips only");
  if (isWmma && !chip.isRDNA())
    return std::string("WMMA instructions exist on RDNA3 and later only");
  // An instruction the catalogue lists, but not for this chip. Ops outside
  // the catalogue are left to the backend.
  llvm::SmallVector<const MmaInstr *, 2> known =
      lookupMmaByName(getRocdlOpMnemonic(name));
  if (known.empty() || llvm::any_of(known, [&](const MmaInstr *instr) {
        return instr->isAvailableOn(chip);
      }))
    return std::nullopt;
  std::string chips;
  for (const MmaInstr *instr : known)
    chips += (chips.empty() ? "" : ", ") + instr->getChipNames();
  return "the instruction exists on " + chips + " only";
}

LogicalResult tessel::verifyIntrinsicsForChip(gpu::GPUModuleOp module,
                                              const Chip &chip) {
  bool ok = true;
  module.walk([&](Operation *op) {
    StringRef name = op->getName().getStringRef();
    if (!name.starts_with("rocdl."))
      return;
    std::optional<std::string> problem = laneOpProblem(name, chip);
    if (!problem)
      problem = matrixOpProblem(name, chip);
    if (!problem)
      return;
    op->emitError() << "'" << name << "' is not available on " << chip.name
                    << " (" << chip.architecture << "): " << *problem;
    ok = false;
  });
  return success(ok);
}
