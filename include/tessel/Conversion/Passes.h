//===- Passes.h - tessel conversion passes ----------------------*- C++ -*-===//

#ifndef TESSEL_CONVERSION_PASSES_H
#define TESSEL_CONVERSION_PASSES_H

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tessel {

#define GEN_PASS_DECL
#include "tessel/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessel/Conversion/Passes.h.inc"

} // namespace tessel

#endif // TESSEL_CONVERSION_PASSES_H
