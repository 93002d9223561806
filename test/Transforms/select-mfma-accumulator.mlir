// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-mfma{chip=gfx950}))' | FileCheck %s

// A B operand that is an earlier product's accumulator (attention's P^T)
// keeps the accumulator's K order: both operands take its run of 4 K
// elements per lane (below the 8 of gfx950's 32x32x16 f16, so each
// instruction takes two runs), which makes the conversion of P^T the
// identity. An operand loaded outside the loop (Q^T) converts once, where
// it is loaded.
// CHECK-DAG: #[[$RUNS_A:mma_operand[0-9]*]] = #tessel.mma_operand<a, #mma{{[0-9]*}}, kWidth = 4>
// CHECK-DAG: #[[$RUNS_B:mma_operand[0-9]*]] = #tessel.mma_operand<b, #mma{{[0-9]*}}, kWidth = 4>
// CHECK-LABEL: func.func @accumulator_operand
// CHECK: %[[Q:.*]] = tessel.load
// CHECK-NEXT: tessel.convert_layout %[[Q]]
// CHECK: scf.for
// CHECK: tessel.convert_layout %{{.*}} : tensor<128x64xf16, #blocked{{[0-9]*}}> -> tensor<128x64xf16, #[[$RUNS_A]]>
// CHECK: tessel.convert_layout %{{.*}} : tensor<64x64xf16, #mma{{[0-9]*}}> -> tensor<64x64xf16, #[[$RUNS_B]]>
#vt = #tessel.blocked<sizePerThread = [8, 4], threadsPerWave = [16, 4], waves = [1, 2], order = [0, 1]>
#qt = #tessel.blocked<sizePerThread = [8, 1], threadsPerWave = [8, 8], waves = [1, 2], order = [0, 1]>
#k = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [4, 16], waves = [2, 1], order = [1, 0]>
#acc = #tessel.mma<"v_mfma_f32_32x32x16_f16", waves = [1, 2]>
func.func @accumulator_operand(%qs: memref<128x64xf16>, %ks: memref<64x128xf16>, %vs: memref<128x64xf16>, %n: index) -> tensor<128x64xf32, #acc> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
  %init = arith.constant dense<0.0> : tensor<128x64xf32, #acc>
  %q = tessel.load %qs[%c0, %c0] : memref<128x64xf16> -> tensor<128x64xf16, #qt>
  %o = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<128x64xf32, #acc>) {
    %k = tessel.load %ks[%c0, %c0] : memref<64x128xf16> -> tensor<64x128xf16, #k>
    %vT = tessel.load %vs[%c0, %c0] : memref<128x64xf16> -> tensor<128x64xf16, #vt>
    %s = tessel.dot %k, %q, %zero : tensor<64x128xf16, #k>, tensor<128x64xf16, #qt> -> tensor<64x64xf32, #acc>
    %p = arith.truncf %s : tensor<64x64xf32, #acc> to tensor<64x64xf16, #acc>
    %next = tessel.dot %vT, %p, %acc : tensor<128x64xf16, #vt>, tensor<64x64xf16, #acc> -> tensor<128x64xf32, #acc>
    scf.yield %next : tensor<128x64xf32, #acc>
  }
  return %o : tensor<128x64xf32, #acc>
}
