//===- TesselDialect.td - The tessel dialect ----------------*- tablegen -*-===//
//
// The tessel dialect: tiled matmul and attention for AMD GPUs.
//
//===----------------------------------------------------------------------===//

#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_TD
#define TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_TD

include "mlir/IR/OpBase.td"

def Tessel_Dialect : Dialect {
  let name = "tessel";
  let cppNamespace = "::tessel";
  let summary = "Tiled matmul and attention kernels for AMD GPUs";
  let description = [{
    The `tessel` dialect describes AI kernels at the levels of the Tessel
    compiler. At the *problem level* (L0) one `func.func` is one kernel whose
    body is a single problem op, `tessel.matmul` or `tessel.attention`, working
    in destination-passing style on memrefs: transposes and batch come from
    memref shapes and strides, dynamic sizes from `?` dimensions. An optional
    `#tessel.config` fixes the tiling (tile sizes, waves, pipeline stages,
    matrix instruction); without it the compiler chooses one.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class Tessel_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tessel_Dialect, mnemonic, traits>;

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELDIALECT_TD
