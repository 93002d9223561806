// RUN: tessel-opt %s --pass-pipeline='builtin.module(tessel-tile)' | FileCheck %s

// The varlen backward: in both kernels workgroup z is the sequence, whose
// rows of every array (D's workspace included) come from the clamped
// cumulative lengths; a block past its sequence's end runs no loop
// iteration (the launch covers the longest sequence).
func.func @grad(%q: memref<1x2x?x64xf16>, %k: memref<1x2x?x64xf16>, %lse: memref<1x2x?xf32>, %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index, %max_k: index) {
  tessel.attention_grad ins(%q, %k, %k, %q, %q, %lse : memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?xf32>) outs(%q, %k, %k : memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>) varlen(%cu_q, %cu_k, %max_q, %max_k : memref<?xi32>, memref<?xi32>) {config = #tessel.config<tile = [64, 32], waves = [4, 1], stages = 1, instr = "v_mfma_f32_16x16x16_f16">}
  return
}

// CHECK-LABEL: func.func @grad__dq
// CHECK-SAME: %[[CUQ:arg3]]: memref<?xi32>, %[[CUK:arg4]]: memref<?xi32>
// CHECK-SAME: tessel.workspace_dims = {{\[}}["", "heads", "total_q"]]
// CHECK: %[[SEQ:.*]] = tessel.program_id 2
// CHECK: memref.load %[[CUQ]]
// CHECK: memref.load %[[CUQ]][%[[SEQ]]]
// CHECK: memref.load %[[CUK]]
// CHECK: memref.load %[[CUK]][%[[SEQ]]]
// Q, O, dO, lse, dQ and D: the sequence's query rows.
// CHECK: %[[QROWS:.*]] = memref.reinterpret_cast {{.*}} sizes: [1, 2, %[[QLEN:.*]], 64]
// CHECK-COUNT-2: memref.reinterpret_cast {{.*}} sizes: [1, 2, %[[QLEN]], 64]
// CHECK: memref.reinterpret_cast {{.*}} sizes: [1, 2, %[[QLEN]]]
// CHECK: memref.reinterpret_cast {{.*}} sizes: [1, 2, %[[QLEN]], 64]
// CHECK: memref.reinterpret_cast {{.*}} sizes: [1, 2, %[[QLEN]]]
// K, V, dK, dV: its key rows.
// CHECK-COUNT-4: memref.reinterpret_cast {{.*}} sizes: [1, 2, %{{.*}}, 64]
// CHECK: %[[SEQQ:.*]] = memref.dim %[[QROWS]], %c2
// CHECK: %[[M0:.*]] = arith.muli
// CHECK: %[[INSIDE:.*]] = arith.cmpi slt, %[[M0]], %[[SEQQ]] : index
// CHECK: %[[END:.*]] = arith.select %[[INSIDE]], %{{.*}}, %{{.*}} : index
// CHECK: scf.for

// CHECK-LABEL: func.func @grad__dkdv
// CHECK-SAME: tessel.grid_over_keys
// CHECK: tessel.program_id 2
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: scf.for
