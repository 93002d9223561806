// RUN: tessel-opt %s --tessel-lower-to-gpu=chip=gfx942 | FileCheck %s

// The split-K arrival: every wave releases its partial stores at device
// scope and meets the others; one lane (wave 0, lane 0) adds one to the
// tile's counter and hands the old count to the workgroup through LDS; the
// last split acquires the others' stores and clears the counter for the
// next launch. The branch on the result holds tile code, lowered inside it.
// CHECK-LABEL: gpu.func @arrive
// CHECK-SAME: workgroup(%[[SLOT:.*]] : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK: %[[FIRST:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: llvm.fence syncscope("agent") release
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: %[[OLD:.*]] = memref.atomic_rmw addi %{{.*}}, %arg1[%{{.*}}, %{{.*}}] : (i32, memref<4x8xi32>) -> i32
// CHECK-NEXT: memref.store %[[OLD]], %[[SLOT]][%{{.*}}]
// CHECK: gpu.barrier
// CHECK-NEXT: %[[COUNT:.*]] = memref.load %[[SLOT]]
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[COUNT]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: llvm.fence syncscope("agent") acquire
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: memref.store %{{.*}}, %arg1[%{{.*}}, %{{.*}}] : memref<4x8xi32>
// CHECK: scf.if %[[LAST]] {
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%{{.*}}, %{{.*}}] : memref<32x32xf32>
#mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
module {
  func.func @arrive(%c: memref<32x32xf32>, %counters: memref<4x8xi32>) attributes {tessel.workgroup_size = 64 : i64, tessel.tile = array<i64: 32, 32>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %last = tessel.split_arrive %counters[%c0, %c1] splits = 4 : memref<4x8xi32>
    scf.if %last {
      %zero = arith.constant dense<1.000000e+00> : tensor<32x32xf32, #mma>
      tessel.store %zero, %c[%c0, %c0] in_bounds : tensor<32x32xf32, #mma>, memref<32x32xf32>
    }
    return
  }
}
