// RUN: tessel-opt %s --tessel-tile | FileCheck %s

// Split-K matmul becomes two kernels taking the function's arguments plus a
// workspace of partial accumulators ([batch,] splits, M, N): the split
// kernel (z = batch x splits; its split's K range, a whole number of K
// steps: 640 / 4 = 160 rounds up to 192; the partial to the workspace, no
// epilogue) and the combine kernel (the partials summed in split order,
// then the epilogue and C).
// CHECK-LABEL: func.func @skinny__split
// CHECK-SAME: %[[C:[a-z0-9]+]]: memref<2x16x64xbf16>, %[[W:[a-z0-9]+]]: memref<2x4x16x64xf32>
// CHECK-SAME: tessel.plan_of = "skinny", tessel.plan_stage = 0 : i64, tessel.splits = 4 : i64
// CHECK: %[[Z:.*]] = tessel.program_id 2
// CHECK: %[[S:.*]] = arith.remui %[[Z]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.divui %[[Z]], %{{.*}} : index
// CHECK: %[[CHUNK:.*]] = arith.constant 192 : index
// CHECK: %[[BEGIN:.*]] = arith.muli %[[S]], %[[CHUNK]] : index
// CHECK: %[[LIMIT:.*]] = arith.addi %[[BEGIN]], %[[CHUNK]] : index
// CHECK: %[[END:.*]] = arith.minui %{{.*}}, %[[LIMIT]] : index
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// CHECK: tessel.dot
// CHECK: tessel.store %{{.*}}, %[[W]][%[[B]], %[[S]], %{{.*}}, %{{.*}}] in_bounds
// CHECK-NOT: math.
// CHECK-NOT: tessel.store
// CHECK-LABEL: func.func @skinny__combine
// CHECK-SAME: tessel.plan_of = "skinny", tessel.plan_stage = 1 : i64, tessel.splits = 4 : i64
// CHECK: %[[B2:.*]] = tessel.program_id 2
// CHECK: scf.for %[[SPLIT:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[PART:.*]] = tessel.load %{{.*}}[%[[B2]], %[[SPLIT]], %{{.*}}, %{{.*}}] in_bounds : memref<2x4x16x64xf32>
// CHECK: arith.addf %{{.*}}, %[[PART]]
// CHECK-NOT: tessel.dot
// CHECK: math.tanh
// CHECK: tessel.store %{{.*}}, %arg2
// CHECK-NOT: func.func @skinny(
func.func @skinny(%a: memref<2x16x640xbf16>, %b: memref<2x640x64xbf16>, %c: memref<2x16x64xbf16>) {
  tessel.matmul ins(%a, %b : memref<2x16x640xbf16>, memref<2x640x64xbf16>) outs(%c : memref<2x16x64xbf16>) epilogue {
  ^bb0(%acc: f32):
    %t = math.tanh %acc : f32
    %r = arith.truncf %t : f32 to bf16
    tessel.yield %r : bf16
  } {config = #tessel.config<tile = [16, 32, 64], waves = [1, 2], stages = 2, instr = "v_mfma_f32_16x16x16_bf16", splits = 4>}
  return
}
