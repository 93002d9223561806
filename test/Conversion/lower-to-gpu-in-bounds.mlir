// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" | FileCheck %s

// A tile program whose global tiles are in bounds (64x128 by 128x64 bf16 in
// 32x32x64 tiles, produced by tessel-tile and tessel-pipeline): the buffer
// loads read without masks or the empty-memref branch, and C is stored
// without predicates.
// CHECK-LABEL: gpu.func @matmul
// CHECK-NOT: arith.select
// CHECK-NOT: arith.cmpi
// CHECK-NOT: scf.if
// CHECK: amdgpu.raw_buffer_load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x128xbf16>, i32, i32 -> vector<8xbf16>
// CHECK: amdgpu.raw_buffer_load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x128xbf16, strided<[128, 1]>>, i32, i32 -> vector<8xbf16>
// CHECK: scf.for
// CHECK: amdgpu.raw_buffer_load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x128xbf16>, i32, i32 -> vector<8xbf16>
// CHECK: amdgpu.mfma
// CHECK: scf.yield
// CHECK: arith.trunci %{{.*}} : vector<{{[0-9]+}}xi32> to vector<{{[0-9]+}}xi16>
// CHECK-NOT: scf.if
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<64x64xbf16>
// CHECK: gpu.return
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [8, 8], waves = [1, 4], order = [0, 1]>
#mma = #tessel.mma<"v_mfma_f32_16x16x16_bf16", waves = [2, 2]>
#swizzle = #tessel.swizzle<vec = 16, perPhase = 1, maxPhase = 4, order = [0, 1]>
#swizzle1 = #tessel.swizzle<vec = 16, perPhase = 1, maxPhase = 4>
#mma_operand = #tessel.mma_operand<a, #mma, kWidth = 8>
#mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 8>
module {
  func.func @matmul(%arg0: memref<64x128xbf16>, %arg1: memref<128x64xbf16, strided<[1, 128]>>, %arg2: memref<64x64xbf16>) attributes {tessel.config = #tessel.config<tile = [32, 32, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_16x16x16_bf16">, tessel.tile = array<i64: 32, 32>, tessel.workgroup_size = 256 : i64} {
    %0 = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<2 x[64, 32], bf16, #swizzle>
    %1 = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<2 x[32, 64], bf16, #swizzle1>
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
    %6 = arith.subi %dim, %c64 : index
    %c0_2 = arith.constant 0 : index
    %c1_3 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %7 = tessel.load %arg0[%4, %c0_1] in_bounds : memref<64x128xbf16> -> tensor<32x64xbf16, #blocked>
    %8 = tessel.load %arg1[%c0_1, %5] in_bounds : memref<128x64xbf16, strided<[1, 128]>> -> tensor<64x32xbf16, #blocked1>
    tessel.local_store %7, %1[%c0_2] : tensor<32x64xbf16, #blocked>, !tessel.lds<2 x[32, 64], bf16, #swizzle1>
    tessel.local_store %8, %0[%c0_2] : tensor<64x32xbf16, #blocked1>, !tessel.lds<2 x[64, 32], bf16, #swizzle>
    gpu.barrier
    %9 = tessel.local_load %1[%c0_2] : !tessel.lds<2 x[32, 64], bf16, #swizzle1> -> tensor<32x64xbf16, #mma_operand>
    %10 = tessel.local_load %0[%c0_2] : !tessel.lds<2 x[64, 32], bf16, #swizzle> -> tensor<64x32xbf16, #mma_operand1>
    %11 = arith.addi %c0_1, %c64 : index
    %12 = arith.minui %11, %6 : index
    %13 = tessel.load %arg0[%4, %12] in_bounds : memref<64x128xbf16> -> tensor<32x64xbf16, #blocked>
    %14 = tessel.load %arg1[%12, %5] in_bounds : memref<128x64xbf16, strided<[1, 128]>> -> tensor<64x32xbf16, #blocked1>
    %15:5 = scf.for %arg3 = %c0_1 to %dim step %c64 iter_args(%arg4 = %cst, %arg5 = %9, %arg6 = %10, %arg7 = %13, %arg8 = %14) -> (tensor<32x32xf32, #mma>, tensor<32x64xbf16, #mma_operand>, tensor<64x32xbf16, #mma_operand1>, tensor<32x64xbf16, #blocked>, tensor<64x32xbf16, #blocked1>) {
      %17 = arith.subi %arg3, %c0_1 : index
      %18 = arith.divui %17, %c64 : index
      %19 = arith.addi %18, %c1_3 : index
      %20 = arith.remui %19, %c2 : index
      tessel.local_store %arg7, %1[%20] : tensor<32x64xbf16, #blocked>, !tessel.lds<2 x[32, 64], bf16, #swizzle1>
      tessel.local_store %arg8, %0[%20] : tensor<64x32xbf16, #blocked1>, !tessel.lds<2 x[64, 32], bf16, #swizzle>
      %21 = arith.muli %c64, %c2 : index
      %22 = arith.addi %arg3, %21 : index
      %23 = arith.minui %22, %6 : index
      %24 = tessel.load %arg0[%4, %23] in_bounds : memref<64x128xbf16> -> tensor<32x64xbf16, #blocked>
      %25 = tessel.load %arg1[%23, %5] in_bounds : memref<128x64xbf16, strided<[1, 128]>> -> tensor<64x32xbf16, #blocked1>
      gpu.barrier
      %26 = tessel.local_load %1[%20] : !tessel.lds<2 x[32, 64], bf16, #swizzle1> -> tensor<32x64xbf16, #mma_operand>
      %27 = tessel.local_load %0[%20] : !tessel.lds<2 x[64, 32], bf16, #swizzle> -> tensor<64x32xbf16, #mma_operand1>
      %28 = tessel.dot %arg5, %arg6, %arg4 : tensor<32x64xbf16, #mma_operand>, tensor<64x32xbf16, #mma_operand1> -> tensor<32x32xf32, #mma>
      scf.yield %28, %26, %27, %24, %25 : tensor<32x32xf32, #mma>, tensor<32x64xbf16, #mma_operand>, tensor<64x32xbf16, #mma_operand1>, tensor<32x64xbf16, #blocked>, tensor<64x32xbf16, #blocked1>
    }
    %16 = arith.truncf %15#0 : tensor<32x32xf32, #mma> to tensor<32x32xbf16, #mma>
    tessel.store %16, %arg2[%4, %5] in_bounds : tensor<32x32xbf16, #mma>, memref<64x64xbf16>
    return
  }
}

