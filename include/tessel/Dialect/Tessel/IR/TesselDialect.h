//===- TesselDialect.h - The tessel dialect ---------------------*- C++ -*-===//

#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H
#define TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "tessel/Dialect/Tessel/IR/TesselOpsDialect.h.inc"

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_H
