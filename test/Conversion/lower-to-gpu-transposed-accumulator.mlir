// RUN: tessel-opt %s --split-input-file --tessel-lower-to-gpu="chip=gfx942" | FileCheck %s

// A transposed accumulator is the product of the swapped operands: B's
// registers (bf8) go to the instruction's first operand, A's (fp8) to the
// second, and a lane's four consecutive registers are four consecutive
// columns of a row of C: 16-byte stores of f32.
// CHECK-LABEL: gpu.func @transposed
// CHECK: amdgpu.mfma 32x32x16 %{{.*}} * %{{.*}} + %{{.*}} blgp =  none : vector<8xf8E5M2FNUZ>, vector<8xf8E4M3FNUZ>, vector<16xf32>
// CHECK-NOT: memref.store
// CHECK-COUNT-4: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<32x32xf32>, vector<4xf32>
// CHECK-NOT: memref.store
// CHECK: gpu.return
#mma = #tessel.mma<"v_mfma_f32_32x32x16_fp8_bf8", waves = [1, 1], transposed>
#a = #tessel.mma_operand<a, #mma, kWidth = 8>
#b = #tessel.mma_operand<b, #mma, kWidth = 8>
module {
  func.func @transposed(%a: memref<32x16xf8E4M3FNUZ>, %b: memref<16x32xf8E5M2FNUZ>, %c: memref<32x32xf32>) attributes {tessel.config = #tessel.config<tile = [32, 32, 16], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x16_fp8_bf8">, tessel.tile = array<i64: 32, 32>, tessel.workgroup_size = 64 : i64} {
    %c0 = arith.constant 0 : index
    %cst = arith.constant dense<0.0> : tensor<32x32xf32, #mma>
    %0 = tessel.load %a[%c0, %c0] in_bounds : memref<32x16xf8E4M3FNUZ> -> tensor<32x16xf8E4M3FNUZ, #a>
    %1 = tessel.load %b[%c0, %c0] in_bounds : memref<16x32xf8E5M2FNUZ> -> tensor<16x32xf8E5M2FNUZ, #b>
    %2 = tessel.dot %0, %1, %cst : tensor<32x16xf8E4M3FNUZ, #a>, tensor<16x32xf8E5M2FNUZ, #b> -> tensor<32x32xf32, #mma>
    tessel.store %2, %c[%c0, %c0] in_bounds : tensor<32x32xf32, #mma>, memref<32x32xf32>
    return
  }
}

// -----

// The hardware layout: A to the first operand, and a lane's registers run
// down a column, so the same row-major C takes one store per element.
// CHECK-LABEL: gpu.func @hardware
// CHECK: amdgpu.mfma 32x32x16 %{{.*}} * %{{.*}} + %{{.*}} blgp =  none : vector<8xf8E4M3FNUZ>, vector<8xf8E5M2FNUZ>, vector<16xf32>
// CHECK-NOT: vector.store
// CHECK-COUNT-16: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<32x32xf32>
// CHECK-NOT: vector.store
// CHECK: gpu.return
#mma = #tessel.mma<"v_mfma_f32_32x32x16_fp8_bf8", waves = [1, 1]>
#a = #tessel.mma_operand<a, #mma, kWidth = 8>
#b = #tessel.mma_operand<b, #mma, kWidth = 8>
module {
  func.func @hardware(%a: memref<32x16xf8E4M3FNUZ>, %b: memref<16x32xf8E5M2FNUZ>, %c: memref<32x32xf32>) attributes {tessel.config = #tessel.config<tile = [32, 32, 16], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x16_fp8_bf8">, tessel.tile = array<i64: 32, 32>, tessel.workgroup_size = 64 : i64} {
    %c0 = arith.constant 0 : index
    %cst = arith.constant dense<0.0> : tensor<32x32xf32, #mma>
    %0 = tessel.load %a[%c0, %c0] in_bounds : memref<32x16xf8E4M3FNUZ> -> tensor<32x16xf8E4M3FNUZ, #a>
    %1 = tessel.load %b[%c0, %c0] in_bounds : memref<16x32xf8E5M2FNUZ> -> tensor<16x32xf8E5M2FNUZ, #b>
    %2 = tessel.dot %0, %1, %cst : tensor<32x16xf8E4M3FNUZ, #a>, tensor<16x32xf8E5M2FNUZ, #b> -> tensor<32x32xf32, #mma>
    tessel.store %2, %c[%c0, %c0] in_bounds : tensor<32x32xf32, #mma>, memref<32x32xf32>
    return
  }
}
