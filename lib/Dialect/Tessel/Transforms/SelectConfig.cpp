//===- SelectConfig.cpp - Choose and check matmul configs -------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tessel-select-config"

namespace tessel {
#define GEN_PASS_DEF_TESSELSELECTCONFIGPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

namespace {
struct SelectConfigPass
    : public tessel::impl::TesselSelectConfigPassBase<SelectConfigPass> {
  using Base::Base;

  void runOnOperation() override {
    const Chip *target = lookupChip(chip);
    if (!target) {
      getOperation().emitError()
          << "unknown chip '" << chip << "'; known chips: " << knownChipNames();
      return signalPassFailure();
    }
    WalkResult result = getOperation().walk([&](MatmulOp matmul) {
      Type a = matmul.getA().getType().getElementType();
      Type b = matmul.getB().getType().getElementType();
      ConfigAttr config = matmul.getConfigAttr();
      if (!config) {
        MemRefType aType = matmul.getA().getType();
        MemRefType bType = matmul.getB().getType();
        int64_t rank = aType.getRank();
        config = getDefaultMatmulConfig(
            &getContext(), *target, a, b, aType.getDimSize(rank - 2),
            bType.getDimSize(rank - 1), aType.getDimSize(rank - 1));
        if (!config) {
          matmul.emitOpError() << explainUnsupportedTypes(*target, a, b);
          return WalkResult::interrupt();
        }
        matmul.setConfigAttr(config);
        LLVM_DEBUG(llvm::dbgs() << "chose " << config << " for " << a << " x "
                                << b << " on " << target->name << "\n");
      } else if (!config.getInstr()) {
        // A config without an instruction gets the best one for its tile.
        ArrayRef<int64_t> tile = config.getTile();
        bool wide = tile.size() == 3 && tile[0] / config.getWaves()[0] >= 32 &&
                    tile[1] / config.getWaves()[1] >= 32;
        const MmaInstr *instr = chooseMmaInstr(*target, a, b, wide ? 32 : 16);
        if (!instr) {
          matmul.emitOpError() << explainUnsupportedTypes(*target, a, b);
          return WalkResult::interrupt();
        }
        config = ConfigAttr::get(&getContext(), config.getTile(),
                                 config.getWaves(), config.getStages(),
                                 StringAttr::get(&getContext(), instr->name),
                                 config.getSplits());
        matmul.setConfigAttr(config);
      }
      if (failed(checkMatmulConfig(config, *target, a, b,
                                   [&] { return matmul.emitOpError(); })))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    result = getOperation().walk([&](AttentionOp attention) {
      Type element = attention.getQ().getType().getElementType();
      ConfigAttr config = attention.getConfigAttr();
      if (!config) {
        config =
            getDefaultAttentionConfig(&getContext(), *target, element,
                                      attention.getQ().getType().getDimSize(2),
                                      attention.getK().getType().getDimSize(2),
                                      attention.getQ().getType().getDimSize(3));
        if (!config) {
          attention.emitOpError()
              << target->name << " has no matrix instruction for " << element;
          return WalkResult::interrupt();
        }
        attention.setConfigAttr(config);
      }
      if (failed(checkAttentionConfig(config, *target, element,
                                      attention.getQ().getType().getDimSize(3),
                                      [&] { return attention.emitOpError(); })))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
