// RUN: tessel-opt %s --tessel-to-rocdl="chip=gfx942" --tessel-lower-to-emulator="chip=gfx942" | FileCheck %s

// Every integer division or remainder whose divisor is not a constant that
// cannot fault branches to a call of the runtime's fault hook first: on a
// zero divisor and, when signed, on the smallest value divided by -1 (both
// undefined in LLVM; the host traps on them). The hook's first operand is
// the operation (0 sdiv, 1 udiv, 2 srem, 3 urem), bit 2 set for a zero
// divisor and the bit width from bit 8; its second the site of the division
// in the module's site table.
// CHECK-LABEL: module @divisions attributes
// CHECK-SAME: tessel.emu.sites = ["{{.*}}lower-division-guards.mlir:[[@LINE+62]]:10", "{{.*}}lower-division-guards.mlir:[[@LINE+66]]:10", "{{.*}}lower-division-guards.mlir:[[@LINE+67]]:10", "{{.*}}lower-division-guards.mlir:[[@LINE+71]]:11", "{{.*}}lower-division-guards.mlir:[[@LINE+76]]:11"]
// CHECK: llvm.func @__tessel_emu_division_fault(i32, i32)
// CHECK-LABEL: llvm.func @divide(

// i32 sdiv: zero or -2^31 / -1.
// CHECK: %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i32
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[BY_ZERO:.*]] = llvm.icmp "eq" %[[B]], %[[ZERO]] : i32
// CHECK-NEXT: %[[MINUS1:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[IS_MINUS1:.*]] = llvm.icmp "eq" %[[B]], %[[MINUS1]] : i32
// CHECK-NEXT: %[[MIN:.*]] = llvm.mlir.constant(-2147483648 : i32) : i32
// CHECK-NEXT: %[[IS_MIN:.*]] = llvm.icmp "eq" %[[A]], %[[MIN]] : i32
// CHECK-NEXT: %[[OVERFLOWS:.*]] = llvm.and %[[IS_MIN]], %[[IS_MINUS1]] : i1
// CHECK-NEXT: %[[FAULTS:.*]] = llvm.or %[[BY_ZERO]], %[[OVERFLOWS]] : i1
// CHECK-NEXT: %[[OVERFLOW_CODE:.*]] = llvm.mlir.constant(8192 : i32) : i32
// CHECK-NEXT: %[[ZERO_CODE:.*]] = llvm.mlir.constant(8196 : i32) : i32
// CHECK-NEXT: %[[WHAT:.*]] = llvm.select %[[BY_ZERO]], %[[ZERO_CODE]], %[[OVERFLOW_CODE]] : i1, i32
// CHECK-NEXT: llvm.cond_br %[[FAULTS]], ^[[FAULT:.*]], ^[[SAFE:.*]]
// CHECK: ^[[FAULT]]:
// CHECK-NEXT: %[[SITE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.call @__tessel_emu_division_fault(%[[WHAT]], %[[SITE]]) : (i32, i32) -> ()
// CHECK-NEXT: llvm.unreachable
// CHECK: ^[[SAFE]]:
// CHECK-NEXT: %[[Q:.*]] = llvm.sdiv %[[A]], %[[B]] : i32

// A constant divisor that is neither 0 nor -1 needs no guard.
// CHECK-NEXT: %[[R:.*]] = llvm.urem %[[Q]], %{{.*}} : i32

// i32 udiv: a zero divisor only (8193 = udiv | 32 << 8).
// CHECK: llvm.icmp "eq" %[[B]], %{{.*}} : i32
// CHECK-NOT: llvm.and
// CHECK: llvm.mlir.constant(8193 : i32)
// CHECK: llvm.cond_br
// CHECK: llvm.call @__tessel_emu_division_fault
// CHECK: llvm.udiv %[[R]], %[[B]] : i32

// A constant -1 may still overflow: guarded.
// CHECK: llvm.mlir.constant(-2147483648 : i32)
// CHECK: llvm.cond_br
// CHECK: llvm.call @__tessel_emu_division_fault
// CHECK: llvm.sdiv %{{.*}}, %{{.*}} : i32

// i64 srem (16386 = srem | 64 << 8).
// CHECK: llvm.mlir.constant(-9223372036854775808 : i64)
// CHECK: llvm.mlir.constant(16386 : i32)
// CHECK: llvm.call @__tessel_emu_division_fault
// CHECK: llvm.srem %{{.*}}, %{{.*}} : i64

// Vectors: any element faults.
// CHECK: %[[VEC_ZERO:.*]] = llvm.icmp "eq" %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK-NEXT: %[[BITS:.*]] = llvm.bitcast %[[VEC_ZERO]] : vector<4xi1> to i4
// CHECK: llvm.icmp "ne" %[[BITS]], %{{.*}} : i4
// CHECK: llvm.call @__tessel_emu_division_fault
// CHECK: llvm.sdiv %{{.*}}, %{{.*}} : vector<4xi32>
gpu.module @divisions {
  gpu.func @divide(%x: memref<64xi32>, %d: memref<64xi32>, %y: memref<64xi32>,
                   %w: memref<64xi64>, %vx: memref<256xi32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %a = memref.load %x[%tid] : memref<64xi32>
    %b = memref.load %d[%tid] : memref<64xi32>
    %q = arith.divsi %a, %b : i32
    %c7 = arith.constant 7 : i32
    %r = arith.remui %q, %c7 : i32
    %cm1 = arith.constant -1 : i32
    %u = arith.divui %r, %b : i32
    %n = arith.divsi %u, %cm1 : i32
    memref.store %n, %y[%tid] : memref<64xi32>
    %wa = memref.load %w[%tid] : memref<64xi64>
    %wb = arith.extsi %b : i32 to i64
    %wr = arith.remsi %wa, %wb : i64
    memref.store %wr, %w[%tid] : memref<64xi64>
    %c4 = arith.constant 4 : index
    %i = arith.muli %tid, %c4 : index
    %vec = vector.load %vx[%i] : memref<256xi32>, vector<4xi32>
    %vq = arith.divsi %vec, %vec : vector<4xi32>
    vector.store %vq, %vx[%i] : memref<256xi32>, vector<4xi32>
    gpu.return
  }
}
