// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-promote-lds{chip=gfx950}))' | FileCheck %s
// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-promote-lds{chip=gfx942}))' | FileCheck %s --check-prefix=GFX942

// B stored K x N, loaded as stored (N contiguous): on gfx950 LDS keeps N
// contiguous and the loop reads B with transposing reads, four K elements
// per lane per read. The swizzle keeps four-element runs whole (vec >= 4),
// and the bank analysis of the read is that of the rotated address layout:
// the 16 lanes of a read take four rows of 32 bytes, on distinct banks once
// the rows of odd bit parity swap their two 64-byte halves. No extra cycles
// for either side. A (K contiguous) is read as before.
// CHECK-DAG: #[[$SWB:swizzle[0-9]*]] = #tessel.swizzle<vec = 32, perPhase = 1, maxPhase = 2, fold = true>
// CHECK-LABEL: func.func @matmul_nn
// CHECK-DAG: %[[LB:.*]] = tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[32, 64], bf16, #[[$SWB]]>
// CHECK: gpu.barrier
// CHECK: tessel.local_store %{{.*}}, %[[LB]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tessel.local_load %{{.*}}[%{{.*}}] : {{.*}} -> tensor<32x32xbf16, #mma_operand>
// CHECK-NEXT: tessel.local_load %[[LB]][%{{.*}}] transposed : !tessel.lds<1 x[32, 64], bf16, #[[$SWB]]> -> tensor<32x64xbf16, #mma_operand1>
// CHECK-NEXT: tessel.dot

// gfx942 has no transposing reads: the same load is read element by element.
// GFX942-LABEL: func.func @matmul_nn
// GFX942-NOT: transposed
// GFX942: tessel.dot
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [4, 1], order = [1, 0]>
#blocked1 = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
#mma = #tessel.mma<"v_mfma_f32_32x32x16_bf16", waves = [1, 2]>
#mma_operand = #tessel.mma_operand<a, #mma, kWidth = 8>
#mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 8>
module {
  func.func @matmul_nn(%a: memref<32x128xbf16>, %b: memref<128x64xbf16>, %c: memref<32x64xbf16>) attributes {tessel.config = #tessel.config<tile = [32, 64, 32], waves = [1, 2], stages = 1, instr = "v_mfma_f32_32x32x16_bf16">, tessel.tile = array<i64: 32, 64>, tessel.workgroup_size = 128 : i64} {
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %c128 = arith.constant 128 : index
    %cst = arith.constant dense<0.000000e+00> : tensor<32x64xf32, #mma>
    %acc = scf.for %k = %c0 to %c128 step %c32 iter_args(%sum = %cst) -> (tensor<32x64xf32, #mma>) {
      %ta = tessel.load %a[%c0, %k] in_bounds : memref<32x128xbf16> -> tensor<32x32xbf16, #blocked>
      %tb = tessel.load %b[%k, %c0] in_bounds : memref<128x64xbf16> -> tensor<32x64xbf16, #blocked1>
      %oa = tessel.convert_layout %ta : tensor<32x32xbf16, #blocked> -> tensor<32x32xbf16, #mma_operand>
      %ob = tessel.convert_layout %tb : tensor<32x64xbf16, #blocked1> -> tensor<32x64xbf16, #mma_operand1>
      %d = tessel.dot %oa, %ob, %sum : tensor<32x32xbf16, #mma_operand>, tensor<32x64xbf16, #mma_operand1> -> tensor<32x64xf32, #mma>
      scf.yield %d : tensor<32x64xf32, #mma>
    }
    %r = arith.truncf %acc : tensor<32x64xf32, #mma> to tensor<32x64xbf16, #mma>
    tessel.store %r, %c[%c0, %c0] in_bounds : tensor<32x64xbf16, #mma>, memref<32x64xbf16>
    return
  }
}
