// RUN: tessel-opt %s --pass-pipeline='builtin.module(tessel-tile)' | FileCheck %s

// Causal grouped-query attention with dynamic lengths and the logsumexp:
// one workgroup per (query block, head, batch), key/value head h / (Hq /
// Hkv), a key loop that stops after the last block this query block can
// see, the online softmax with the scale folded into the exp2 domain, and
// O / l.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: memref<1x4x?x64xbf16>, %[[K:.*]]: memref<1x2x?x64xbf16>, %[[V:.*]]: memref<1x2x?x64xbf16>, %[[O:.*]]: memref<1x4x?x64xbf16>, %[[LSE:.*]]: memref<1x4x?xf32>)
// CHECK-SAME: tessel.tile = array<i64: 64, 64>, tessel.workgroup_size = 128 : i64
// CHECK-DAG: %[[QB:.*]] = tessel.program_id 0
// CHECK-DAG: %[[H:.*]] = tessel.program_id 1
// CHECK-DAG: %[[B:.*]] = tessel.program_id 2
// CHECK: %[[M0:.*]] = arith.muli %[[QB]]
// CHECK: %[[GROUP:.*]] = arith.divui
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %[[GROUP]] : index
// CHECK: %[[TQ:.*]] = tessel.load %[[Q]][%[[B]], %[[H]], %[[M0]], %{{.*}}]
// CHECK: %[[KT:.*]] = memref.transpose %[[K]] (d0, d1, d2, d3) -> (d0, d1, d3, d2)
// CHECK: %[[END:.*]] = arith.minsi
// CHECK: scf.for %[[N0:.*]] = %{{.*}} to %[[END]] step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}})
// CHECK:   %[[TK:.*]] = tessel.load %[[KT]][%[[B]], %[[KVH]], %{{.*}}, %[[N0]]]
// CHECK:   %[[TV:.*]] = tessel.load %[[V]][%[[B]], %[[KVH]], %[[N0]], %{{.*}}]
// CHECK:   %[[S:.*]] = tessel.dot %[[TQ]], %[[TK]]
// scale 1/sqrt(64) * log2(e)
// CHECK:   arith.constant dense<0.180336878>
// CHECK:   tessel.iota 1
// CHECK:   arith.cmpi slt
// CHECK:   tessel.iota 0
// CHECK:   arith.cmpi sle
// CHECK:   %[[MAX:.*]] = tessel.reduce "max" %{{.*}} along 1
// CHECK:   math.exp2
// CHECK:   math.exp2
// CHECK:   tessel.reduce "add" %{{.*}} along 1
// CHECK:   %[[ALPHA:.*]] = tessel.broadcast
// CHECK:   arith.mulf %[[ACC]], %[[ALPHA]]
// CHECK:   %[[P:.*]] = arith.truncf %{{.*}} to tensor<64x64xbf16, #mma>
// CHECK:   tessel.dot %[[P]], %[[TV]]
// CHECK: arith.divf
// CHECK: tessel.store %{{.*}}, %[[O]][%[[B]], %[[H]], %[[M0]], %{{.*}}]
// The logsumexp goes to column 0 of a [B, H, Sq, 1] view.
// CHECK: math.log2
// CHECK: memref.reinterpret_cast {{.*}} strides: [%{{.*}}, %{{.*}}, %{{.*}}, 0]
// CHECK: tessel.store
// CHECK-NOT: tessel.attention
func.func @attention(%arg0: memref<1x4x?x64xbf16>, %arg1: memref<1x2x?x64xbf16>, %arg2: memref<1x2x?x64xbf16>, %arg3: memref<1x4x?x64xbf16>, %arg4: memref<1x4x?xf32>) {
  tessel.attention ins(%arg0, %arg1, %arg2 : memref<1x4x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>) outs(%arg3 : memref<1x4x?x64xbf16>) lse(%arg4 : memref<1x4x?xf32>) {causal, config = #tessel.config<tile = [64, 64], waves = [2, 1], stages = 1, instr = "v_mfma_f32_32x32x8_bf16">}
  return
}
