//===- TesselAttrs.td - tessel attributes -------------------*- tablegen -*-===//

#ifndef TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_TD
#define TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_TD

include "tessel/Dialect/Tessel/IR/TesselDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

class Tessel_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Tessel_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Tessel_ConfigAttr : Tessel_Attr<"Config", "config"> {
  let summary = "Tiling configuration of one kernel";
  let description = [{
    How one workgroup computes its part of the problem:

    * `tile`: the workgroup tile. For `tessel.matmul` it is `[M, N, K]` (rows
      of C, columns of C, and the K step of the main loop); for
      `tessel.attention` it is `[M, N]` (query rows per workgroup and keys per
      inner-loop step).
    * `waves`: how the workgroup's waves split the tile, `[along M, along N]`.
    * `stages`: software pipeline depth of the K loop (1 means no prefetch).
    * `instr`: optional matrix instruction mnemonic (for example
      `"v_mfma_f32_32x32x8_bf16"`); chosen by the compiler when absent.

    Every tile size is a power of two and each tile dimension is divisible by
    the number of waves along it.

    ```mlir
    #tessel.config<tile = [256, 128, 64], waves = [2, 2], stages = 2,
                   instr = "v_mfma_f32_32x32x8_bf16">
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t", "workgroup tile">:$tile,
                        ArrayRefParameter<"int64_t", "waves along M and N">:$waves,
                        "int64_t":$stages,
                        OptionalParameter<"::mlir::StringAttr">:$instr);
  let assemblyFormat = [{
    `<` `tile` `=` `[` $tile `]` `,` `waves` `=` `[` $waves `]` `,`
        `stages` `=` $stages (`,` `instr` `=` $instr^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Total number of waves of the workgroup.
    int64_t getNumWaves() const;
  }];
}

#endif // TESSEL_DIALECT_TESSEL_IR_TESSELATTRS_TD
