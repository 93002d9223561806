// RUN: tessel-opt %s --tessel-tile | FileCheck %s

// Stream-K matmul stays one kernel of `stream_k` workgroups with two
// workspaces appended to its arguments: the partials of the pieces of cut
// tiles (workgroups, 2, tileM, tileN: a workgroup cuts at most its first
// and its last tile), stored row by row (C's rows are contiguous, so the
// accumulator is transposed: a lane's accumulators are consecutive columns
// of a row, 16-byte accesses), and the arrivals per C tile. 12 tiles x 10
// K steps over 7 workgroups, in units of two steps (10 is even): workgroup
// w takes units [8 w + min(w, 4), 8 (w + 1) + min(w + 1, 4)) of the 60, and
// loops over the tiles they touch. Its K loops then run whole pairs of
// steps.
// CHECK-LABEL: func.func @stream_k
// CHECK-SAME: %[[C:[a-z0-9]+]]: memref<256x192xbf16>, %[[W:[a-z0-9]+]]: memref<7x2x64x64xf32>, %[[N:[a-z0-9]+]]: memref<4x3xi32>
// CHECK-SAME: tessel.stream_k = 7 : i64
// CHECK-SAME: tessel.zeroed_workspaces = array<i64: 1>
// CHECK-DAG: %[[TEN:.*]] = arith.constant 10 : index
// CHECK-DAG: %[[Q:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[R:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : index
// CHECK: %[[PID:.*]] = tessel.program_id 0
// CHECK: %[[EXTRA:.*]] = arith.minui %[[PID]], %[[R]] : index
// CHECK: %[[SHARE:.*]] = arith.muli %[[PID]], %[[Q]] : index
// CHECK: %[[UNITS:.*]] = arith.addi %[[SHARE]], %[[EXTRA]] : index
// CHECK: %[[BEGIN:.*]] = arith.muli %[[UNITS]], %[[TWO]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[PID]], %{{.*}} : index
// CHECK: %[[NEXT_EXTRA:.*]] = arith.minui %[[NEXT]], %[[R]] : index
// CHECK: %[[NEXT_SHARE:.*]] = arith.muli %[[NEXT]], %[[Q]] : index
// CHECK: %[[NEXT_UNITS:.*]] = arith.addi %[[NEXT_SHARE]], %[[NEXT_EXTRA]] : index
// CHECK: %[[END:.*]] = arith.muli %[[NEXT_UNITS]], %[[TWO]] : index
// CHECK: %[[FIRST:.*]] = arith.divui %[[BEGIN]], %[[TEN]] : index
// CHECK: %[[LASTSTEP:.*]] = arith.subi %[[END]], %{{.*}} : index
// CHECK: %[[LAST:.*]] = arith.divui %[[LASTSTEP]], %[[TEN]] : index
// CHECK: %[[BOUND:.*]] = arith.addi %[[LAST]], %{{.*}} : index
// CHECK: scf.for %[[T:.*]] = %[[FIRST]] to %[[BOUND]]
// The workgroup's steps of tile t, as a K range.
// CHECK: %[[TILE_BEGIN:.*]] = arith.muli %[[T]], %[[TEN]] : index
// CHECK: arith.maxui %[[BEGIN]], %[[TILE_BEGIN]] : index
// CHECK: arith.minui %[[END]], %{{.*}} : index
// CHECK: %[[ACC:.*]] = scf.for
// CHECK: tessel.dot
// CHECK: } {tessel.even_trip_count}
// A piece of a cut tile (not whole): its partial to the workgroup's slot
// 1 when the workgroup began in an earlier tile, else slot 0; then the
// arrival, counted against the workgroups that own the tile's first and
// last steps.
// CHECK: %[[WHOLE:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: %[[FIRST_OWNER:.*]] = arith.select
// CHECK: %[[LAST_OWNER:.*]] = arith.select
// CHECK: %[[LAST_PIECE:.*]] = scf.if %[[WHOLE]] -> (i1) {
// CHECK-NEXT: scf.yield %false : i1
// CHECK-NEXT: } else {
// CHECK: %[[EARLIER:.*]] = arith.cmpi ult, %{{.*}}, %[[TILE_BEGIN]] : index
// CHECK: %[[SLOT:.*]] = arith.select %[[EARLIER]]
// CHECK: tessel.store %[[ACC]], %[[W]][%[[PID]], %[[SLOT]], %{{.*}}, %{{.*}}] in_bounds
// CHECK: %[[SPREAD:.*]] = arith.subi %[[LAST_OWNER]], %[[FIRST_OWNER]] : index
// CHECK: %[[PIECES:.*]] = arith.addi %[[SPREAD]], %{{.*}} : index
// CHECK: %[[ARRIVED:.*]] = tessel.split_arrive %[[N]][%{{.*}}, %{{.*}}] count %[[PIECES]] : memref<4x3xi32>
// CHECK: scf.yield %[[ARRIVED]] : i1
// One sum loop: over the pieces in workgroup order for the last piece,
// empty (starting from the workgroup's own accumulator) for a whole tile.
// CHECK: %[[OWNERS_END:.*]] = arith.addi %[[LAST_OWNER]], %{{.*}} : index
// CHECK: %[[END_IF_LAST:.*]] = arith.select %[[LAST_PIECE]], %[[OWNERS_END]], %[[FIRST_OWNER]] : index
// CHECK: %[[INIT:.*]] = arith.select %[[WHOLE]], %[[ACC]], %{{.*}} : tensor<64x64xf32, #mma>
// CHECK: %[[SUM:.*]] = scf.for %[[OWNER:.*]] = %[[FIRST_OWNER]] to %[[END_IF_LAST]] step %{{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK: %[[PART:.*]] = tessel.load %[[W]][%[[OWNER]], %{{.*}}, %{{.*}}, %{{.*}}] in_bounds : memref<7x2x64x64xf32>
// CHECK: arith.addf %{{.*}}, %[[PART]]
// One epilogue, for a whole tile or the last piece.
// CHECK: %[[FINISH:.*]] = arith.ori %[[WHOLE]], %[[LAST_PIECE]] : i1
// CHECK: scf.if %[[FINISH]] {
// CHECK: math.tanh %[[SUM]]
// CHECK: tessel.store %{{.*}}, %[[C]][%{{.*}}, %{{.*}}] in_bounds
// CHECK-NOT: math.tanh
// CHECK: return
func.func @stream_k(%a: memref<256x320xbf16>, %b: memref<320x192xbf16>, %c: memref<256x192xbf16>) {
  tessel.matmul ins(%a, %b : memref<256x320xbf16>, memref<320x192xbf16>) outs(%c : memref<256x192xbf16>) epilogue {
  ^bb0(%acc: f32):
    %t = math.tanh %acc : f32
    %r = arith.truncf %t : f32 to bf16
    tessel.yield %r : bf16
  } {config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 7>}
  return
}
