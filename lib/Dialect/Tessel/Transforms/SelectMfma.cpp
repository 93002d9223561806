//===- SelectMfma.cpp - MFMA operand layouts for dots -----------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/KernelConfig.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace tessel {
#define GEN_PASS_DEF_TESSELSELECTMFMAPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

/// The consecutive K elements each lane holds in a row of registers of an
/// accumulator tile that is an operand (K along dimension `kDim`): 4 for
/// the MFMA accumulators. That run, as the operands' kWidth, makes the
/// operand layout the accumulator's own.
static int64_t getAccumulatorKRun(RankedTensorType type, unsigned kDim) {
  FailureOr<LinearLayout> layout =
      getTileLayout(type, [] { return InFlightDiagnostic(); });
  if (failed(layout))
    return 1;
  int64_t run = 1;
  for (int32_t bit = 0; bit < layout->getInDimSizeLog2(dims::kRegister);
       ++bit) {
    ArrayRef<int32_t> basis = layout->getBasis(dims::kRegister, bit);
    if (basis[kDim] != run || basis[1 - kDim] != 0)
      break;
    run *= 2;
  }
  return run;
}

namespace {
struct SelectMfmaPass
    : public tessel::impl::TesselSelectMfmaPassBase<SelectMfmaPass> {
  using Base::Base;

  void runOnOperation() override {
    const Chip *target = lookupChip(chip);
    if (!target) {
      getOperation().emitError()
          << "unknown chip '" << chip << "'; known chips: " << knownChipNames();
      return signalPassFailure();
    }
    // Hoisted conversions, shared by every dot that reads the same operand in
    // the same layout (attention's Q in its two key loops).
    llvm::DenseMap<std::pair<Value, Attribute>, Value> hoisted;
    WalkResult result = getOperation().walk([&](DotOp dot) {
      auto accLayout =
          dyn_cast_or_null<MmaAttr>(dot.getC().getType().getEncoding());
      if (!accLayout) {
        dot.emitOpError() << "accumulator must be in a #tessel.mma layout";
        return WalkResult::interrupt();
      }
      const MmaInstr &instr = accLayout.getInstruction();
      if (!instr.isAvailableOn(*target)) {
        dot.emitOpError() << instr.name << " is not available on "
                          << target->name << " (it is on "
                          << instr.getChipNames() << ")";
        return WalkResult::interrupt();
      }
      unsigned waveSize = accLayout.getEffectiveWaveSize();
      // An operand computed by an earlier dot (attention's P) sits in an
      // accumulator layout: runs of 4 K elements per lane, the lane halves
      // 4 apart. With that run as kWidth (the instruction's own packing
      // for 32x32x8 f16, two runs per instruction for gfx950's 32x32x16),
      // both operands take the accumulator's K order, the conversion is
      // the identity and P never leaves its registers.
      std::optional<int64_t> accumulatorRun;
      Value operands[] = {dot.getA(), dot.getB()};
      for (auto [index, operand] : llvm::enumerate(operands))
        if (auto type = cast<RankedTensorType>(operand.getType());
            isa<MmaAttr>(type.getEncoding()))
          accumulatorRun = getAccumulatorKRun(type, index == 0 ? 1 : 0);
      auto convert = [&](Value operand, unsigned index) -> Value {
        auto type = cast<RankedTensorType>(operand.getType());
        if (isa<MmaOperandAttr>(type.getEncoding()))
          return operand;
        int64_t tileK = type.getDimSize(index == 0 ? 1 : 0);
        int64_t kWidth =
            accumulatorRun && !instr.isWmma()
                ? std::min<int64_t>(*accumulatorRun,
                                    instr.getOperandElementsPerLane(waveSize))
                : getOperandKWidth(
                      instr, waveSize, tileK,
                      llvm::divideCeil(
                          type.getElementType().getIntOrFloatBitWidth(), 8));
        auto layout =
            MmaOperandAttr::get(&getContext(), index, accLayout, kWidth);
        // An operand defined outside the dot's loop (attention's Q) converts
        // once, where it is defined: it then stays in registers for the
        // whole loop instead of going through LDS every iteration. So do
        // its uses next to it (attention's first block computed ahead of
        // the key loop), which share that conversion.
        auto convertedType = RankedTensorType::get(
            type.getShape(), type.getElementType(), layout);
        Operation *producer = operand.getDefiningOp();
        bool usedInNestedBlocks =
            producer && llvm::any_of(operand.getUsers(), [&](Operation *user) {
              return user->getBlock() != producer->getBlock();
            });
        if (!producer ||
            (producer->getBlock() == dot->getBlock() && !usedInNestedBlocks)) {
          OpBuilder b(dot);
          return ConvertLayoutOp::create(b, dot.getLoc(), convertedType,
                                         operand)
              .getResult();
        }
        Value &converted = hoisted[{operand, layout}];
        if (!converted) {
          OpBuilder b(dot);
          b.setInsertionPointAfter(producer);
          converted =
              ConvertLayoutOp::create(b, dot.getLoc(), convertedType, operand);
        }
        return converted;
      };
      dot.getAMutable().assign(convert(dot.getA(), 0));
      dot.getBMutable().assign(convert(dot.getB(), 1));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
