// RUN: tessel-opt %s --tessel-tile | FileCheck %s

// Split-KV attention stays one kernel with three workspaces appended to its
// arguments: each split (z = batch x splits) walks its share of the query
// block's keys and stores its partial O and log2-sum-exp; the last split
// of the block to arrive (tessel.split_arrive on the arrivals) merges the
// shares and writes O and the logsumexp.
// A split's block on one wave loads K in the first product's A operand
// layout (its K packing, 8 head dims a lane, is the one Q^T's conversion
// takes): no LDS trip. V^T keeps its coalesced load, through LDS.
// CHECK: #[[$KLAYOUT:mma_operand[0-9]*]] = #tessel.mma_operand<a, #mma, kWidth = 8>
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
// CHECK: %[[K:.*]] = tessel.load %arg1{{.*}} -> tensor<64x64xf16, #[[$KLAYOUT]]>
// CHECK: tessel.load %{{.*}} -> tensor<64x64xf16, #blocked{{[0-9]*}}>
// CHECK: tessel.dot %[[K]], %{{.*}}, %{{.*}} : tensor<64x64xf16, #[[$KLAYOUT]]>, tensor<64x32xf16, #blocked{{[0-9]*}}>
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
// O holds whole merge tiles (8 rows, 64 columns): no masks.
// CHECK: tessel.store %{{.*}}, %arg3[%[[B]], %{{.*}}, %{{.*}}, %[[D0]]] in_bounds : tensor<8x64xf16
// CHECK-NOT: func.func
func.func @decode(%q: memref<1x2x8x64xf16>, %k: memref<1x2x300x64xf16>, %v: memref<1x2x300x64xf16>, %o: memref<1x2x8x64xf16>, %lse: memref<1x2x8xf32>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x8x64xf16>, memref<1x2x300x64xf16>, memref<1x2x300x64xf16>) outs(%o : memref<1x2x8x64xf16>) lse(%lse : memref<1x2x8xf32>) {config = #tessel.config<tile = [32, 64], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", splits = 4>}
  return
}

// Sixteen splits merge in two levels (groups of 4, then the 4 groups),
// with a fourth dimension of the arrivals: a counter per group and one of
// the groups. The last split of each group merges the group's partials
// (statistics and partials loops unrolled whole: 4 of them) into the
// group's first slot, a barrier before each store (the slot is also read,
// by other lanes too); then the last group merges the groups' partials
// and writes O. The kernel records the trip counts of the loops left for
// the performance model: each level's 2 chunks of 32 columns (32 rows on
// one wave).
// CHECK-LABEL: func.func @decode_sixteen_splits
// CHECK-SAME: %arg6: memref<1x2x1x5xi32>
// CHECK-SAME: tessel.merge_loop_iterations = array<i64: 2, 2>
// CHECK: %[[Z:.*]] = tessel.program_id 2
// CHECK: %[[S:.*]] = arith.remui %[[Z]], %{{.*}} : index
// CHECK: %[[GROUP:.*]] = arith.divui %[[S]], %c4
// CHECK: %[[FIRST:.*]] = arith.muli %[[GROUP]], %c4
// CHECK: %[[IN_GROUP:.*]] = tessel.split_arrive %arg6[%{{.*}}, %{{.*}}, %{{.*}}, %[[GROUP]]] splits = 4
// CHECK: scf.if %[[IN_GROUP]] {
// CHECK-COUNT-4: arith.maxnumf {{.*}} : tensor<32x1xf32
// CHECK: scf.for
// CHECK-COUNT-4: tessel.load %arg4{{.*}} in_bounds {{.*}} -> tensor<32x32xf32
// CHECK: gpu.barrier
// CHECK: tessel.store %{{.*}}, %arg4[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] in_bounds : tensor<32x32xf32
// CHECK: scf.yield
// CHECK: math.log2
// CHECK: gpu.barrier
// CHECK: tessel.store {{.*}} : tensor<32x1xf32
// CHECK: %[[ALL:.*]] = tessel.split_arrive %arg6[%{{.*}}, %{{.*}}, %{{.*}}, %c4{{.*}}] splits = 4
// CHECK: scf.if %[[ALL]] {
// CHECK-COUNT-4: arith.maxnumf {{.*}} : tensor<32x1xf32
// CHECK: scf.for
// CHECK-COUNT-4: tessel.load %arg4{{.*}} in_bounds {{.*}} -> tensor<32x32xf32
// CHECK-NOT: gpu.barrier
// CHECK: tessel.store %{{.*}}, %{{.*}} in_bounds : tensor<32x32xf16
func.func @decode_sixteen_splits(%q: memref<1x2x32x64xf16>, %k: memref<1x2x4096x64xf16>, %v: memref<1x2x4096x64xf16>, %o: memref<1x2x32x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x32x64xf16>, memref<1x2x4096x64xf16>, memref<1x2x4096x64xf16>) outs(%o : memref<1x2x32x64xf16>) {config = #tessel.config<tile = [32, 64], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", splits = 16>}
  return
}
