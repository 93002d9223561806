//===- SelectMfma.cpp - MFMA operand layouts for dots -----------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselOps.h"
#include "tessel/Dialect/Tessel/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace tessel {
#define GEN_PASS_DEF_TESSELSELECTMFMAPASS
#include "tessel/Dialect/Tessel/Transforms/Passes.h.inc"
} // namespace tessel

using namespace mlir;
using namespace tessel;

/// The K packing of the operands of `instr` for a K tile of `tileK`: the
/// instruction's elements per lane, doubled while a lane's run stays within
/// 16 bytes (one ds_read_b128) and the tile holds whole lane passes.
static int64_t chooseKWidth(const MmaInstr &instr, unsigned waveSize,
                            int64_t tileK, unsigned elementBytes) {
  int64_t kWidth = instr.getOperandElementsPerLane(waveSize);
  int64_t lanesAlongK = waveSize / instr.m;
  while (2 * kWidth * elementBytes <= 16 &&
         tileK % (2 * kWidth * lanesAlongK) == 0)
    kWidth *= 2;
  return kWidth;
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
      // accumulator layout, which is the hardware operand layout of the
      // next instruction when K runs along the accumulator's rows: both
      // operands then take the instruction's own K packing, so that the
      // conversion is the identity and P never leaves its registers.
      bool fromAccumulator = llvm::any_of(
          ArrayRef<Value>{dot.getA(), dot.getB()}, [](Value operand) {
            return isa<MmaAttr>(
                cast<RankedTensorType>(operand.getType()).getEncoding());
          });
      auto convert = [&](Value operand, unsigned index) -> Value {
        auto type = cast<RankedTensorType>(operand.getType());
        if (isa<MmaOperandAttr>(type.getEncoding()))
          return operand;
        int64_t tileK = type.getDimSize(index == 0 ? 1 : 0);
        int64_t kWidth =
            fromAccumulator
                ? instr.getOperandElementsPerLane(waveSize)
                : chooseKWidth(
                      instr, waveSize, tileK,
                      llvm::divideCeil(
                          type.getElementType().getIntOrFloatBitWidth(), 8));
        auto layout =
            MmaOperandAttr::get(&getContext(), index, accLayout, kWidth);
        // An operand defined outside the dot's loop (attention's Q) converts
        // once, where it is defined: it then stays in registers for the
        // whole loop instead of going through LDS every iteration.
        auto convertedType = RankedTensorType::get(
            type.getShape(), type.getElementType(), layout);
        Operation *producer = operand.getDefiningOp();
        if (!producer || producer->getBlock() == dot->getBlock()) {
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
