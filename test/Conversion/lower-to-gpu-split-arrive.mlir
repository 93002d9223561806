// RUN: tessel-opt %s --split-input-file --tessel-lower-to-gpu=chip=gfx942 | FileCheck %s

// The split-K arrival: every wave releases its partial stores at device
// scope and meets the others; one lane (wave 0, lane 0) adds one to the
// tile's counter and tells the workgroup through LDS whether it was the
// last (the old count equals splits - 1); the last split acquires the
// others' stores and clears the counter for the next launch. The count is
// a relaxed device-scope atomic (element [0, 1]: 4 bytes past the base),
// ordered by the fences around it. The branch on
// the result holds tile code, lowered inside it. A kernel without LDS of
// its own gets one word for the flag.
// CHECK-LABEL: gpu.func @arrive
// CHECK-SAME: workgroup(%[[SLOT:.*]] : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK: %[[FIRST:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
// CHECK: llvm.fence syncscope("agent") release
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK: memref.extract_strided_metadata %arg1 : memref<4x8xi32>
// CHECK-NEXT: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index
// CHECK-NEXT: %[[ADDRESS:.*]] = arith.addi %[[BASE]], %c4 : index
// CHECK-NEXT: %[[WIDE:.*]] = arith.index_cast %[[ADDRESS]] : index to i64
// CHECK-NEXT: %[[PTR:.*]] = llvm.inttoptr %[[WIDE]] : i64 to !llvm.ptr<1>
// CHECK-NEXT: %[[OLD:.*]] = llvm.atomicrmw add %[[PTR]], %c1_i32 syncscope("agent") monotonic : !llvm.ptr<1>, i32
// CHECK-NEXT: %[[IS_LAST:.*]] = arith.cmpi eq, %[[OLD]], %c3_i32 : i32
// CHECK-NEXT: %[[BIT:.*]] = arith.extui %[[IS_LAST]] : i1 to i32
// CHECK-NEXT: memref.store %[[BIT]], %[[SLOT]][%{{.*}}]
// CHECK: gpu.barrier
// CHECK-NEXT: %[[FLAG:.*]] = memref.load %[[SLOT]]
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi ne, %[[FLAG]], %c0_i32 : i32
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

// -----

// Stream-K's arrival: the number of pieces is an operand (the last one
// saw count - 1 before its own addition), and the flag borrows the first
// element of the kernel's LDS buffer (16-bit here: the bit pattern 1 as
// f16) instead of a word of its own.
// CHECK-LABEL: gpu.func @arrive_count
// CHECK-SAME: workgroup(%[[LDS:.*]] : memref<2048xf16, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref<1xi32
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = llvm.atomicrmw add %{{.*}} syncscope("agent") monotonic
// CHECK: %[[LESS:.*]] = arith.subi %arg2, %c1 : index
// CHECK-NEXT: %[[BEFORE:.*]] = arith.index_cast %[[LESS]] : index to i32
// CHECK-NEXT: %[[IS_LAST:.*]] = arith.cmpi eq, %[[OLD]], %[[BEFORE]] : i32
// CHECK-NEXT: %[[BIT:.*]] = arith.extui %[[IS_LAST]] : i1 to i16
// CHECK-NEXT: %[[HALF:.*]] = arith.bitcast %[[BIT]] : i16 to f16
// CHECK-NEXT: memref.store %[[HALF]], %[[LDS]][%c0]
// CHECK: gpu.barrier
// CHECK-NEXT: %[[FLAG:.*]] = memref.load %[[LDS]][%c0]
// CHECK-NEXT: %[[BITS:.*]] = arith.bitcast %[[FLAG]] : f16 to i16
// CHECK-NEXT: arith.cmpi ne, %[[BITS]], %c0_i16 : i16
!lds = !tessel.lds<1 x[32, 64], f16, #tessel.swizzle<vec = 1, perPhase = 1, maxPhase = 1>>
module {
  func.func @arrive_count(%c: memref<32x32xf32>, %counters: memref<4x8xi32>, %pieces: index) attributes {tessel.workgroup_size = 64 : i64, tessel.tile = array<i64: 32, 32>} {
    %buffer = tessel.local_alloc : !lds
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %last = tessel.split_arrive %counters[%c0, %c1] count %pieces : memref<4x8xi32>
    return
  }
}
