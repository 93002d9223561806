// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-promote-lds{chip=gfx942}))' | FileCheck %s

// Both operand tiles go through LDS: one write phase between two barriers,
// then each is read in its MFMA operand layout. The swizzles are the
// chooser's, and the bank analysis of each (zero extra cycles for the
// 16-byte writes and reads) is recorded on the allocation.
// CHECK-DAG: #[[$SWB:swizzle[0-9]*]] = #tessel.swizzle<vec = 8, perPhase = 2, maxPhase = 4, order = [0, 1]>
// CHECK-DAG: #[[$SWA:swizzle[0-9]*]] = #tessel.swizzle<vec = 8, perPhase = 2, maxPhase = 4>
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[LB:.*]] = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[32, 64], bf16, #[[$SWB]]>
// CHECK-DAG: %[[LA:.*]] = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[64, 32], bf16, #[[$SWA]]>
// CHECK: scf.for
// CHECK: %[[TA:.*]] = tessel.load %arg0
// CHECK: %[[TB:.*]] = tessel.load %arg1
// CHECK: gpu.barrier
// CHECK-NEXT: tessel.local_store %[[TA]], %[[LA]][%[[SLOT:[a-z0-9_]+]]]
// CHECK-NEXT: tessel.local_store %[[TB]], %[[LB]][%[[SLOT]]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[RA:.*]] = tessel.local_load %[[LA]][%[[SLOT]]] {{.*}} -> tensor<64x32xbf16, #mma_operand>
// CHECK-NEXT: %[[RB:.*]] = tessel.local_load %[[LB]][%[[SLOT]]] {{.*}} -> tensor<32x64xbf16, #mma_operand1>
// CHECK-NEXT: tessel.dot %[[RA]], %[[RB]]
// CHECK-NOT: tessel.convert_layout
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [4, 16], waves = [1, 4], order = [0, 1]>
#mma = #tessel.mma<"v_mfma_f32_32x32x8_bf16", waves = [2, 2]>
#mma_operand = #tessel.mma_operand<a, #mma, kWidth = 8>
#mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 8>
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
      %8 = tessel.convert_layout %6 : tensor<64x32xbf16, #blocked> -> tensor<64x32xbf16, #mma_operand>
      %9 = tessel.convert_layout %7 : tensor<32x64xbf16, #blocked1> -> tensor<32x64xbf16, #mma_operand1>
      %10 = tessel.dot %8, %9, %arg4 : tensor<64x32xbf16, #mma_operand>, tensor<32x64xbf16, #mma_operand1> -> tensor<64x64xf32, #mma>
      scf.yield %10 : tensor<64x64xf32, #mma>
    }
    %5 = arith.truncf %4 : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
    tessel.store %5, %arg2[%2, %3] : tensor<64x64xbf16, #mma>, memref<64x64xbf16>
    return
  }
}

