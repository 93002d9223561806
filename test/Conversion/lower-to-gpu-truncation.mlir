// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" --split-input-file | FileCheck %s

// f32 -> f16 rounded toward zero (attention's probabilities where the row
// sums add the rounded values): two values a v_cvt_pkrtz_f16_f32. A 64x64
// tile over 128 lanes is 32 values a lane: 16 conversions.
#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 2]>
// CHECK-LABEL: gpu.func @toward_zero
// CHECK-COUNT-16: rocdl.cvt.pkrtz %{{.*}}, %{{.*}} : vector<2xf16>
// CHECK-NOT: rocdl.cvt.pkrtz
// CHECK-NOT: arith.truncf
// CHECK: gpu.return
func.func @toward_zero(%x: memref<64x64xf32>, %y: memref<64x64xf16>) attributes {tessel.workgroup_size = 128 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<64x64xf32> -> tensor<64x64xf32, #acc>
  %h = arith.truncf %t toward_zero : tensor<64x64xf32, #acc> to tensor<64x64xf16, #acc>
  tessel.store %h, %y[%c0, %c0] : tensor<64x64xf16, #acc>, memref<64x64xf16>
  return
}

// -----

// The default rounding (to nearest even) stays arith.truncf, which the
// backend selects as v_cvt_f16_f32.
#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 2]>
// CHECK-LABEL: gpu.func @to_nearest
// CHECK-NOT: rocdl.cvt.pkrtz
// CHECK: arith.truncf
// CHECK-NOT: rocdl.cvt.pkrtz
// CHECK: gpu.return
func.func @to_nearest(%x: memref<64x64xf32>, %y: memref<64x64xf16>) attributes {tessel.workgroup_size = 128 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<64x64xf32> -> tensor<64x64xf32, #acc>
  %h = arith.truncf %t : tensor<64x64xf32, #acc> to tensor<64x64xf16, #acc>
  tessel.store %h, %y[%c0, %c0] : tensor<64x64xf16, #acc>, memref<64x64xf16>
  return
}

// -----

// A lone value pairs with poison.
// CHECK-LABEL: gpu.func @scalar
// CHECK: %[[POISON:.*]] = llvm.mlir.poison : f32
// CHECK: %[[PAIR:.*]] = rocdl.cvt.pkrtz %{{.*}}, %[[POISON]] : vector<2xf16>
// CHECK: vector.extract %[[PAIR]][0] : f16 from vector<2xf16>
func.func @scalar(%x: memref<4xf32>, %y: memref<4xf16>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %h = arith.truncf %v toward_zero : f32 to f16
  memref.store %h, %y[%c0] : memref<4xf16>
  return
}

// -----

// An add marked tessel.paired_add (attention's bf16 rounding, whose sums
// never carry out of 32 bits) adds the lane's registers two at a time as
// 64-bit integers (v_lshl_add_u64 on gfx942): 32 values a lane are 16 adds
// of i64, the addend's pairs folded to one constant. Without the mark the
// add stays one of i32.
#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 2]>
// CHECK-LABEL: gpu.func @paired_add
// CHECK: %[[ADDEND:.*]] = arith.constant dense<140737488388096> : vector<16xi64>
// CHECK: %[[PAIRS:.*]] = vector.bitcast %{{.*}} : vector<32xi32> to vector<16xi64>
// CHECK: %[[SUM:.*]] = arith.addi %[[PAIRS]], %[[ADDEND]] : vector<16xi64>
// CHECK: vector.bitcast %[[SUM]] : vector<16xi64> to vector<32xi32>
// CHECK: arith.addi %{{.*}}, %{{.*}} : vector<32xi32>
// CHECK: gpu.return
func.func @paired_add(%x: memref<64x64xi32>, %y: memref<64x64xi32>, %z: memref<64x64xi32>) attributes {tessel.workgroup_size = 128 : i64} {
  %c0 = arith.constant 0 : index
  %half = arith.constant dense<32768> : tensor<64x64xi32, #acc>
  %t = tessel.load %x[%c0, %c0] : memref<64x64xi32> -> tensor<64x64xi32, #acc>
  %paired = arith.addi %t, %half {tessel.paired_add} : tensor<64x64xi32, #acc>
  tessel.store %paired, %y[%c0, %c0] : tensor<64x64xi32, #acc>, memref<64x64xi32>
  %plain = arith.addi %t, %half : tensor<64x64xi32, #acc>
  tessel.store %plain, %z[%c0, %c0] : tensor<64x64xi32, #acc>, memref<64x64xi32>
  return
}
