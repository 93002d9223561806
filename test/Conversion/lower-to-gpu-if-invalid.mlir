// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" --verify-diagnostics

// Tile programs branch only around work (split-K's last split): an scf.if
// with results or an else branch has no lowering.
module {
  func.func @branch(%c: memref<4xi32>, %flag: i1) attributes {tessel.workgroup_size = 64 : i64, tessel.tile = array<i64: 32, 32>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : i32
    // expected-error @+1 {{'scf.if' op with results or an else branch cannot be lowered to GPU code}}
    scf.if %flag {
      memref.store %c1, %c[%c0] : memref<4xi32>
    } else {
      memref.store %c1, %c[%c0] : memref<4xi32>
    }
    return
  }
}
