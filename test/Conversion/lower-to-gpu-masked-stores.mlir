// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" --split-input-file | FileCheck %s
// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx950" --split-input-file | FileCheck %s --check-prefix=GFX950

// A masked store of a static-shape kernel argument goes through its buffer
// resource: a masked-off vector's row index is the memref's row count (past
// the end), where the hardware drops the store; no branch. Rounding to
// bf16 on gfx942 (no conversion instruction) is integer arithmetic, a NaN
// replaced by 0x7fc00000 first; gfx950 keeps arith.truncf
// (v_cvt_pk_bf16_f32).
#mma = #tessel.mma<"v_mfma_f32_32x32x8_bf16", waves = [1, 1]>
// CHECK-LABEL: gpu.func @static_shape
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X:.*]], %[[X]] : vector<16xf32>
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK: %[[QNAN:.*]] = arith.constant dense<2143289344> : vector<16xi32>
// CHECK: %[[KEPT:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[BITS]]
// CHECK: %[[SHIFTED:.*]] = arith.shrui %[[KEPT]], %{{.*}} : vector<16xi32>
// CHECK: %[[LOWEST:.*]] = arith.andi %[[SHIFTED]], %{{.*}} : vector<16xi32>
// CHECK: %[[PLUS:.*]] = arith.addi %[[KEPT]], %{{.*}} : vector<16xi32>
// CHECK: %[[ROUNDED:.*]] = arith.addi %[[PLUS]], %[[LOWEST]] : vector<16xi32>
// CHECK: %[[TOP:.*]] = arith.shrui %[[ROUNDED]], %{{.*}} : vector<16xi32>
// CHECK: %[[HALF:.*]] = arith.trunci %[[TOP]] : vector<16xi32> to vector<16xi16>
// CHECK: arith.bitcast %[[HALF]] : vector<16xi16> to vector<16xbf16>
// CHECK-NOT: scf.if
// CHECK: %[[ROW:.*]] = arith.select %{{.*}}, %{{.*}}, %c40 : index
// CHECK: %[[ROW32:.*]] = arith.index_cast %[[ROW]] : index to i32
// CHECK: amdgpu.raw_buffer_store %{{.*}} -> %{{.*}}[%[[ROW32]], %{{.*}}] : bf16 -> memref<40x36xbf16>, i32, i32
// CHECK-NOT: scf.if
// CHECK: gpu.return
// gfx950 converts in hardware, a pair of values a conversion
// (splitBf16Truncation: one v_cvt_pk_bf16_f32 each).
// GFX950-LABEL: gpu.func @static_shape
// GFX950-NOT: arith.cmpf
// GFX950-COUNT-8: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// GFX950-NOT: arith.truncf
// GFX950: amdgpu.raw_buffer_store
func.func @static_shape(%x: memref<40x36xf32>, %y: memref<40x36xbf16>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<40x36xf32> -> tensor<32x32xf32, #mma>
  %b = arith.truncf %t : tensor<32x32xf32, #mma> to tensor<32x32xbf16, #mma>
  tessel.store %b, %y[%c0, %c0] : tensor<32x32xbf16, #mma>, memref<40x36xbf16>
  return
}

// -----

// A memref of dynamic shape has no buffer resource here (the offsets are
// not bounded at compile time): each masked store is behind a branch.
#mma1 = #tessel.mma<"v_mfma_f32_32x32x8_bf16", waves = [1, 1]>
// CHECK-LABEL: gpu.func @dynamic_shape
// CHECK-NOT: amdgpu.raw_buffer_store
// CHECK: scf.if
// CHECK: memref.store %{{.*}} : memref<?x36xf32>
// CHECK-NOT: amdgpu.raw_buffer_store
// CHECK: gpu.return
func.func @dynamic_shape(%x: memref<40x36xf32>, %y: memref<?x36xf32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<40x36xf32> -> tensor<32x32xf32, #mma1>
  tessel.store %t, %y[%c0, %c0] : tensor<32x32xf32, #mma1>, memref<?x36xf32>
  return
}
