//===- TesselTypes.td - tessel types --------------------------*- tablegen -*-===//

#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELTYPES_TD
#define TESSEL_DIALECT_TESSEL_IR_TESSELTYPES_TD

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

def Tessel_LdsType : TypeDef<Tessel_Dialect, "Lds"> {
  let mnemonic = "lds";
  let summary = "A tile buffer in LDS (workgroup memory)";
  let description = [{
    `slots` copies of a 2-D tile of `shape` in LDS, laid out by `layout`, a
    memory layout (`#tessel.swizzle` or `#tessel.linear` over `offset`).
    Several slots multi-buffer a software-pipelined loop.

    ```mlir
    !tessel.lds<2 x [128, 64], bf16, #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>>
    ```
  }];
  let parameters = (ins "int64_t":$slots,
                        ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "::mlir::Attribute":$layout);
  let assemblyFormat = [{
    `<` $slots `x` `[` $shape `]` `,` $elementType `,` $layout `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Elements of one slot.
    int64_t getSlotElements() const;
    /// Bytes of all slots.
    int64_t getSizeInBytes() const;
  }];
}

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELTYPES_TD
