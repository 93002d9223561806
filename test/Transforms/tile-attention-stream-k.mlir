// RUN: tessel-opt %s --split-input-file --tessel-tile --cse | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=CHIP

// Stream-K attention stays one kernel of `stream_k` workgroups with three
// workspaces appended to its arguments: the partial O and log2-sum-exp of
// the pieces of cut query blocks (workgroups, 2, rows[, head dim]: a
// workgroup cuts at most its first and its last query block) and the
// arrivals per query block [batch, heads, blocks] (zeroed before the first
// launch). 2 heads x 2 query blocks x 8 key blocks = 32 steps over 5
// workgroups: workgroup w takes the steps [6 w + min(w, 2), 6 (w + 1) +
// min(w + 1, 2)) and loops over the query blocks they reach, carrying
// whether its pieces of the first and the last arrived last (bits 0 and 1
// of one i32); those merge after the loop.
// CHECK-LABEL: func.func @full
// CHECK-SAME: memref<5x2x128x64xf32>, %{{.*}}: memref<5x2x128xf32>, %[[ARRIVALS:[a-z0-9]+]]: memref<1x2x2xi32>
// CHECK-SAME: tessel.stream_k = 5 : i64
// CHECK-SAME: tessel.zeroed_workspaces = array<i64: 2>
// The step arithmetic is 32-bit (its scalars live through every key loop).
// CHECK: %[[ID:.*]] = tessel.program_id 0
// CHECK: %[[PID:.*]] = arith.index_castui %[[ID]] : index to i32
// CHECK: %[[R:.*]] = arith.constant 2 : i32
// CHECK: %[[EXTRA:.*]] = arith.minui %[[PID]], %[[R]] : i32
// CHECK: %[[Q:.*]] = arith.constant 6 : i32
// CHECK: %[[SHARE:.*]] = arith.muli %[[PID]], %[[Q]] : i32
// CHECK: %[[BEGIN:.*]] = arith.addi %[[SHARE]], %[[EXTRA]] : i32
// CHECK: %[[STEPS:.*]] = arith.constant 8 : i32
// CHECK: %[[FIRST:.*]] = arith.divui %[[BEGIN]], %[[STEPS]] : i32
// CHECK: %[[MERGES:.*]] = scf.for %[[U:.*]] = %[[FIRST]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %c0_i32) -> (i32) : i32 {
// Q once per query block, the key loop over the piece's blocks.
// CHECK: tessel.load
// CHECK-SAME: -> tensor<64x128xf16
// CHECK: scf.for
// CHECK: tessel.dot
// CHECK: tessel.dot
// CHECK: scf.yield
// CHECK-NOT: scf.for
// A whole query block's O goes to O; a piece's to the workgroup's slot,
// then its arrival among the block's pieces.
// CHECK: %[[LAST:.*]] = scf.if %{{.*}} -> (i1) {
// CHECK: tessel.store %{{.*}} : tensor<64x128xf16
// CHECK: scf.yield %false
// CHECK: } else {
// CHECK: tessel.store %{{.*}} : tensor<64x128xf32
// CHECK: tessel.store %{{.*}} : tensor<1x128xf32
// CHECK: %[[ARRIVED:.*]] = tessel.split_arrive %[[ARRIVALS]][%{{.*}}, %{{.*}}, %{{.*}}] count %{{.*}} : memref<1x2x2xi32>
// CHECK: scf.yield %[[ARRIVED]] : i1
// CHECK: scf.yield %{{.*}} : i32
// CHECK-NEXT: } {tessel.tile_loop}
// The merges: the first and the last query block, where flagged; their
// loop asks tessel-lower-to-gpu for lane ids of its own, so that its lane
// coordinates are not kept live across the loop above.
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: scf.if
// CHECK: scf.for
// CHECK: math.exp2 %{{.*}} fastmath<afn>
// CHECK: tessel.store %{{.*}} : tensor<128x32xf16
// CHECK: } {tessel.fresh_lanes}
// CHECK: return

// The occupancy the workgroup count assumes, with a chip: 5 workgroups
// on 304 CUs need no more than one wave per SIMD (no attribute).
// CHIP-LABEL: func.func @full
// CHIP-NOT: tessel.waves_per_simd
// CHIP: return
func.func @full(%q: memref<1x2x256x64xf16>, %k: memref<1x2x256x64xf16>, %v: memref<1x2x256x64xf16>, %o: memref<1x2x256x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x256x64xf16>, memref<1x2x256x64xf16>, memref<1x2x256x64xf16>) outs(%o : memref<1x2x256x64xf16>) {config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", stream_k = 5>}
  return
}

// -----

// Causal: query blocks i and Q - 1 - i pair up into units of (Q + 1) x
// blockM / blockN = 3 x 4 = 12 key blocks (2 query blocks of 128 queries,
// 32 keys per block: one pair per head, 24 steps). A query block (its index
// in unit order u) is the pair u / 2's first block or its partner. Each
// piece runs the unmasked and the masked (diagonal) key loops.
// CHECK-LABEL: func.func @causal
// CHECK-SAME: memref<5x2x128x64xf32>, %{{.*}}: memref<5x2x128xf32>, %{{.*}}: memref<1x2x2xi32>
// CHECK: arith.constant 12 : i32
// CHECK: scf.for {{.*}} -> (i32) : i32 {
// CHECK: arith.remui %{{.*}}, %c2
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tessel.iota
// CHECK: } {tessel.tile_loop}
func.func @causal(%q: memref<1x2x256x64xbf16>, %k: memref<1x2x256x64xbf16>, %v: memref<1x2x256x64xbf16>, %o: memref<1x2x256x64xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>, memref<1x2x256x64xbf16>) outs(%o : memref<1x2x256x64xbf16>) {causal, config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 5>}
  return
}

// -----

// 608 workgroups of four waves on gfx942's 304 CUs: two per CU, two waves
// per SIMD, which the backend is told to keep (tessel.waves_per_simd).
// CHIP-LABEL: func.func @occupancy
// CHIP-SAME: tessel.waves_per_simd = 2 : i64
func.func @occupancy(%q: memref<1x16x4096x128xf16>, %k: memref<1x16x4096x128xf16>, %v: memref<1x16x4096x128xf16>, %o: memref<1x16x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x16x4096x128xf16>, memref<1x16x4096x128xf16>, memref<1x16x4096x128xf16>) outs(%o : memref<1x16x4096x128xf16>) {causal, config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608>}
  return
}

// -----

// 2432 workgroups (eight per CU) would need eight waves per SIMD, which a
// four-wave attention workgroup's registers do not allow: no occupancy is
// asked of the backend, and the grid runs in rounds.
// CHIP-LABEL: func.func @beyond_two_waves
// CHIP-NOT: tessel.waves_per_simd
// CHIP: return
func.func @beyond_two_waves(%q: memref<4x4x512x64xf16>, %k: memref<4x4x2560x64xf16>, %v: memref<4x4x2560x64xf16>, %o: memref<4x4x512x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<4x4x512x64xf16>, memref<4x4x2560x64xf16>, memref<4x4x2560x64xf16>) outs(%o : memref<4x4x512x64xf16>) {config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 2432>}
  return
}
