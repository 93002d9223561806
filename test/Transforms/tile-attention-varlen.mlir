// RUN: tessel-opt %s --pass-pipeline='builtin.module(tessel-tile)' | FileCheck %s

// Varlen attention: workgroup z is the sequence. Its rows of the packed
// arrays come from the cumulative lengths, each clamped to [0, total] (the
// start also to the end), and the program runs on views of those rows
// (static strides kept, batch index 0). A query block past its sequence's
// end visits no key.
func.func @varlen(%q: memref<1x4x?x64xf16, strided<[?, 64, 256, 1]>>, %k: memref<1x2x?x64xf16, strided<[?, 64, 128, 1]>>, %v: memref<1x2x?x64xf16, strided<[?, 64, 128, 1]>>, %o: memref<1x4x?x64xf16, strided<[?, 64, 256, 1]>>, %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index) {
  tessel.attention ins(%q, %k, %v : memref<1x4x?x64xf16, strided<[?, 64, 256, 1]>>, memref<1x2x?x64xf16, strided<[?, 64, 128, 1]>>, memref<1x2x?x64xf16, strided<[?, 64, 128, 1]>>) outs(%o : memref<1x4x?x64xf16, strided<[?, 64, 256, 1]>>) varlen(%cu_q, %cu_k, %max_q : memref<?xi32>, memref<?xi32>) {causal, config = #tessel.config<tile = [64, 32], waves = [2, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// CHECK-LABEL: func.func @varlen
// CHECK-SAME: (%[[Q:[^:]*]]: memref<1x4x?x64xf16, strided<[?, 64, 256, 1]>>, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}}, %[[O:[^:]*]]: {{.*}}, %[[CUQ:[^:]*]]: memref<?xi32>, %[[CUK:[^:]*]]: memref<?xi32>, %{{[^:]*}}: index)
// CHECK: %[[SEQ:.*]] = tessel.program_id 2
// CHECK: %[[TOTALQ:.*]] = memref.dim %[[Q]], %c2
// CHECK: %[[NEXT:.*]] = arith.addi %[[SEQ]], %c1
// CHECK: %[[ENDRAW:.*]] = memref.load %[[CUQ]][%[[NEXT]]]
// CHECK: %[[ENDI:.*]] = arith.index_cast %[[ENDRAW]] : i32 to index
// CHECK: %[[ENDPOS:.*]] = arith.maxsi %[[ENDI]], %{{.*}}
// CHECK: %[[END:.*]] = arith.minsi %[[TOTALQ]], %[[ENDPOS]]
// CHECK: memref.load %[[CUQ]][%[[SEQ]]]
// CHECK: %[[STARTC:.*]] = arith.minsi %[[TOTALQ]], %{{.*}}
// CHECK: %[[START:.*]] = arith.minsi %[[STARTC]], %[[END]]
// CHECK: %[[LEN:.*]] = arith.subi %[[END]], %[[START]]
// CHECK: memref.load %[[CUK]][%{{.*}}]
// CHECK: memref.load %[[CUK]][%[[SEQ]]]
// CHECK: %{{.*}}, %[[QOFF:.*]], %{{.*}}:4, %[[QSTRIDES:.*]]:4 = memref.extract_strided_metadata %[[Q]]
// CHECK: %[[SHIFT:.*]] = arith.muli %[[START]], %[[QSTRIDES]]#2
// CHECK: %[[OFF:.*]] = arith.addi %[[QOFF]], %[[SHIFT]]
// CHECK: %[[QVIEW:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%[[OFF]]], sizes: [1, 4, %[[LEN]], 64], strides: [%{{.*}}, 64, 256, 1] {{.*}} to memref<1x4x?x64xf16, strided<[?, 64, 256, 1], offset: ?>>
// CHECK: memref.reinterpret_cast {{.*}} to memref<1x4x?x64xf16, strided<[?, 64, 256, 1], offset: ?>>
// CHECK: %[[KVIEW:.*]] = memref.reinterpret_cast {{.*}} to memref<1x2x?x64xf16, strided<[?, 64, 128, 1], offset: ?>>
// CHECK: %[[VVIEW:.*]] = memref.reinterpret_cast {{.*}} to memref<1x2x?x64xf16, strided<[?, 64, 128, 1], offset: ?>>
// CHECK: %[[M0:.*]] = arith.muli
// CHECK: %[[SEQQ:.*]] = memref.dim %[[QVIEW]], %c2
// CHECK: %[[SEQKV:.*]] = memref.dim %[[KVIEW]], %c2
// CHECK: %[[QT:.*]] = memref.transpose %[[QVIEW]]
// CHECK: tessel.load %[[QT]][%c0{{.*}}, %{{.*}}, %{{.*}}, %[[M0]]]
// CHECK: %[[INSEQ:.*]] = arith.cmpi slt, %[[M0]], %[[SEQQ]]
// CHECK: %[[KVEND:.*]] = arith.select %[[INSEQ]], %{{.*}}, %{{.*}} : index
// CHECK: scf.for
// CHECK: tessel.load %[[KVIEW]]
