// RUN: tessel-opt %s --tessel-tile | FileCheck %s

// Split-KV attention stays one kernel with three workspaces appended to its
// arguments: each split (z = batch x splits) walks its share of the query
// block's keys and stores its partial O and log2-sum-exp; the last split
// of the block to arrive (tessel.split_arrive on the arrivals) merges the
// shares and writes O and the logsumexp.
// CHECK-LABEL: func.func @decode
// CHECK-SAME: %[[WO:[a-z0-9]+]]: memref<1x2x4x8x64xf32>, %[[WL:[a-z0-9]+]]: memref<1x2x4x8xf32>, %[[ARRIVALS:[a-z0-9]+]]: memref<1x2x1xi32>
// CHECK-SAME: tessel.splits = 4 : i64
// CHECK-SAME: tessel.zeroed_workspaces = array<i64: 2>
// CHECK: %[[X:.*]] = tessel.program_id 0
// CHECK: %[[Z:.*]] = tessel.program_id 2
// CHECK: %[[S:.*]] = arith.remui %[[Z]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.divui %[[Z]], %{{.*}} : index
// CHECK: arith.ceildivui
// CHECK: %[[OFFSET:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: %[[BEGIN:.*]] = arith.addi %{{.*}}, %[[OFFSET]] : index
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to
// The partial O^T through a transposed view of the workspace, the
// log2-sum-exp as one value per query.
// CHECK: %[[WOT:.*]] = memref.transpose %[[WO]] (d0, d1, d2, d3, d4) -> (d0, d1, d2, d4, d3)
// CHECK: tessel.store %{{.*}}, %[[WOT]][%[[B]], %{{.*}}, %[[S]], %{{.*}}, %{{.*}}]
// CHECK: tessel.store %{{.*}} : tensor<1x32xf32, #linear>
// CHECK: %[[LAST:.*]] = tessel.split_arrive %[[ARRIVALS]][%[[B]], %{{.*}}, %[[X]]] splits = 4
// CHECK: scf.if %[[LAST]] {
// The rows' largest log2-sum-exp first, once for all chunks (maxnum), one
// value per row of the output (8 queries, not the block's 32 rows); a
// loop of four splits is unrolled whole.
// CHECK-COUNT-4: arith.maxnumf {{.*}} : tensor<8x1xf32
// Then the weighted partials and the weights' sum, a chunk of 8 x 64
// columns at a time, and the logsumexp.
// CHECK: scf.for %[[D0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-4: math.exp2 {{.*}} : tensor<8x1xf32
// CHECK: tessel.store %{{.*}} : tensor<8x1xf32
// The merged sum is at least 1 (the largest share weighs 1): divided by
// with the reciprocal instruction.
// CHECK: arith.divf %{{.*}}, %{{.*}} fastmath<afn> : tensor<8x64xf32
// CHECK: tessel.store %{{.*}}, %arg3[%[[B]], %{{.*}}, %{{.*}}, %[[D0]]] : tensor<8x64xf16
// CHECK-NOT: func.func
func.func @decode(%q: memref<1x2x8x64xf16>, %k: memref<1x2x300x64xf16>, %v: memref<1x2x300x64xf16>, %o: memref<1x2x8x64xf16>, %lse: memref<1x2x8xf32>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x8x64xf16>, memref<1x2x300x64xf16>, memref<1x2x300x64xf16>) outs(%o : memref<1x2x8x64xf16>) lse(%lse : memref<1x2x8xf32>) {config = #tessel.config<tile = [32, 64], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", splits = 4>}
  return
}

// Sixteen splits: the merge's loops over them run unrolled (the loads of
// several partials in flight at once, at most 64 registers a lane of
// them): by eight for the statistics (4 values a lane), by four for the
// partials (16), and the kernel records their trip counts for the
// performance model: 2 for the statistics, 4 per chunk of 32 columns (32
// rows on one wave) for the partials.
// CHECK-LABEL: func.func @decode_sixteen_splits
// CHECK-SAME: tessel.merge_loop_iterations = array<i64: 2, 8>
// CHECK: scf.if
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c8
// CHECK-COUNT-8: arith.maxnumf {{.*}} : tensor<32x1xf32
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step %c4
// CHECK-COUNT-4: tessel.load {{.*}} -> tensor<32x32xf32
func.func @decode_sixteen_splits(%q: memref<1x2x32x64xf16>, %k: memref<1x2x4096x64xf16>, %v: memref<1x2x4096x64xf16>, %o: memref<1x2x32x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x32x64xf16>, memref<1x2x4096x64xf16>, memref<1x2x4096x64xf16>) outs(%o : memref<1x2x32x64xf16>) {config = #tessel.config<tile = [32, 64], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", splits = 16>}
  return
}
