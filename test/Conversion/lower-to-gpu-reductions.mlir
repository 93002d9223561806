// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" --split-input-file --verify-diagnostics | FileCheck %s

// Row reductions of a 32x32 MFMA accumulator tile: each lane holds column
// lane % 32 of rows spread over its 16 registers, so a row's maximum is a
// butterfly over lane bits 0-4 (five xor shuffles per distinct row value);
// the broadcast to a wider tile moves registers within the lane; iota
// gives each register's coordinate.
#mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
// CHECK-LABEL: gpu.func @rows
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: arith.maximumf
// CHECK-COUNT-79: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-16: arith.index_cast {{.*}} : index to i32
// CHECK: gpu.return
func.func @rows(%x: memref<32x32xf32>, %y: memref<32x64xf32>, %z: memref<32x32xi32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<32x32xf32> -> tensor<32x32xf32, #mma>
  %m = tessel.reduce "max" %t along 1 : tensor<32x32xf32, #mma>
  %w = tessel.broadcast %m : tensor<32x32xf32, #mma> -> tensor<32x64xf32, #mma>
  tessel.store %w, %y[%c0, %c0] : tensor<32x64xf32, #mma>, memref<32x64xf32>
  %i = tessel.iota 0 : tensor<32x32xi32, #mma>
  tessel.store %i, %z[%c0, %c0] : tensor<32x32xi32, #mma>, memref<32x32xi32>
  return
}

// -----

// A reduction across waves is refused: the lowering keeps reductions in a
// wave.
#mma2 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 2]>
func.func @across_waves(%x: memref<32x64xf32>) attributes {tessel.workgroup_size = 128 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<32x64xf32> -> tensor<32x64xf32, #mma2>
  // expected-error @+1 {{'tessel.reduce' op the reduced dimension is split across waves; reductions stay within a wave}}
  %m = tessel.reduce "add" %t along 1 : tensor<32x64xf32, #mma2>
  tessel.store %m, %x[%c0, %c0] : tensor<32x64xf32, #mma2>, memref<32x64xf32>
  return
}
