// A ping-pong key loop (stages = 3, phase barriers in its body) is
// double-buffered without a barrier of its own: its phase barriers order
// the LDS accesses. The prologue stores the first block and loads the
// second in front of the upper half's barrier (whose waves then store
// before the lower half's first phase barrier meets it); the loop reads
// the block's slot after the barrier that opens the matrix phase, stores
// the next block into the other slot between the two products (behind a
// scheduling barrier), and loads the block after next, clamped in 32 bits,
// after the second product (behind another), before the barrier that
// closes the phase.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --config='#tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s
// stages = 4: three slots. The prologue stores the first two blocks (slots
// 0 and 1) and a barrier follows them (the lower half reads its first K
// before any barrier the upper half waits at); the slots rotate as two
// loop-carried indices (the read slot, the written one); the block's K is
// read at the top of the iteration, in the softmax phase (a scheduling
// barrier keeps it there), V^T after the barrier that opens the matrix
// phase; the carried tiles go to the written slot between the two
// products (behind a scheduling barrier), and the next iteration reads
// that slot two iterations later.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --config='#tessel.config<tile = [256, 64], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=SLOTS3
// Causal: the diagonal's phased loop continues the first loop's pipeline,
// and the halves stay a phase apart from one loop into the other (the
// lower half's barrier after the first loop and the upper half's in front
// of the second go).
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --causal --config='#tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=CAUSAL

// The slots rotate as two loop-carried indices (read, written), 0 and 1
// first. The loop is not unrolled: gfx942's 8-deep instructions.// gfx950 (16-deep instructions): the loop over whole blocks is unrolled by
// its three slots, each copy reading and writing constant slots (after
// canonicalization: the rotation returns to slots 0 and 2 every three
// steps). The blocks left over run in the rolled loop after it, which
// starts from the slots the unrolled one ends with (0 and 2 again).
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 128 -t f16 --dynamic seq-kv --config='#tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx950 --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline --canonicalize | FileCheck %s --check-prefix=UNROLL
// Two slots (stages = 3) on gfx950: unrolled by two; V^T is read with
// transposing reads, and the stores stay after the second product.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --dynamic seq-kv --config='#tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x16_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx950 --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline --canonicalize | FileCheck %s --check-prefix=UNROLL2

// CHECK-LABEL: func.func @attention
// CHECK-NOT: tessel.key_loop_unroll
// CHECK: gpu.barrier
// CHECK: tessel.local_store %{{.*}}, %[[K:[0-9]+]][%[[S0:c0[_0-9]*]]]
// CHECK-NEXT: tessel.local_store %{{.*}}, %[[V:[0-9]+]][%[[S0]]]
// CHECK-NOT: {{gpu.barrier|scf.for}}
// CHECK: tessel.phase_barrier half 1
// CHECK-NEXT: scf.for {{.*}}, %[[SLOT:[^ ]*]] = %[[S0]], %[[NEXT:[^ ]*]] = %c1{{[_0-9]*}}) ->
// CHECK-NOT: gpu.barrier
// CHECK: tessel.phase_barrier matrix
// CHECK-NOT: {{gpu.barrier|tessel.local_store}}
// CHECK: %[[KT:.*]] = tessel.local_load %[[K]][%[[SLOT]]]
// CHECK-NEXT: %[[VT:.*]] = tessel.local_load %[[V]][%[[SLOT]]]
// CHECK-NEXT: tessel.dot %[[KT]]
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NEXT: tessel.local_store %{{.*}}, %[[K]][%[[NEXT]]]
// CHECK-NEXT: tessel.local_store %{{.*}}, %[[V]][%[[NEXT]]]
// CHECK-NOT: {{gpu.barrier|tessel.local_store|tessel.load}}
// CHECK: tessel.dot %[[VT]]
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: {{gpu.barrier|tessel.local_store}}
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
// CAUSAL-NEXT: %[[FIRST:.*]]:8 = scf.for
// CAUSAL-NOT:  tessel.phase_barrier half
// CAUSAL:      scf.for %{{.*}} iter_args({{.*}}, %{{[^ ]*}} = %[[FIRST]]#4, %{{[^ ]*}} = %[[FIRST]]#5, %{{[^ ]*}} = %[[FIRST]]#6, %{{[^ ]*}} = %[[FIRST]]#7)
// CAUSAL-NOT:  tessel.phase_barrier half
// CAUSAL:      tessel.phase_barrier half 0
// CAUSAL-NOT:  tessel.phase_barrier half
// CAUSAL:      return

