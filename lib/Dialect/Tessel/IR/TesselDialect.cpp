//===- TesselDialect.cpp - The tessel dialect -------------------*- C++ -*-===//

#include "tessel/Dialect/Tessel/IR/TesselDialect.h"
#include "tessel/Dialect/Tessel/IR/TesselAttrs.h"
#include "tessel/Dialect/Tessel/IR/TesselOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tessel;

#include "tessel/Dialect/Tessel/IR/TesselOpsDialect.cpp.inc"

void TesselDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessel/Dialect/Tessel/IR/TesselOps.cpp.inc"
      >();
  registerAttributes();
}
