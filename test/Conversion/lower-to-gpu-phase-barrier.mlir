// RUN: tessel-opt %s --split-input-file --verify-diagnostics --tessel-lower-to-gpu="chip=gfx942" | FileCheck %s

// A phase barrier is a workgroup barrier marked tessel.phase_barrier (the
// emulator lets waves meet at two different ones) between two scheduling
// barriers; the one that opens a matrix phase has no release fence (the
// softmax phase before it writes no LDS, and its LDS reads need not
// complete before it: a bare s_barrier and an acquire fence) and raises
// the wave's priority after it. A barrier of one half: the wave's index (thread id / 64),
// read into a scalar register, compared with half the 8 waves; the upper
// half (1) waits where it is at least 4, the lower (0) where it is not.
// CHECK-LABEL: gpu.func @phases
// CHECK: %[[WAVE:.*]] = arith.divui %{{.*}}, %c64
// CHECK: %[[I32:.*]] = arith.index_cast %[[WAVE]] : index to i32
// CHECK-NEXT: %[[UNIFORM:.*]] = rocdl.readfirstlane %[[I32]] : i32
// CHECK-NEXT: %[[UPPER:.*]] = arith.cmpi uge, %[[UNIFORM]], %c4_i32
// CHECK-NEXT: scf.if %[[UPPER]] {
// CHECK-NEXT: rocdl.sched.barrier 0
// CHECK-NEXT: rocdl.barrier {tessel.phase_barrier}
// CHECK-NEXT: rocdl.sched.barrier 0
// CHECK-NEXT: }
// CHECK-NEXT: rocdl.sched.barrier 0
// CHECK-NEXT: rocdl.s.barrier {tessel.phase_barrier}
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
// CHECK-NEXT: rocdl.s.setprio 1
// CHECK-NEXT: rocdl.sched.barrier 0
// CHECK-NEXT: rocdl.sched.barrier 0
// CHECK-NEXT: rocdl.barrier {tessel.phase_barrier}
// CHECK-NEXT: rocdl.sched.barrier 0
// CHECK: %[[LOWER:.*]] = arith.xori %{{.*}}, %true
// CHECK-NEXT: scf.if %[[LOWER]] {
// CHECK-NEXT: rocdl.sched.barrier 0
// CHECK-NEXT: rocdl.barrier {tessel.phase_barrier}
module {
  func.func @phases() attributes {tessel.workgroup_size = 512 : i64, tessel.tile = array<i64: 256, 32>} {
    tessel.phase_barrier half 1
    tessel.phase_barrier matrix
    tessel.phase_barrier
    tessel.phase_barrier half 0
    return
  }
}

// -----

// Half of a workgroup of 3 waves is no set of waves.
module {
  func.func @odd() attributes {tessel.workgroup_size = 192 : i64, tessel.tile = array<i64: 96, 32>} {
    // expected-error @+1 {{half a workgroup's waves wait here: the workgroup needs an even number of waves, got 3}}
    tessel.phase_barrier half 0
    return
  }
}