// SLOTS3-LABEL: func.func @attention
// SLOTS3-DAG:  %[[VBUF:.*]] = tessel.local_alloc {{.*}} : !tessel.lds<3 x[64, 64], f16, #swizzle>
// SLOTS3-DAG:  %[[KBUF:.*]] = tessel.local_alloc {{.*}} : !tessel.lds<3 x[64, 64], f16, #swizzle1>
// SLOTS3:      gpu.barrier
// SLOTS3:      tessel.local_store %{{.*}}, %[[KBUF]][%[[S0:c0[_0-9]*]]]
// SLOTS3:      tessel.local_store %{{.*}}, %[[KBUF]][%[[S1:c1[_0-9]*]]]
// SLOTS3:      gpu.barrier
// SLOTS3:      tessel.phase_barrier half 1
// SLOTS3-NEXT: scf.for {{.*}}, %[[READ:[^ ]*]] = %[[S0]], %[[WRITE:[^ ]*]] = %[[S2:c2[_0-9]*]]) ->
// SLOTS3-NEXT:   %[[AFTER:.*]] = arith.addi %[[READ]], %c1
// SLOTS3-NEXT:   %[[WRAPS:.*]] = arith.cmpi eq, %[[AFTER]], %c3
// SLOTS3-NEXT:   %[[ROTATED:.*]] = arith.select %[[WRAPS]], %[[S0]], %[[AFTER]] : index
// SLOTS3-NEXT:   %[[K:.*]] = tessel.local_load %[[KBUF]][%[[READ]]]
// SLOTS3-NEXT:   amdgpu.sched_barrier allow = <none>
// SLOTS3-NOT:    tessel.local_load
// SLOTS3:        tessel.phase_barrier matrix
// SLOTS3:        %[[VT:.*]] = tessel.local_load %[[VBUF]][%[[READ]]]
// SLOTS3-NEXT:   tessel.dot %[[K]]
// SLOTS3-NEXT:   amdgpu.sched_barrier allow = <none>
// SLOTS3-NEXT:   tessel.local_store %{{.*}}, %[[KBUF]][%[[WRITE]]]
// SLOTS3-NEXT:   tessel.local_store %{{.*}}, %[[VBUF]][%[[WRITE]]]
// SLOTS3:        tessel.dot %[[VT]]
// SLOTS3-NEXT:   tessel.phase_barrier
// SLOTS3:        scf.yield {{.*}}, %[[ROTATED]], %[[READ]] :

// UNROLL-LABEL: func.func @attention
// UNROLL-SAME:  tessel.key_loop_unroll = 3 : i64
// UNROLL-DAG:   %[[VBUF:.*]] = tessel.local_alloc {{.*}} : !tessel.lds<3 x[128, 32], f16, #swizzle>
// UNROLL-DAG:   %[[KBUF:.*]] = tessel.local_alloc {{.*}} : !tessel.lds<3 x[32, 128], f16, #swizzle1>
// UNROLL:       tessel.phase_barrier half 1
// UNROLL:       %[[MAIN:.*]]:6 = scf.for %{{.*}} = %c0 to %[[SPLIT:.*]] step %c96
// UNROLL-NEXT:    tessel.local_load %[[KBUF]][%c0]
// UNROLL:         tessel.phase_barrier matrix
// UNROLL:         tessel.local_load %[[VBUF]][%c0] transposed
// UNROLL:         tessel.local_store %{{.*}}, %[[KBUF]][%c2]
// UNROLL-NEXT:    tessel.local_store %{{.*}}, %[[VBUF]][%c2]
// UNROLL:         tessel.phase_barrier{{$}}
// UNROLL-NOT:     tessel.phase_barrier
// UNROLL:         tessel.local_load %[[KBUF]][%c1]
// UNROLL:         tessel.phase_barrier matrix
// UNROLL:         tessel.local_load %[[VBUF]][%c1] transposed
// UNROLL:         tessel.local_store %{{.*}}, %[[KBUF]][%c0]
// UNROLL-NEXT:    tessel.local_store %{{.*}}, %[[VBUF]][%c0]
// UNROLL:         tessel.phase_barrier{{$}}
// UNROLL-NOT:     tessel.phase_barrier
// UNROLL:         tessel.local_load %[[KBUF]][%c2]
// UNROLL:         tessel.phase_barrier matrix
// UNROLL:         tessel.local_load %[[VBUF]][%c2] transposed
// UNROLL:         tessel.local_store %{{.*}}, %[[KBUF]][%c1]
// UNROLL-NEXT:    tessel.local_store %{{.*}}, %[[VBUF]][%c1]
// UNROLL:         tessel.phase_barrier{{$}}
// UNROLL-NOT:     tessel.local_load
// UNROLL:         scf.yield
// UNROLL-NEXT:  }
// UNROLL-NEXT:  scf.for %{{.*}} = %[[SPLIT]] to %{{.*}} step %c32 iter_args(%{{.*}} = %[[MAIN]]#0, {{.*}}, %[[READ:[^ ]*]] = %c0, %[[WRITE:[^ ]*]] = %c2) ->
// UNROLL:         tessel.local_load %[[KBUF]][%[[READ]]]
// UNROLL:         tessel.local_store %{{.*}}, %[[KBUF]][%[[WRITE]]]
// UNROLL:       tessel.phase_barrier half 0

// UNROLL2-LABEL: func.func @attention
// UNROLL2-SAME:  tessel.key_loop_unroll = 2 : i64
// UNROLL2:       scf.for %{{.*}} step %c128
// UNROLL2:         tessel.phase_barrier matrix
// UNROLL2:         tessel.local_load %[[KBUF:[0-9]+]][%c0]
// UNROLL2:         %[[VT:.*]] = tessel.local_load %{{.*}}[%c0] transposed
// UNROLL2:         tessel.dot %[[VT]]
// UNROLL2-NEXT:    amdgpu.sched_barrier allow = <none>
// UNROLL2-NEXT:    tessel.local_store %{{.*}}, %[[KBUF]][%c1]
// UNROLL2:         tessel.phase_barrier matrix
// UNROLL2:         tessel.local_load %[[KBUF]][%c1]
// UNROLL2:         tessel.local_store %{{.*}}, %[[KBUF]][%c0]
// UNROLL2:       scf.for %{{.*}} step %c64 iter_args({{.*}}, %{{[^ ]*}} = %c0, %{{[^ ]*}} = %c1) ->
