// RUN: tessel-opt %s --split-input-file --tessel-tile | FileCheck %s

// Split-K matmul stays one kernel with two workspaces appended to its
// arguments: the partial accumulators ([batch,] splits, M, N) and the
// arrivals per C tile ([batch,] tile rows, tile columns). Workgroup z is
// batch x splits + split; a split multiplies its K range (a whole number of
// K steps: 640 / 4 = 160 rounds up to 192) and stores its partial; the last
// split of the tile to arrive sums the partials in split order, applies the
// epilogue and writes C.
// CHECK-LABEL: func.func @skinny
// CHECK-SAME: %[[C:[a-z0-9]+]]: memref<2x16x64xbf16>, %[[W:[a-z0-9]+]]: memref<2x4x16x64xf32>, %[[N:[a-z0-9]+]]: memref<2x1x2xi32>
// CHECK-SAME: tessel.splits = 4 : i64
// CHECK-SAME: tessel.zeroed_workspaces = array<i64: 1>
// CHECK: %[[Z:.*]] = tessel.program_id 2
// CHECK: %[[S:.*]] = arith.remui %[[Z]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.divui %[[Z]], %{{.*}} : index
// CHECK: %[[CHUNK:.*]] = arith.constant 192 : index
// CHECK: %[[BEGIN:.*]] = arith.muli %[[S]], %[[CHUNK]] : index
// CHECK: %[[LIMIT:.*]] = arith.addi %[[BEGIN]], %[[CHUNK]] : index
// CHECK: %[[END:.*]] = arith.minui %{{.*}}, %[[LIMIT]] : index
// CHECK: scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// CHECK: tessel.dot
// CHECK-NOT: math.tanh
// CHECK: tessel.store %{{.*}}, %[[W]][%[[B]], %[[S]], %{{.*}}, %{{.*}}] in_bounds
// CHECK-NOT: tessel.store
// CHECK: %[[LAST:.*]] = tessel.split_arrive %[[N]][%[[B]], %{{.*}}, %{{.*}}] splits = 4 : memref<2x1x2xi32>
// CHECK: scf.if %[[LAST]] {
// CHECK: scf.for %[[SPLIT:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[PART:.*]] = tessel.load %[[W]][%[[B]], %[[SPLIT]], %{{.*}}, %{{.*}}] in_bounds : memref<2x4x16x64xf32>
// CHECK: arith.addf %{{.*}}, %[[PART]]
// CHECK: math.tanh
// CHECK: tessel.store %{{.*}}, %[[C]][%[[B]], %{{.*}}, %{{.*}}] in_bounds
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @skinny(%a: memref<2x16x640xbf16>, %b: memref<2x640x64xbf16>, %c: memref<2x16x64xbf16>) {
  tessel.matmul ins(%a, %b : memref<2x16x640xbf16>, memref<2x640x64xbf16>) outs(%c : memref<2x16x64xbf16>) epilogue {
  ^bb0(%acc: f32):
    %t = math.tanh %acc : f32
    %r = arith.truncf %t : f32 to bf16
    tessel.yield %r : bf16
  } {config = #tessel.config<tile = [16, 32, 64], waves = [1, 2], stages = 2, instr = "v_mfma_f32_16x16x16_bf16", splits = 4>}
  return
}

// -----

// A column-major C keeps the hardware accumulator layout (a lane's runs go
// down the columns), and the partials follow it: M contiguous, so that they
// are stored and read back in 16-byte vectors (a row-major C takes the
// transposed layout and row-major partials, above).
// CHECK-LABEL: func.func @column_major_c
// CHECK-SAME: %[[WC:[a-z0-9]+]]: memref<2x4x16x64xf32, strided<[4096, 1024, 1, 16]>>
// CHECK: tessel.store %{{.*}}, %[[WC]][{{.*}}] in_bounds : tensor<16x32xf32, #{{.*}}>, memref<2x4x16x64xf32, strided<[4096, 1024, 1, 16]>>
func.func @column_major_c(%a: memref<2x16x640xbf16>, %b: memref<2x640x64xbf16>, %c: memref<2x16x64xbf16, strided<[1024, 1, 16]>>) {
  tessel.matmul ins(%a, %b : memref<2x16x640xbf16>, memref<2x640x64xbf16>) outs(%c : memref<2x16x64xbf16, strided<[1024, 1, 16]>>) {config = #tessel.config<tile = [16, 32, 64], waves = [1, 2], stages = 2, instr = "v_mfma_f32_16x16x16_bf16", splits = 4>}
  return
}
