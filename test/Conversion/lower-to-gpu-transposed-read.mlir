// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx950" | FileCheck %s
// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx950" --tessel-to-rocdl="chip=gfx950" | FileCheck %s --check-prefix=ROCDL
// RUN: not tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" 2>&1 | FileCheck %s --check-prefix=GFX942

// A transposed local_load (B stored K x N, tessel-promote-lds on gfx950)
// becomes one amdgpu.transpose_load per four registers: each lane's share
// of a wave's 32x32 B tile is 16 elements, four reads. Reads whose
// addresses differ only in bits no lane sets share one address (a view at
// the lane's offset) and take constant indices, which the backend folds
// into the instruction's offset field.
// CHECK-LABEL: gpu.func @matmul_nn
// CHECK-COUNT-4: amdgpu.transpose_load %{{.*}}[%{{.*}}] : memref<2048xbf16, strided<[1], offset: ?>, #gpu.address_space<workgroup>> -> vector<4xbf16>
// CHECK-NOT: amdgpu.transpose_load
// CHECK: gpu.return

// ROCDL-LABEL: llvm.func @matmul_nn
// ROCDL-COUNT-4: rocdl.ds.read.tr16.b64 %{{.*}} : <3> -> vector<4xbf16>

// GFX942: error: 'tessel.local_load' op transposed LDS reads need a chip that has them (gfx950), not gfx942
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
#mma = #tessel.mma<"v_mfma_f32_32x32x16_bf16", waves = [1, 2]>
#swizzle = #tessel.swizzle<vec = 32, perPhase = 1, maxPhase = 2, fold = true>
#swizzle1 = #tessel.swizzle<vec = 8, perPhase = 4, maxPhase = 4>
#mma_operand = #tessel.mma_operand<a, #mma, kWidth = 8>
#mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 8>
module {
  func.func @matmul_nn(%arg0: memref<32x128xbf16>, %arg1: memref<128x64xbf16>, %arg2: memref<32x64xbf16>) attributes {tessel.config = #tessel.config<tile = [32, 64, 32], waves = [1, 2], stages = 1, instr = "v_mfma_f32_32x32x16_bf16">, tessel.tile = array<i64: 32, 64>, tessel.workgroup_size = 128 : i64} {
    %0 = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[32, 64], bf16, #swizzle>
    %1 = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[32, 32], bf16, #swizzle1>
    %c0 = arith.constant 0 : index
    %c0_0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %cst = arith.constant dense<0.000000e+00> : tensor<32x64xf32, #mma>
    %2 = scf.for %arg3 = %c0_0 to %c128 step %c32 iter_args(%arg4 = %cst) -> (tensor<32x64xf32, #mma>) {
      %4 = tessel.load %arg0[%c0_0, %arg3] in_bounds : memref<32x128xbf16> -> tensor<32x32xbf16, #blocked>
      %5 = tessel.load %arg1[%arg3, %c0_0] in_bounds : memref<128x64xbf16> -> tensor<32x64xbf16, #blocked1>
      gpu.barrier
      tessel.local_store %4, %1[%c0] : tensor<32x32xbf16, #blocked>, !tessel.lds<1 x[32, 32], bf16, #swizzle1>
      tessel.local_store %5, %0[%c0] : tensor<32x64xbf16, #blocked1>, !tessel.lds<1 x[32, 64], bf16, #swizzle>
      gpu.barrier
      %6 = tessel.local_load %1[%c0] : !tessel.lds<1 x[32, 32], bf16, #swizzle1> -> tensor<32x32xbf16, #mma_operand>
      %7 = tessel.local_load %0[%c0] transposed : !tessel.lds<1 x[32, 64], bf16, #swizzle> -> tensor<32x64xbf16, #mma_operand1>
      %8 = tessel.dot %6, %7, %arg4 : tensor<32x32xbf16, #mma_operand>, tensor<32x64xbf16, #mma_operand1> -> tensor<32x64xf32, #mma>
      scf.yield %8 : tensor<32x64xf32, #mma>
    }
    %3 = arith.truncf %2 : tensor<32x64xf32, #mma> to tensor<32x64xbf16, #mma>
    tessel.store %3, %arg2[%c0_0, %c0_0] in_bounds : tensor<32x64xbf16, #mma>, memref<32x64xbf16>
    return
  }
}

