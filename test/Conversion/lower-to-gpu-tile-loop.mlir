// RUN: tessel-opt %s --tessel-lower-to-gpu=chip=gfx942 | FileCheck %s

// A stream-K workgroup's loop over its tiles (tessel.tile_loop) keeps the
// LLVM loop annotation that turns off loop-invariant code motion: hoisted
// out of it, each tile's lane addresses would stay live through the key
// loops of every tile. The occupancy the grid counts on
// (tessel.waves_per_simd) becomes the backend's waves-per-EU bound.
// CHECK: #[[$LICM:.*]] = #llvm.loop_licm<disable = true>
// CHECK: #[[$ANNOTATION:.*]] = #llvm.loop_annotation<licm = #[[$LICM]]>
// CHECK-LABEL: gpu.func @tiles
// CHECK-SAME: rocdl.waves_per_eu = 2 : i32
// CHECK: scf.for
// CHECK: scf.for
// CHECK: } {loop_annotation = #[[$ANNOTATION]]}
// CHECK-NOT: loop_annotation
// CHECK: gpu.return
func.func @tiles(%a: memref<64x64xf32>, %n: index) attributes {tessel.workgroup_size = 64 : i64, tessel.waves_per_simd = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
    scf.for %t = %c0 to %n step %c1 {
    scf.for %i = %c0 to %n step %c1 {
      %x = tessel.load %a[%i, %c0] : memref<64x64xf32> -> tensor<1x64xf32, #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [1, 64], waves = [1, 1], order = [1, 0]>>
      tessel.store %x, %a[%t, %c0] : tensor<1x64xf32, #tessel.blocked<sizePerThread = [1, 1], threadsPerWave = [1, 64], waves = [1, 1], order = [1, 0]>>, memref<64x64xf32>
    }
  } {tessel.tile_loop}
  return
}
