// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-pipeline))' | FileCheck %s

// In-bounds loads (tessel-tile proved the 32x64 and 64x32 tiles of a 64x128
// by 128x64 product in bounds) must stay so when pipelined: the prefetches
// one step (prologue) and two steps (loop) ahead are clamped to the last
// step, K - 64, where masked loads would read zeros past the end.
// CHECK-LABEL: func.func @matmul
// CHECK: %[[K:.*]] = memref.dim %arg0, %{{.*}} : memref<64x128xbf16>
// CHECK: %[[LAST:.*]] = arith.subi %[[K]], %[[STEP:.*]] : index
// CHECK: tessel.load %arg0[%{{.*}}, %[[LB:.*]]] in_bounds
// CHECK: %[[NEXT:.*]] = arith.addi %[[LB]], %[[STEP]] : index
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[NEXT]], %[[LAST]] : index
// CHECK: tessel.load %arg0[%{{.*}}, %[[CLAMPED]]] in_bounds
// CHECK: tessel.load %arg1[%[[CLAMPED]], %{{.*}}] in_bounds
// CHECK: scf.for %[[IV:[a-z0-9_]+]] =
// CHECK: %[[AHEAD:.*]] = arith.addi %[[IV]], %{{.*}} : index
// CHECK: %[[CLAMPED2:.*]] = arith.minui %[[AHEAD]], %[[LAST]] : index
// CHECK: tessel.load %arg0[%{{.*}}, %[[CLAMPED2]]] in_bounds
// CHECK: tessel.load %arg1[%[[CLAMPED2]], %{{.*}}] in_bounds
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [8, 8], waves = [1, 4], order = [0, 1]>
#mma = #tessel.mma<"v_mfma_f32_16x16x16_bf16", waves = [2, 2]>
#swizzle = #tessel.swizzle<vec = 16, perPhase = 1, maxPhase = 4, order = [0, 1]>
#swizzle1 = #tessel.swizzle<vec = 16, perPhase = 1, maxPhase = 4>
#mma_operand = #tessel.mma_operand<a, #mma, kWidth = 8>
#mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 8>
module {
  func.func @matmul(%arg0: memref<64x128xbf16>, %arg1: memref<128x64xbf16, strided<[1, 128]>>, %arg2: memref<64x64xbf16>) attributes {tessel.config = #tessel.config<tile = [32, 32, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_16x16x16_bf16">, tessel.tile = array<i64: 32, 32>, tessel.workgroup_size = 256 : i64} {
    %0 = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[64, 32], bf16, #swizzle>
    %1 = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[32, 64], bf16, #swizzle1>
    %c0 = arith.constant 0 : index
    %2 = tessel.program_id 0
    %3 = tessel.program_id 1
    %c32 = arith.constant 32 : index
    %4 = arith.muli %3, %c32 : index
    %c32_0 = arith.constant 32 : index
    %5 = arith.muli %2, %c32_0 : index
    %c1 = arith.constant 1 : index
    %dim = memref.dim %arg0, %c1 : memref<64x128xbf16>
    %cst = arith.constant dense<0.000000e+00> : tensor<32x32xf32, #mma>
    %c64 = arith.constant 64 : index
    %c0_1 = arith.constant 0 : index
    %6 = scf.for %arg3 = %c0_1 to %dim step %c64 iter_args(%arg4 = %cst) -> (tensor<32x32xf32, #mma>) {
      %8 = tessel.load %arg0[%4, %arg3] in_bounds : memref<64x128xbf16> -> tensor<32x64xbf16, #blocked>
      %9 = tessel.load %arg1[%arg3, %5] in_bounds : memref<128x64xbf16, strided<[1, 128]>> -> tensor<64x32xbf16, #blocked1>
      gpu.barrier
      tessel.local_store %8, %1[%c0] : tensor<32x64xbf16, #blocked>, !tessel.lds<1 x[32, 64], bf16, #swizzle1>
      tessel.local_store %9, %0[%c0] : tensor<64x32xbf16, #blocked1>, !tessel.lds<1 x[64, 32], bf16, #swizzle>
      gpu.barrier
      %10 = tessel.local_load %1[%c0] : !tessel.lds<1 x[32, 64], bf16, #swizzle1> -> tensor<32x64xbf16, #mma_operand>
      %11 = tessel.local_load %0[%c0] : !tessel.lds<1 x[64, 32], bf16, #swizzle> -> tensor<64x32xbf16, #mma_operand1>
      %12 = tessel.dot %10, %11, %arg4 : tensor<32x64xbf16, #mma_operand>, tensor<64x32xbf16, #mma_operand1> -> tensor<32x32xf32, #mma>
      scf.yield %12 : tensor<32x32xf32, #mma>
    }
    %7 = arith.truncf %6 : tensor<32x32xf32, #mma> to tensor<32x32xbf16, #mma>
    tessel.store %7, %arg2[%4, %5] in_bounds : tensor<32x32xbf16, #mma>, memref<64x64xbf16>
    return
  }
}

