// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx950" --split-input-file | FileCheck %s

// An accumulator tile converted to the B operand layout that has its K
// order (kWidth = the accumulator's run of 4) is the same distribution: no
// LDS, no barrier, the registers are reused as they are (attention's P^T).
#acc = #tessel.mma<"v_mfma_f32_32x32x16_f16", waves = [1, 2]>
#runs = #tessel.mma_operand<b, #acc, kWidth = 4>
// CHECK-LABEL: gpu.func @identity
// CHECK-NOT: workgroup(
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @identity(%x: memref<64x64xf16>, %y: memref<64x64xf16>) attributes {tessel.workgroup_size = 128 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<64x64xf16> -> tensor<64x64xf16, #acc>
  %b = tessel.convert_layout %t : tensor<64x64xf16, #acc> -> tensor<64x64xf16, #runs>
  tessel.store %b, %y[%c0, %c0] : tensor<64x64xf16, #runs>, memref<64x64xf16>
  return
}

// -----

// The hardware packing (kWidth = 8) is another distribution: through LDS.
#acc1 = #tessel.mma<"v_mfma_f32_32x32x16_f16", waves = [1, 2]>
#packed = #tessel.mma_operand<b, #acc1, kWidth = 8>
// CHECK-LABEL: gpu.func @through_lds
// CHECK-SAME: workgroup(
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: gpu.return
func.func @through_lds(%x: memref<64x64xf16>, %y: memref<64x64xf16>) attributes {tessel.workgroup_size = 128 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<64x64xf16> -> tensor<64x64xf16, #acc1>
  %b = tessel.convert_layout %t : tensor<64x64xf16, #acc1> -> tensor<64x64xf16, #packed>
  tessel.store %b, %y[%c0, %c0] : tensor<64x64xf16, #packed>, memref<64x64xf16>
  return
}
