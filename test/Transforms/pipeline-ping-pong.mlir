// A ping-pong key loop (stages = 3, phase barriers in its body) is
// double-buffered without a barrier of its own: its phase barriers order
// the LDS accesses. The prologue stores the first block and loads the
// second in front of the upper half's barrier (whose waves then store
// before the lower half's first phase barrier meets it); the loop reads
// the block's slot after the barrier that opens the matrix phase, and
// stores the next block into the other slot (behind a scheduling barrier)
// and loads the block after next, clamped in 32 bits, after the second
// product, before the barrier that closes the phase.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --config='#tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s
// Causal: the diagonal's phased loop continues the first loop's pipeline,
// and the halves stay a phase apart from one loop into the other (the
// lower half's barrier after the first loop and the upper half's in front
// of the second go).
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --causal --config='#tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=CAUSAL

// CHECK-LABEL: func.func @attention
// CHECK: gpu.barrier
// CHECK: tessel.local_store %{{.*}}, %[[K:[0-9]+]][%c0{{[_0-9]*}}]
// CHECK-NEXT: tessel.local_store %{{.*}}, %[[V:[0-9]+]][%c0{{[_0-9]*}}]
// CHECK-NOT: {{gpu.barrier|scf.for}}
// CHECK: tessel.phase_barrier half 1
// CHECK-NEXT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: tessel.phase_barrier matrix
// CHECK-NOT: {{gpu.barrier|tessel.local_store}}
// CHECK: %[[KT:.*]] = tessel.local_load %[[K]][%[[SLOT:[0-9]+]]]
// CHECK-NEXT: %[[VT:.*]] = tessel.local_load %[[V]][%[[SLOT]]]
// CHECK-NEXT: tessel.dot %[[KT]]
// CHECK-NOT: {{gpu.barrier|tessel.local_store}}
// CHECK: tessel.dot %[[VT]]
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NEXT: tessel.local_store %{{.*}}, %[[K]][%[[NEXT:[0-9]+]]]
// CHECK-NEXT: tessel.local_store %{{.*}}, %[[V]][%[[NEXT]]]
// CHECK-NOT: gpu.barrier
// CHECK: arith.minui %{{.*}} : i32
// CHECK-NOT: gpu.barrier
// CHECK: tessel.load %arg1{{.*}} in_bounds
// CHECK-NEXT: tessel.load %{{.*}} in_bounds
// CHECK-NEXT: tessel.phase_barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: tessel.phase_barrier half 0

// CAUSAL-LABEL: func.func @attention
// CAUSAL:      tessel.phase_barrier half 1
// CAUSAL-NEXT: %[[FIRST:.*]]:7 = scf.for
// CAUSAL-NOT:  tessel.phase_barrier half
// CAUSAL:      scf.for %{{.*}} iter_args({{.*}}, %{{[^ ]*}} = %[[FIRST]]#5, %{{[^ ]*}} = %[[FIRST]]#6)
// CAUSAL-NOT:  tessel.phase_barrier half
// CAUSAL:      tessel.phase_barrier half 0
// CAUSAL-NOT:  tessel.phase_barrier half
// CAUSAL:      return
