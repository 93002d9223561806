// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" | FileCheck %s
// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" --tessel-to-rocdl="chip=gfx942" | FileCheck %s --check-prefix=ROCDL

// The tile program becomes a kernel of gpu.module @tessel_kernels with its
// LDS buffers as workgroup attributions; each tile a per-lane vector.
// CHECK: gpu.module @tessel_kernels
// CHECK: gpu.func @matmul(%[[A:.*]]: memref<64x32xbf16>, %[[B:.*]]: memref<32x64xbf16, strided<[1, 32]>>, %[[C:.*]]: memref<64x64xbf16>)
// CHECK-SAME: workgroup(%[[LA:.*]] : memref<2048xbf16, #gpu.address_space<workgroup>>, %[[LB:.*]] : memref<2048xbf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK-SAME: tessel.tile = array<i64: 64, 64>
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.remui %[[TID]]
// CHECK: arith.divui %[[TID]]
// Global loads: 16-byte buffer loads along the contiguous dimension; a
// masked-off vector reads row 64 of A, past the buffer's end, which the
// hardware returns as zeros. B (K contiguous) through a transposed view,
// sent past its end the same way.
// CHECK: %[[ROW:.*]] = arith.select %{{.*}}, %{{.*}}, %c64 : index
// CHECK: %[[ROW32:.*]] = arith.index_cast %[[ROW]] : index to i32
// CHECK: amdgpu.raw_buffer_load %[[A]][%[[ROW32]], %{{.*}}] : memref<64x32xbf16>, i32, i32 -> vector<8xbf16>
// CHECK: %[[BT:.*]] = memref.transpose %[[B]] (d0, d1) -> (d1, d0)
// CHECK: arith.select %{{.*}}, %{{.*}}, %c64 : index
// CHECK: amdgpu.raw_buffer_load %[[BT]][%{{.*}}, %{{.*}}] : memref<64x32xbf16, strided<[32, 1]>>, i32, i32 -> vector<8xbf16>
// The K loop: 16-byte LDS writes between barriers, the next step's global
// loads, 16-byte LDS reads and the MFMAs.
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: vector.store %{{.*}}, %[[LB]][%{{.*}}] {alignment = 16 : i64} : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store %{{.*}}, %[[LA]][%{{.*}}] {alignment = 16 : i64} : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: amdgpu.raw_buffer_load %[[A]]
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK-COUNT-4: amdgpu.mfma 32x32x8 %{{.*}} * %{{.*}} + %{{.*}} blgp =  none : vector<4xbf16>, vector<4xbf16>, vector<16xf32>
// CHECK: scf.yield
// The epilogue: predicated stores of C.
// Rounding to bf16 (gfx942 has no conversion instruction): a NaN becomes
// 0x7fc00000 first, then the bits plus 0x7fff plus the lowest kept bit.
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[ACC:.*]], %[[ACC]] : vector<16xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[ACC]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[QNAN:.*]] = arith.constant dense<2143289344> : vector<16xi32>
// CHECK: %[[KEPT:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[BITS]] : vector<16xi1>, vector<16xi32>
// CHECK: %[[PLUS:.*]] = arith.addi %[[KEPT]], %{{.*}} : vector<16xi32>
// CHECK: %[[ROUNDED:.*]] = arith.addi %[[PLUS]], %{{.*}} : vector<16xi32>
// CHECK: %[[TOP:.*]] = arith.shrui %[[ROUNDED]], %{{.*}} : vector<16xi32>
// CHECK: arith.trunci %[[TOP]] : vector<16xi32> to vector<16xi16>
// C's elements through the buffer resource: a masked-off element's row
// index is sent past the end (64), where the store is dropped; no branch.
// CHECK-NOT: scf.if
// CHECK: %[[CROW:.*]] = arith.select %{{.*}}, %{{.*}}, %c64 : index
// CHECK: %[[CROW32:.*]] = arith.index_cast %[[CROW]] : index to i32
// CHECK: amdgpu.raw_buffer_store %{{.*}} -> %[[C]][%[[CROW32]], %{{.*}}] : bf16 -> memref<64x64xbf16>, i32, i32
// CHECK: gpu.return
// CHECK-NOT: tessel.

// ROCDL: llvm.func @matmul
// ROCDL-SAME: rocdl.kernel
// ROCDL: rocdl.mfma.f32.32x32x8bf16.1k
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
    %c0 = arith.constant 0 : index
    %6 = tessel.load %arg0[%4, %c0] : memref<64x32xbf16> -> tensor<64x32xbf16, #blocked>
    %7 = tessel.load %arg1[%c0, %5] : memref<32x64xbf16, strided<[1, 32]>> -> tensor<32x64xbf16, #blocked1>
    %8:3 = scf.for %arg3 = %c0 to %dim step %c32 iter_args(%arg4 = %cst, %arg5 = %6, %arg6 = %7) -> (tensor<64x64xf32, #mma>, tensor<64x32xbf16, #blocked>, tensor<32x64xbf16, #blocked1>) {
      %c0_1 = arith.constant 0 : index
      gpu.barrier
      tessel.local_store %arg5, %1[%c0_1] : tensor<64x32xbf16, #blocked>, !tessel.lds<1 x[64, 32], bf16, #swizzle1>
      tessel.local_store %arg6, %0[%c0_1] : tensor<32x64xbf16, #blocked1>, !tessel.lds<1 x[32, 64], bf16, #swizzle>
      gpu.barrier
      %10 = arith.addi %arg3, %c32 : index
      %11 = tessel.load %arg0[%4, %10] : memref<64x32xbf16> -> tensor<64x32xbf16, #blocked>
      %12 = tessel.load %arg1[%10, %5] : memref<32x64xbf16, strided<[1, 32]>> -> tensor<32x64xbf16, #blocked1>
      %13 = tessel.local_load %1[%c0_1] : !tessel.lds<1 x[64, 32], bf16, #swizzle1> -> tensor<64x32xbf16, #mma_operand>
      %14 = tessel.local_load %0[%c0_1] : !tessel.lds<1 x[32, 64], bf16, #swizzle> -> tensor<32x64xbf16, #mma_operand1>
      %15 = tessel.dot %13, %14, %arg4 : tensor<64x32xbf16, #mma_operand>, tensor<32x64xbf16, #mma_operand1> -> tensor<64x64xf32, #mma>
      scf.yield %15, %11, %12 : tensor<64x64xf32, #mma>, tensor<64x32xbf16, #blocked>, tensor<32x64xbf16, #blocked1>
    }
    %9 = arith.truncf %8#0 : tensor<64x64xf32, #mma> to tensor<64x64xbf16, #mma>
    tessel.store %9, %arg2[%4, %5] : tensor<64x64xbf16, #mma>, memref<64x64xbf16>
    return
  }
}

