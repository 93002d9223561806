// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-pipeline))' | FileCheck %s

// stages = 1 asks for no pipelining: the loop is left as it is.
// CHECK-LABEL: func.func @unpipelined
// CHECK: scf.for
// CHECK-NEXT: tessel.load
// CHECK: tessel.local_store %{{.*}}, %{{.*}}[%{{.*}}] : tensor<32x32xf16, #blocked>, !tessel.lds<1 x[32, 32], f16, #swizzle>
#blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [1, 1], order = [1, 0]>
#swizzle = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 4>
func.func @unpipelined(%a: memref<32x64xf16>) attributes {tessel.config = #tessel.config<tile = [32, 32, 32], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">} {
  %lds = tessel.local_alloc : !tessel.lds<1 x[32, 32], f16, #swizzle>
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.for %k = %c0 to %c64 step %c32 {
    %t = tessel.load %a[%c0, %k] : memref<32x64xf16> -> tensor<32x32xf16, #blocked>
    gpu.barrier
    tessel.local_store %t, %lds[%c0] : tensor<32x32xf16, #blocked>, !tessel.lds<1 x[32, 32], f16, #swizzle>
    gpu.barrier
  }
  return
}
