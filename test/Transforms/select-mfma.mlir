// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-mfma{chip=gfx942}))' | FileCheck %s
// RUN: not tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-mfma{chip=gfx1100}))' 2>&1 | FileCheck %s --check-prefix=RDNA

// The operands of the dot move to the instruction's operand layouts; bf16
// v_mfma_f32_32x32x8 holds 4 K elements per lane, doubled to 8 so that a
// lane reads 16 bytes of LDS at once.
// CHECK-DAG: #[[$A:mma_operand[0-9]*]] = #tessel.mma_operand<a, #mma, kWidth = 8>
// CHECK-DAG: #[[$B:mma_operand[0-9]*]] = #tessel.mma_operand<b, #mma, kWidth = 8>
// CHECK-LABEL: func.func @matmul
// CHECK: %[[TA:.*]] = tessel.load %arg0
// CHECK: %[[TB:.*]] = tessel.load %arg1
// CHECK: %[[CA:.*]] = tessel.convert_layout %[[TA]] : tensor<64x32xbf16, #blocked> -> tensor<64x32xbf16, #[[$A]]>
// CHECK: %[[CB:.*]] = tessel.convert_layout %[[TB]] : tensor<32x64xbf16, #blocked1> -> tensor<32x64xbf16, #[[$B]]>
// CHECK: tessel.dot %[[CA]], %[[CB]], %{{.*}} : tensor<64x32xbf16, #[[$A]]>, tensor<32x64xbf16, #[[$B]]> -> tensor<64x64xf32, #mma>

// RDNA: error: 'tessel.dot' op v_mfma_f32_32x32x8_bf16 is not available on gfx1100 (it is on gfx90a, gfx942, gfx950)
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [4, 16], waves = [1, 4], order = [0, 1]>
#mma = #tessel.mma<"v_mfma_f32_32x32x8_bf16", waves = [2, 2]>
module {
  func.func @matmul(%arg0: memref<64x32xbf16>, %arg1: memref<32x64xbf16, strided<[1, 32]>>, %arg2: memref<64x64xbf16>) attributes {tessel.config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">, tessel.tile = array<i64: 64, 64>, tessel.workgroup_size = 256 : i64} {
    %0 = tessel.program_id 0
    %1 = tessel.program_id 1
    %c64 = arith.constant 64 : index
    %2 = arith.muli %1, %c64 : index
    %c64_0 = arith.constant 64 : index
    %3 = arith.muli %0, %c64_0 : index
    %c1 = arith.constant 1 : index
    %dim = memref.dim %arg0, %c1 : memref<64x32xbf16>
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c32 = arith.constant 32 : index
    %c0 = arith.constant 0 : index
    %4 = scf.for %arg3 = %c0 to %dim step %c32 iter_args(%arg4 = %cst) -> (tensor<64x64xf32, #mma>) {
      %6 = tessel.load %arg0[%2, %arg3] : memref<64x32xbf16> -> tensor<64x32xbf16, #blocked>
      %7 = tessel.load %arg1[%arg3, %3] : memref<32x64xbf16, strided<[1, 32]>> -> tensor<32x64xbf16, #blocked1>
      %8 = tessel.dot %6, %7, %arg4 : tensor<64x32xbf16, #blocked>, tensor<32x64xbf16, #blocked1> -> tensor<64x64xf32, #mma>
      scf.yield %8 : tensor<64x64xf32, #mma>
    }
    %5 = arith.truncf %4 : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
    tessel.store %5, %arg2[%2, %3] : tensor<64x64xbf16, #mma>, memref<64x64xbf16>
    return
  }
}


