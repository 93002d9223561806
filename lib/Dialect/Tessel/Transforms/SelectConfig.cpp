//===- SelectConfig.cpp - Choose and check matmul configs -------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"
#include "tessel/Dialect/Tessel/Transforms/TuningDatabase.h"

#include "mlir/AsmParser/AsmParser.h"

#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "tessel-select-config"

namespace tessel {
#define GEN_PASS_DEF_TESSELSELECTCONFIGPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

/// The larger of the scores' (Q, K) and the values' (V, O) head dims: the
/// config rules and checks hold for both.
static int64_t getLargestHeadDim(AttentionOp attention) {
  return std::max(attention.getQ().getType().getDimSize(3),
                  attention.getV().getType().getDimSize(3));
}

namespace {
struct SelectConfigPass
    : public tessel::impl::TesselSelectConfigPassBase<SelectConfigPass> {
  using Base::Base;

  std::optional<TuningDatabase> database;

  LogicalResult initialize(MLIRContext *context) override {
    if (tuningDb.empty())
      return success();
    llvm::Expected<TuningDatabase> loaded = TuningDatabase::load(tuningDb);
    if (!loaded)
      return emitError(UnknownLoc::get(context))
             << llvm::toString(loaded.takeError());
    database = std::move(*loaded);
    return success();
  }

  /// The config the tuning database holds for this problem on `target`:
  /// null when it has none, failure when its entry is not a config.
  FailureOr<ConfigAttr> lookupTunedConfig(MatmulOp matmul, const Chip &target) {
    if (!database)
      return ConfigAttr();
    const TuningEntry *entry =
        database->lookup(target.name, getMatmulProblemKey(matmul));
    if (!entry)
      return ConfigAttr();
    auto config = llvm::dyn_cast_or_null<ConfigAttr>(
        parseAttribute(entry->config, &getContext()));
    if (!config)
      return matmul.emitOpError()
             << "tuning database '" << tuningDb << "' holds '" << entry->config
             << "' for this problem, which is not a #tessel.config";
    if (explain)
      matmul.emitRemark() << "chose " << config << " from the tuning database '"
                          << tuningDb << "' (" << entry->source << ")";
    return config;
  }

  /// The fastest config by the analytical model; with `explain`, a remark
  /// on the op ranks the best candidates and says why the winner won.
  ConfigAttr chooseMatmulConfig(MatmulOp matmul, const Chip &target) {
    std::vector<RankedMatmulConfig> ranked = rankMatmulConfigs(
        &getContext(), target, matmul.getA().getType().getElementType(),
        matmul.getB().getType().getElementType(),
        matmul.getC().getType().getElementType(),
        getMatmulProblemSizes(matmul));
    if (ranked.empty())
      return {};
    if (explain)
      explainChoice(matmul, target, ranked);
    return ranked.front().config;
  }

  void explainChoice(MatmulOp matmul, const Chip &target,
                     ArrayRef<RankedMatmulConfig> ranked) {
    InFlightDiagnostic remark = matmul.emitRemark();
    const MatmulEstimate &best = ranked.front().estimate;
    remark << "chose " << ranked.front().config << " of " << ranked.size()
           << " candidates on " << target.name << ": predicted "
           << llvm::formatv("{0:F1} us, {1:F1}% of peak", best.seconds * 1e6,
                            best.percentOfPeak)
           << "; " << best.explanation;
    for (const RankedMatmulConfig &candidate :
         ranked.drop_front().take_front(explainCount)) {
      const MatmulEstimate &estimate = candidate.estimate;
      remark.attachNote() << "runner-up " << candidate.config << ": "
                          << llvm::formatv("{0:F1} us ({1:F2}x)",
                                           estimate.seconds * 1e6,
                                           estimate.seconds / best.seconds)
                          << "; " << estimate.explanation;
    }
  }

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
        FailureOr<ConfigAttr> tuned = lookupTunedConfig(matmul, *target);
        if (failed(tuned))
          return WalkResult::interrupt();
        config = *tuned ? *tuned : chooseMatmulConfig(matmul, *target);
        if (!config) {
          matmul.emitOpError() << explainUnsupportedTypes(*target, a, b);
          return WalkResult::interrupt();
        }
        matmul.setConfigAttr(config);
      } else if (!config.getInstr()) {
        // A config without an instruction gets the best one for its tile.
        ArrayRef<int64_t> tile = config.getTile();
        bool wide = tile.size() == 3 && tile[0] / config.getWaves()[0] >= 32 &&
                    tile[1] / config.getWaves()[1] >= 32;
        const MmaInstr *instr = chooseMmaInstr(*target, a, b, wide ? 32 : 16);
        if (!instr && wide) // the WMMA chips have 16x16 instructions only
          instr = chooseMmaInstr(*target, a, b, 16);
        if (!instr) {
          matmul.emitOpError() << explainUnsupportedTypes(*target, a, b);
          return WalkResult::interrupt();
        }
        config = ConfigAttr::get(
            &getContext(), config.getTile(), config.getWaves(),
            config.getStages(), StringAttr::get(&getContext(), instr->name),
            config.getSplits(), config.getStreamK(), config.getScoresAhead(),
            config.getPingPong(), config.getUnrolled(),
            config.getDirectCopies());
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
        // Packed (varlen) sequences: the per-sequence lengths are run-time
        // values, whatever the packed total.
        bool varlen = attention.isVarlen();
        config = getDefaultAttentionConfig(
            &getContext(), *target, element,
            varlen ? ShapedType::kDynamic
                   : attention.getQ().getType().getDimSize(2),
            getAttentionKeyCapacity(attention), getLargestHeadDim(attention),
            attention.getKeyWindow(), getPackableQueryHeadGroup(attention));
        if (!config) {
          std::string why = explainUnsupportedTypes(*target, element, element);
          if (why.empty())
            why = (target->name + " has no matrix instruction for ").str() +
                  llvm::formatv("{0}", element).str();
          attention.emitOpError() << why;
          return WalkResult::interrupt();
        }
        // A paged cache's key blocks lie within one page: 16-key pages take
        // the 16-row instruction with 16 keys per step (4 values per lane)
        // on the CDNA chips, one step a block.
        // A paged key loop keeps its own loads (its page views are built
        // in the loop): no second LDS slot (stages at most 2).
        // A decode block (at most 16 queries) of up to 32 rows keeps
        // 32-key blocks in a paged cache (with 64-key pages: 278 VGPRs +
        // 22 AGPRs on gfx942).
        int64_t pageSize = attention.isPaged() ? attention.getPageSize() : 0;
        int64_t seqQ = attention.getQ().getType().getDimSize(2);
        bool smallDecodeBlock = !ShapedType::isDynamic(seqQ) && seqQ <= 16 &&
                                config.getTile()[0] <= 32;
        int64_t pageKeys =
            smallDecodeBlock ? std::min<int64_t>(pageSize, 32) : pageSize;
        if (pageSize &&
            (config.getTile()[1] > pageKeys || config.getStages() > 2)) {
          StringAttr instr = config.getInstr();
          int64_t keys = std::min(config.getTile()[1], pageKeys);
          if (target->isCDNA() && keys < 32)
            if (const MmaInstr *narrow = chooseMmaInstr(
                    *target, element, element, 16, /*xf32=*/false, 4))
              instr = StringAttr::get(&getContext(), narrow->name);
          // scores_ahead was chosen for the 32-row instruction.
          config = ConfigAttr::get(
              &getContext(), {config.getTile()[0], keys}, config.getWaves(),
              std::min<int64_t>(config.getStages(), 2), instr,
              config.getSplits(),
              /*streamK=*/0,
              config.getScoresAhead() && instr == config.getInstr());
        }
        if (config.getSplits() > 1)
          config = ConfigAttr::get(
              &getContext(), config.getTile(), config.getWaves(),
              config.getStages(), config.getInstr(),
              chooseAttentionSplits(attention, config, *target),
              /*streamK=*/0, config.getScoresAhead(), config.getPingPong());
        config = chooseAttentionPingPong(attention, config, *target);
        config = chooseAttentionStreamK(attention, config, *target);
        config = chooseAttentionUnroll(attention, config, *target);
        attention.setConfigAttr(config);
      }
      if (failed(checkAttentionConfig(config, *target, element,
                                      getLargestHeadDim(attention),
                                      [&] { return attention.emitOpError(); })))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    result = getOperation().walk([&](AttentionGradOp grad) {
      Type element = grad.getQ().getType().getElementType();
      int64_t headDim = grad.getQ().getType().getDimSize(3),
              headDimV = grad.getV().getType().getDimSize(3);
      ConfigAttr config = grad.getConfigAttr();
      if (!config) {
        config = getDefaultAttentionGradConfig(&getContext(), *target, element,
                                               std::max(headDim, headDimV));
        // Without a default the check below says why.
        if (config)
          grad.setConfigAttr(config);
      }
      if (!config) {
        if (failed(checkAttentionGradConfig(
                ConfigAttr::get(&getContext(), {64, 16}, {4, 1}, 1,
                                StringAttr(), 1, /*streamK=*/0),
                *target, element, headDim, headDimV,
                [&] { return grad.emitOpError(); })))
          return WalkResult::interrupt();
        grad.emitOpError() << target->name << " has no matrix instruction for "
                           << element;
        return WalkResult::interrupt();
      }
      if (failed(checkAttentionGradConfig(config, *target, element, headDim,
                                          headDimV,
                                          [&] { return grad.emitOpError(); })))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
