// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-pipeline))' | FileCheck %s

// Two LDS slots and two K steps in flight: the prologue stages step 0 in
// slot 0 and its operand registers, and loads step 1; each iteration
// writes the next step into the other slot, loads the step after it from
// global memory, and after one barrier reads the next step's operands while
// the dot works on the current ones.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[LB:.*]] = tessel.local_alloc {{.*}} : !tessel.lds<2 x[32, 64], bf16, #swizzle>
// CHECK-DAG: %[[LA:.*]] = tessel.local_alloc {{.*}} : !tessel.lds<2 x[64, 32], bf16, #swizzle1>
// CHECK: %[[A0:.*]] = tessel.load %arg0[%{{.*}}, %[[K0:[a-z0-9_]+]]]
// CHECK: %[[B0:.*]] = tessel.load %arg1[%[[K0]], %{{.*}}]
// CHECK: tessel.local_store %[[A0]], %[[LA]][%[[SLOT0:[a-z0-9_]+]]]
// CHECK: tessel.local_store %[[B0]], %[[LB]][%[[SLOT0]]]
// CHECK: gpu.barrier
// CHECK: %[[RA0:.*]] = tessel.local_load %[[LA]][%[[SLOT0]]]
// CHECK: %[[RB0:.*]] = tessel.local_load %[[LB]][%[[SLOT0]]]
// CHECK: %[[A1:.*]] = tessel.load %arg0
// CHECK: %[[B1:.*]] = tessel.load %arg1
// The loop is unrolled by two, so the two steps' registers alternate instead
// of being copied every iteration; a cleanup loop runs an odd last step. In
// each half a scheduling barrier keeps the LDS stores of the tiles loaded a
// step earlier after the previous step's MFMAs (the load-to-store distance
// is a whole step).
// The slot a step writes is carried by the loop (step 1's is slot 1) and
// flipped every step, so that in the unrolled loop the two halves' slots
// are s and 1 - s and the yield 1 - (1 - s): canonicalized, constants
// (pipeline-unroll.mlir).
// CHECK: scf.for %[[K:.*]] = %[[K0]] to %{{.*}} step %[[STEP:[a-z0-9_]+]] iter_args(%[[ACC:.*]] = %{{.*}}, %[[RA:.*]] = %[[RA0]], %[[RB:.*]] = %[[RB0]], %[[A:.*]] = %[[A1]], %[[B:.*]] = %[[B1]], %[[NEXT:.*]] = %[[ONE:c1[_0-9]*]])
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NEXT: tessel.local_store %[[A]], %[[LA]][%[[NEXT]]]
// CHECK-NEXT: tessel.local_store %[[B]], %[[LB]][%[[NEXT]]]
// CHECK: %[[K2:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK-NEXT: %[[NA:.*]] = tessel.load %arg0[%{{.*}}, %[[K2]]]
// CHECK-NEXT: %[[NB:.*]] = tessel.load %arg1[%[[K2]], %{{.*}}]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[NRA:.*]] = tessel.local_load %[[LA]][%[[NEXT]]]
// CHECK-NEXT: %[[NRB:.*]] = tessel.local_load %[[LB]][%[[NEXT]]]
// CHECK-NEXT: %[[D:.*]] = tessel.dot %[[RA]], %[[RB]], %[[ACC]]
// CHECK-NEXT: %[[NEXT2:.*]] = arith.subi %[[ONE]], %[[NEXT]] : index
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK-NEXT: tessel.local_store %[[NA]], %[[LA]][%[[NEXT2]]]
// CHECK-NEXT: tessel.local_store %[[NB]], %[[LB]][%[[NEXT2]]]
// CHECK: %[[NA2:.*]] = tessel.load %arg0
// CHECK-NEXT: %[[NB2:.*]] = tessel.load %arg1
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[NRA2:.*]] = tessel.local_load %[[LA]][%[[NEXT2]]]
// CHECK-NEXT: %[[NRB2:.*]] = tessel.local_load %[[LB]][%[[NEXT2]]]
// CHECK-NEXT: %[[D2:.*]] = tessel.dot %[[NRA]], %[[NRB]], %[[D]]
// CHECK-NEXT: %[[NEXT3:.*]] = arith.subi %[[ONE]], %[[NEXT2]] : index
// CHECK-NEXT: scf.yield %[[D2]], %[[NRA2]], %[[NRB2]], %[[NA2]], %[[NB2]], %[[NEXT3]]
// CHECK: scf.for
// CHECK: tessel.dot
// CHECK: scf.yield
// CHECK-NOT: gpu.barrier
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [4, 16], waves = [1, 4], order = [0, 1]>
#mma = #tessel.mma<"v_mfma_f32_32x32x8_bf16", waves = [2, 2]>
#swizzle = #tessel.swizzle<vec = 8, perPhase = 2, maxPhase = 4, order = [0, 1]>
#swizzle1 = #tessel.swizzle<vec = 8, perPhase = 2, maxPhase = 4>
#mma_operand = #tessel.mma_operand<a, #mma, kWidth = 8>
#mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 8>
module {
  func.func @matmul(%arg0: memref<64x32xbf16>, %arg1: memref<32x64xbf16, strided<[1, 32]>>, %arg2: memref<64x64xbf16>) attributes {tessel.config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">, tessel.tile = array<i64: 64, 64>, tessel.workgroup_size = 256 : i64} {
    %0 = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[32, 64], bf16, #swizzle>
    %1 = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[64, 32], bf16, #swizzle1>
    %c0 = arith.constant 0 : index
    %2 = tessel.program_id 0
    %3 = tessel.program_id 1
    %c64 = arith.constant 64 : index
    %4 = arith.muli %3, %c64 : index
    %c64_0 = arith.constant 64 : index
    %5 = arith.muli %2, %c64_0 : index
    %c1 = arith.constant 1 : index
    %dim = memref.dim %arg0, %c1 : memref<64x32xbf16>
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #mma>
    %c32 = arith.constant 32 : index
    %c0_1 = arith.constant 0 : index
    %6 = scf.for %arg3 = %c0_1 to %dim step %c32 iter_args(%arg4 = %cst) -> (tensor<64x64xf32, #mma>) {
      %8 = tessel.load %arg0[%4, %arg3] : memref<64x32xbf16> -> tensor<64x32xbf16, #blocked>
      %9 = tessel.load %arg1[%arg3, %5] : memref<32x64xbf16, strided<[1, 32]>> -> tensor<32x64xbf16, #blocked1>
      gpu.barrier
      tessel.local_store %8, %1[%c0] : tensor<64x32xbf16, #blocked>, !tessel.lds<1 x[64, 32], bf16, #swizzle1>
      tessel.local_store %9, %0[%c0] : tensor<32x64xbf16, #blocked1>, !tessel.lds<1 x[32, 64], bf16, #swizzle>
      gpu.barrier
      %10 = tessel.local_load %1[%c0] : !tessel.lds<1 x[64, 32], bf16, #swizzle1> -> tensor<64x32xbf16, #mma_operand>
      %11 = tessel.local_load %0[%c0] : !tessel.lds<1 x[32, 64], bf16, #swizzle> -> tensor<32x64xbf16, #mma_operand1>
      %12 = tessel.dot %10, %11, %arg4 : tensor<64x32xbf16, #mma_operand>, tensor<32x64xbf16, #mma_operand1> -> tensor<64x64xf32, #mma>
      scf.yield %12 : tensor<64x64xf32, #mma>
    }
    %7 = arith.truncf %6 : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
    tessel.store %7, %arg2[%4, %5] : tensor<64x64xbf16, #mma>, memref<64x64xbf16>
    return
  }
}

