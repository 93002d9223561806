// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" | FileCheck %s

// LDS accesses marked tessel.lds_shared_addresses (tessel-pipeline's
// double-buffered attention loop, whose slot is a run-time value) give the
// registers whose offsets differ only in bits no lane or wave sets one
// address: a view of LDS at the lane's offset plus the slot's base, and
// constant indices (the backend folds them into the instruction's offset
// field). Unmarked accesses on a CDNA chip keep one index per register.
// CHECK-LABEL: gpu.func @shared
// The marked store: B's 32x64 tile, one 16-byte run per lane, at a view.
// CHECK: %[[STORE_VIEW:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [4096], strides: [1]
// CHECK-NEXT: vector.store %{{.*}}, %[[STORE_VIEW]][%c0] {{.*}} : memref<4096xbf16, strided<[1], offset: ?>, #gpu.address_space<workgroup>>, vector<8xbf16>
// The unmarked read of A indexes LDS itself, one index per register.
// CHECK: vector.load %{{.*}}[%{{.*}}] {{.*}} : memref<1024xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// The marked read of B (K not contiguous: one element per read): a view
// per distinct lane-set offset, reused with other constant indices.
// CHECK: %[[VIEW:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%[[OFFSET:[0-9]+]]], sizes: [4096], strides: [1]
// CHECK-NEXT: vector.load %[[VIEW]][%c0] {{.*}} : memref<4096xbf16, strided<[1], offset: ?>, #gpu.address_space<workgroup>>, vector<1xbf16>
// CHECK: %[[AGAIN:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%[[OFFSET]]], sizes: [4096], strides: [1]
// CHECK-NEXT: vector.load %[[AGAIN]][%c512] {{.*}} : memref<4096xbf16, strided<[1], offset: ?>, #gpu.address_space<workgroup>>, vector<1xbf16>
// CHECK: gpu.return
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
#mma = #tessel.mma<"v_mfma_f32_32x32x8_bf16", waves = [1, 2]>
#swizzle = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>
#swizzle1 = #tessel.swizzle<vec = 8, perPhase = 4, maxPhase = 4>
#mma_operand = #tessel.mma_operand<a, #mma, kWidth = 4>
#mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 4>
module {
  func.func @shared(%arg0: memref<32x128xbf16>, %arg1: memref<128x64xbf16>, %arg2: memref<32x64xbf16>) attributes {tessel.config = #tessel.config<tile = [32, 64, 32], waves = [1, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">, tessel.tile = array<i64: 32, 64>, tessel.workgroup_size = 128 : i64} {
    %0 = tessel.local_alloc : !tessel.lds<2 x[32, 64], bf16, #swizzle>
    %1 = tessel.local_alloc : !tessel.lds<1 x[32, 32], bf16, #swizzle1>
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %cst = arith.constant dense<0.000000e+00> : tensor<32x64xf32, #mma>
    %2 = scf.for %arg3 = %c0 to %c128 step %c32 iter_args(%arg4 = %cst) -> (tensor<32x64xf32, #mma>) {
      %step = arith.divui %arg3, %c32 : index
      %slot = arith.remui %step, %c2 : index
      %4 = tessel.load %arg0[%c0, %arg3] in_bounds : memref<32x128xbf16> -> tensor<32x32xbf16, #blocked>
      %5 = tessel.load %arg1[%arg3, %c0] in_bounds : memref<128x64xbf16> -> tensor<32x64xbf16, #blocked1>
      gpu.barrier
      tessel.local_store %4, %1[%c0] : tensor<32x32xbf16, #blocked>, !tessel.lds<1 x[32, 32], bf16, #swizzle1>
      tessel.local_store %5, %0[%slot] {tessel.lds_shared_addresses} : tensor<32x64xbf16, #blocked1>, !tessel.lds<2 x[32, 64], bf16, #swizzle>
      gpu.barrier
      %6 = tessel.local_load %1[%c0] : !tessel.lds<1 x[32, 32], bf16, #swizzle1> -> tensor<32x32xbf16, #mma_operand>
      %7 = tessel.local_load %0[%slot] {tessel.lds_shared_addresses} : !tessel.lds<2 x[32, 64], bf16, #swizzle> -> tensor<32x64xbf16, #mma_operand1>
      %8 = tessel.dot %6, %7, %arg4 : tensor<32x32xbf16, #mma_operand>, tensor<32x64xbf16, #mma_operand1> -> tensor<32x64xf32, #mma>
      scf.yield %8 : tensor<32x64xf32, #mma>
    }
    %3 = arith.truncf %2 : tensor<32x64xf32, #mma> to tensor<32x64xbf16, #mma>
    tessel.store %3, %arg2[%c0, %c0] in_bounds : tensor<32x64xbf16, #mma>, memref<32x64xbf16>
    return
  }
}
