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
// A branch on tessel.wave_any (attention's lazy rescale): each lane ORs its
// registers of the i1 tile, the wave's ballot decides. An scf.if marked
// tessel.unlikely branches on the condition expected false (LLVM's branch
// weights, which lay its block out of the loop's line).
// CHECK-LABEL: gpu.func @rare_branch
// CHECK: %[[LANE:.*]] = vector.reduction <or>, %{{.*}} : vector<1xi1> into i1
// CHECK-NEXT: %[[BALLOT:.*]] = rocdl.ballot %[[LANE]] : i64
// CHECK-NEXT: %[[ANY:.*]] = arith.cmpi ne, %[[BALLOT]], %c0_i64 : i64
// CHECK-NEXT: %[[EXPECTED:.*]] = llvm.intr.expect %[[ANY]], %false : i1
// CHECK-NEXT: scf.if %[[EXPECTED]] -> (vector<16xf32>)
// A wave_any of scores compared with a limit broadcast from one value per
// column (the lazy rescale's test): each lane takes the maximum of its 16
// registers, which all share its column's limit, and compares once; no
// per-register compare is ORed.
// CHECK-LABEL: gpu.func @scores_above
// CHECK-NOT: vector.reduction <or>
// CHECK-COUNT-15: arith.maxnumf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[ABOVE:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: rocdl.ballot %[[ABOVE]] : i64
// CHECK-NOT: arith.maxnumf
#mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#column = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
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

  func.func @rare_branch(%out: memref<32x32xf32>, %limit: i32) attributes {tessel.workgroup_size = 64 : i64, tessel.tile = array<i64: 32, 32>} {
    %c0 = arith.constant 0 : index
    %column = tessel.iota 1 : tensor<1x32xi32, #column>
    %limits = tensor.splat %limit : tensor<1x32xi32, #column>
    %grown = arith.cmpi slt, %column, %limits : tensor<1x32xi32, #column>
    %acc = arith.constant dense<1.000000e+00> : tensor<32x32xf32, #mma>
    %half = arith.constant dense<5.000000e-01> : tensor<32x32xf32, #mma>
    %any = tessel.wave_any %grown : tensor<1x32xi1, #column>
    %r = scf.if %any -> (tensor<32x32xf32, #mma>) {
      %scaled = arith.mulf %acc, %half : tensor<32x32xf32, #mma>
      scf.yield %scaled : tensor<32x32xf32, #mma>
    } else {
      scf.yield %acc : tensor<32x32xf32, #mma>
    } {tessel.unlikely}
    tessel.store %r, %out[%c0, %c0] in_bounds : tensor<32x32xf32, #mma>, memref<32x32xf32>
    return
  }

  func.func @scores_above(%s: memref<32x32xf32>, %m: memref<1x32xf32>, %out: memref<32x32xf32>) attributes {tessel.workgroup_size = 64 : i64, tessel.tile = array<i64: 32, 32>} {
    %c0 = arith.constant 0 : index
    %scores = tessel.load %s[%c0, %c0] in_bounds : memref<32x32xf32> -> tensor<32x32xf32, #mma>
    %limit = tessel.load %m[%c0, %c0] in_bounds : memref<1x32xf32> -> tensor<1x32xf32, #column>
    %limits = tessel.broadcast %limit : tensor<1x32xf32, #column> -> tensor<32x32xf32, #mma>
    %above = arith.cmpf ogt, %scores, %limits : tensor<32x32xf32, #mma>
    %any = tessel.wave_any %above : tensor<32x32xi1, #mma>
    %half = arith.constant dense<5.000000e-01> : tensor<32x32xf32, #mma>
    %r = scf.if %any -> (tensor<32x32xf32, #mma>) {
      %scaled = arith.mulf %scores, %half : tensor<32x32xf32, #mma>
      scf.yield %scaled : tensor<32x32xf32, #mma>
    } else {
      scf.yield %scores : tensor<32x32xf32, #mma>
    } {tessel.unlikely}
    tessel.store %r, %out[%c0, %c0] in_bounds : tensor<32x32xf32, #mma>, memref<32x32xf32>
    return
  }
}
