//===- TesselDialect.cpp - The tessel dialect -------------------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"

#include "tessel/Dialect/Tessel/IR/TesselTypes.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace tessel;

#include "tessel/Dialect/Tessel/IR/TesselOpsDialect.cpp.inc"

namespace {
/// Short aliases for the layouts tile programs are full of, as Triton's
/// #blocked and #mma: `#mma = #tessel.mma<...>` at the top of the module.
struct TesselOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<MmaAttr>(attr))
      os << "mma";
    else if (isa<MmaOperandAttr>(attr))
      os << "mma_operand";
    else if (isa<BlockedAttr>(attr))
      os << "blocked";
    else if (isa<SwizzleAttr>(attr))
      os << "swizzle";
    else if (isa<LinearAttr>(attr))
      os << "linear";
    else
      return AliasResult::NoAlias;
    return AliasResult::OverridableAlias;
  }
};
} // namespace

void TesselDialect::initialize() {
  addInterfaces<TesselOpAsmInterface>();
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/Tessel/IR/TesselOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

#define GET_TYPEDEF_CLASSES
#include "tessel/Dialect/Tessel/IR/TesselOpsTypes.cpp.inc"

void TesselDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tessel/Dialect/Tessel/IR/TesselOpsTypes.cpp.inc"
      >();
}

LogicalResult LdsType::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t slots, ArrayRef<int64_t> shape,
                              Type elementType, Attribute layout) {
  if (slots < 1)
    return emitError() << "an LDS buffer has at least one slot, got " << slots;
  if (shape.size() != 2 || llvm::any_of(shape, [](int64_t size) {
        return size <= 0 || !llvm::isPowerOf2_64(size);
      }))
    return emitError() << "LDS tiles are 2-D with power-of-two sizes";
  FailureOr<LinearLayout> memory = getLinearLayout(layout, shape, emitError);
  if (failed(memory))
    return failure();
  if (!memory->hasInDim(dims::kOffset))
    return emitError() << "the layout of an LDS buffer maps 'offset' to the "
                          "tile (#tessel.swizzle or #tessel.linear<offset = "
                          "...>), got "
                       << layout;
  if (!memory->isInjective() || !memory->isSurjective())
    return emitError() << "the LDS layout must place every element exactly "
                          "once";
  return success();
}

int64_t LdsType::getSlotElements() const {
  return getShape()[0] * getShape()[1];
}

int64_t LdsType::getSizeInBytes() const {
  return getSlots() * getSlotElements() *
         llvm::divideCeil(getElementType().getIntOrFloatBitWidth(), 8);
}
