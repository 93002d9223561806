// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-promote-lds{chip=gfx942}))' | FileCheck %s

// An operand converted once per tile (outside the K loop, as attention's
// Q) is loaded straight into its operand layout and takes no LDS. A
// stream-K workgroup's loop over its tiles (tessel.tile_loop) runs each
// tile's program once, so this holds inside it; inside any other loop the
// operand is read repeatedly and goes through LDS.
// CHECK-LABEL: func.func @in_tile_loop
// CHECK-NOT: tessel.lds<1 x[64, 32]
// CHECK: tessel.local_alloc {{.*}} : !tessel.lds<1 x[32, 64], bf16
// CHECK-NOT: tessel.local_alloc
// CHECK: scf.for
// CHECK: %[[A:.*]] = tessel.load %arg0{{.*}} -> tensor<64x32xbf16, #mma_operand>
// CHECK: scf.for
// CHECK: tessel.dot %[[A]],
// CHECK: } {tessel.tile_loop}

// CHECK-LABEL: func.func @in_other_loop
// CHECK-DAG: tessel.local_alloc {{.*}} : !tessel.lds<1 x[64, 32], bf16
// CHECK-DAG: tessel.local_alloc {{.*}} : !tessel.lds<1 x[32, 64], bf16
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [4, 16], waves = [1, 4], order = [0, 1]>
#mma = #tessel.mma<"v_mfma_f32_32x32x8_bf16", waves = [2, 2]>
#mma_operand = #tessel.mma_operand<a, #mma, kWidth = 8>
#mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 8>
module {
  func.func @in_tile_loop(%arg0: memref<64x32xbf16>, %arg1: memref<32x64xbf16, strided<[1, 32]>>, %arg2: memref<64x64xbf16>, %n: index) attributes {tessel.config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 1, instr = "v_mfma_f32_32x32x8_bf16">, tessel.tile = array<i64: 64, 64>, tessel.workgroup_size = 256 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    scf.for %t = %c0 to %n step %c1 {
      %a = tessel.load %arg0[%c0, %c0] : memref<64x32xbf16> -> tensor<64x32xbf16, #blocked>
      %ao = tessel.convert_layout %a : tensor<64x32xbf16, #blocked> -> tensor<64x32xbf16, #mma_operand>
      %acc = scf.for %k = %c0 to %n step %c32 iter_args(%arg4 = %cst) -> (tensor<64x64xf32, #mma>) {
        %b = tessel.load %arg1[%k, %c0] : memref<32x64xbf16, strided<[1, 32]>> -> tensor<32x64xbf16, #blocked1>
        %bo = tessel.convert_layout %b : tensor<32x64xbf16, #blocked1> -> tensor<32x64xbf16, #mma_operand1>
        %d = tessel.dot %ao, %bo, %arg4 : tensor<64x32xbf16, #mma_operand>, tensor<32x64xbf16, #mma_operand1> -> tensor<64x64xf32, #mma>
        scf.yield %d : tensor<64x64xf32, #mma>
      }
      %r = arith.truncf %acc : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
      tessel.store %r, %arg2[%c0, %c0] : tensor<64x64xbf16, #mma>, memref<64x64xbf16>
    } {tessel.tile_loop}
    return
  }
  func.func @in_other_loop(%arg0: memref<64x32xbf16>, %arg1: memref<32x64xbf16, strided<[1, 32]>>, %arg2: memref<64x64xbf16>, %n: index) attributes {tessel.config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 1, instr = "v_mfma_f32_32x32x8_bf16">, tessel.tile = array<i64: 64, 64>, tessel.workgroup_size = 256 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    scf.for %t = %c0 to %n step %c1 {
      %a = tessel.load %arg0[%c0, %c0] : memref<64x32xbf16> -> tensor<64x32xbf16, #blocked>
      %ao = tessel.convert_layout %a : tensor<64x32xbf16, #blocked> -> tensor<64x32xbf16, #mma_operand>
      %acc = scf.for %k = %c0 to %n step %c32 iter_args(%arg4 = %cst) -> (tensor<64x64xf32, #mma>) {
        %b = tessel.load %arg1[%k, %c0] : memref<32x64xbf16, strided<[1, 32]>> -> tensor<32x64xbf16, #blocked1>
        %bo = tessel.convert_layout %b : tensor<32x64xbf16, #blocked1> -> tensor<32x64xbf16, #mma_operand1>
        %d = tessel.dot %ao, %bo, %arg4 : tensor<64x32xbf16, #mma_operand>, tensor<32x64xbf16, #mma_operand1> -> tensor<64x64xf32, #mma>
        scf.yield %d : tensor<64x64xf32, #mma>
      }
      %r = arith.truncf %acc : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
      tessel.store %r, %arg2[%c0, %c0] : tensor<64x64xbf16, #mma>, memref<64x64xbf16>
    }
    return
  }
}
