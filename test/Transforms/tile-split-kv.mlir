// RUN: tessel-opt %s --tessel-tile | FileCheck %s

// Split-KV attention becomes two kernels taking the function's arguments
// plus a workspace: the split kernel (z = batch x splits, one share of the
// keys each, partial O and log2-sum-exp to the workspace) and the combine
// kernel (merges the shares, writes O and the logsumexp).
// CHECK-LABEL: func.func @decode__split
// CHECK-SAME: %[[WO:[a-z0-9]+]]: memref<1x2x4x8x64xf32>, %[[WL:[a-z0-9]+]]: memref<1x2x4x8xf32>
// CHECK-SAME: tessel.plan_of = "decode", tessel.plan_stage = 0 : i64, tessel.splits = 4 : i64
// CHECK: %[[Z:.*]] = tessel.program_id 2
// CHECK: %[[S:.*]] = arith.remui %[[Z]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.divui %[[Z]], %{{.*}} : index
// CHECK: arith.ceildivui
// CHECK: %[[BEGIN:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to
// The partial O^T through a transposed view of the workspace, the
// log2-sum-exp as one value per query.
// CHECK: %[[WOT:.*]] = memref.transpose %[[WO]] (d0, d1, d2, d3, d4) -> (d0, d1, d2, d4, d3)
// CHECK: tessel.store %{{.*}}, %[[WOT]][%[[B]], %{{.*}}, %[[S]], %{{.*}}, %{{.*}}]
// CHECK: tessel.store %{{.*}} : tensor<1x32xf32, #linear>
// CHECK-LABEL: func.func @decode__combine
// CHECK-SAME: tessel.plan_of = "decode", tessel.plan_stage = 1 : i64, tessel.splits = 4 : i64
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK: scf.for
// CHECK: math.exp2
// CHECK: arith.divf
// CHECK: tessel.store %{{.*}}, %arg3
// CHECK-NOT: func.func @decode(
func.func @decode(%q: memref<1x2x8x64xf16>, %k: memref<1x2x300x64xf16>, %v: memref<1x2x300x64xf16>, %o: memref<1x2x8x64xf16>, %lse: memref<1x2x8xf32>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x8x64xf16>, memref<1x2x300x64xf16>, memref<1x2x300x64xf16>) outs(%o : memref<1x2x8x64xf16>) lse(%lse : memref<1x2x8xf32>) {config = #tessel.config<tile = [32, 64], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", splits = 4>}
  return
}
