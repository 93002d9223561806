// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" | FileCheck %s

// Branches of a tile program: one around work (split-K's last split), and
// one with an else branch and results, a tile among them (stream-K's
// pieces). Tiles flow out as the vectors of their registers.
// CHECK-LABEL: gpu.func @branch
// CHECK: %[[R:.*]]:2 = scf.if %{{.*}} -> (i1, vector<16xf32>) {
// CHECK: scf.yield %{{.*}}, %{{.*}} : i1, vector<16xf32>
// CHECK: } else {
// CHECK: memref.store
// CHECK: scf.yield %{{.*}}, %{{.*}} : i1, vector<16xf32>
// CHECK: }
// CHECK: scf.if %[[R]]#0 {
// CHECK: memref.store %{{.*}}, %arg0
#mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
module {
  func.func @branch(%out: memref<32x32xf32>, %c: memref<4xi32>, %flag: i1) attributes {tessel.workgroup_size = 64 : i64, tessel.tile = array<i64: 32, 32>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : i32
    %one = arith.constant dense<1.000000e+00> : tensor<32x32xf32, #mma>
    %two = arith.constant dense<2.000000e+00> : tensor<32x32xf32, #mma>
    %r:2 = scf.if %flag -> (i1, tensor<32x32xf32, #mma>) {
      %true = arith.constant true
      scf.yield %true, %one : i1, tensor<32x32xf32, #mma>
    } else {
      memref.store %c1, %c[%c0] : memref<4xi32>
      %false = arith.constant false
      scf.yield %false, %two : i1, tensor<32x32xf32, #mma>
    }
    scf.if %r#0 {
      tessel.store %r#1, %out[%c0, %c0] in_bounds : tensor<32x32xf32, #mma>, memref<32x32xf32>
    }
    return
  }
}
