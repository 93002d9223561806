// Attention's key loops prefetch the next block into registers and keep one
// LDS slot (tessel-pipeline on a config tile of [M, N] with stages = 2): the
// first block is loaded, masked, in front of the loop; inside, the carried
// tiles are stored to the slot between the two barriers, and the next
// block's loads follow the first product, clamped to the loop's last block
// (the last iteration reloads its own).
// Only the loop over whole blocks does this; the masked loop over the causal
// diagonal loads its own blocks.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s
// With stages = 3, K and V^T are double-buffered in LDS as well.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=DOUBLE
// With scores_ahead the loop's K load is of the next block, min(n0 + N,
// last block): the prefetch clones that index computation at its step.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=SCORES
// With stages = 3 and scores_ahead, the causal diagonal's loop continues
// the first loop's pipeline (tessel.continues_key_loop).
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=CHAIN
// Without stages = 2 the loops load their own block.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=STAGES1

// CHECK-LABEL: func.func @attention
// The unmasked loop.
// The last iteration's start, lb + ((ub - lb - 1) / step) * step.
// CHECK:      %[[SPAN:.*]] = arith.subi %[[UB:[0-9]+]], %[[LB:c0[_0-9]*]] : index
// CHECK-NEXT: %[[SPAN1:.*]] = arith.subi %[[SPAN]], %c1{{.*}} : index
// CHECK-NEXT: %[[STEPS:.*]] = arith.divui %[[SPAN1]], %[[STEP:c64[_0-9]*]] : index
// CHECK-NEXT: %[[OFFSET:.*]] = arith.muli %[[STEPS]], %[[STEP]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.addi %[[LB]], %[[OFFSET]] : index
// CHECK-NEXT: %[[K0:.*]] = tessel.load %arg1[{{.*}}] : memref<1x2x256x64xf16> -> tensor<64x64xf16, #blocked>
// CHECK-NEXT: %[[V0:.*]] = tessel.load %{{.*}}[{{.*}}] : memref<1x2x64x256xf16, {{.*}}> -> tensor<64x64xf16, #blocked1>
// CHECK-NEXT: scf.for %[[KB:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args({{.*}}, %[[KC:.*]] = %[[K0]], %[[VC:.*]] = %[[V0]])
// CHECK-NEXT:   gpu.barrier
// CHECK-NEXT:   tessel.local_store %[[KC]]
// CHECK-NEXT:   tessel.local_store %[[VC]]
// CHECK-NEXT:   gpu.barrier
// CHECK-NEXT:   %[[KR:.*]] = tessel.local_load
// CHECK-NEXT:   tessel.local_load
// CHECK-NEXT:   tessel.dot %[[KR]]
// CHECK-NEXT:   %[[AHEAD:.*]] = arith.addi %[[KB]], %[[STEP]] : index
// CHECK-NEXT:   %[[CLAMPED:.*]] = arith.minui %[[AHEAD]], %[[LAST]] : index
// CHECK-NEXT:   %[[K1:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[CLAMPED]], %{{.*}}] in_bounds
// CHECK-NEXT:   %[[V1:.*]] = tessel.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[CLAMPED]]] in_bounds
// CHECK-NOT:    tessel.load
// CHECK:        scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[K1]], %[[V1]] :
// The masked loop (the causal diagonal) loads its own blocks (in bounds:
// the sequence is whole key blocks).
// CHECK:      scf.for %[[KBM:.*]] = %[[UB]] to %{{.*}} step %{{.*}} iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}) ->
// CHECK-NEXT:   tessel.load %arg1[%{{.*}}, %{{.*}}, %[[KBM]], %{{.*}}] in_bounds
// CHECK:      } {tessel.own_loads}

// STAGES1-LABEL: func.func @attention
// STAGES1:      scf.for %[[KB:.*]] = {{.*}} iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}) ->
// STAGES1-NEXT:   arith.constant
// STAGES1-NEXT:   tessel.load %arg1[%{{.*}}, %{{.*}}, %[[KB]], %{{.*}}] in_bounds

// Two slots per buffer. In front of the loop: a barrier (reads of the slots
// before it), the first block (masked) stored to slot 0, the second loaded
// (masked). In the loop: one barrier at the top; the block's operands read
// from slot k % 2; after the first product, the next block (carried) stored
// to the other slot and the block after next loaded, clamped to the last
// block. The accesses at the run-time slot share address registers.
// DOUBLE-LABEL: func.func @attention
// DOUBLE-DAG:  %[[VBUF:.*]] = tessel.local_alloc {{.*}} : !tessel.lds<2 x[64, 64], f16, #swizzle>
// DOUBLE-DAG:  %[[KBUF:.*]] = tessel.local_alloc {{.*}} : !tessel.lds<2 x[64, 64], f16, #swizzle1>
// DOUBLE:      %[[LAST:.*]] = arith.addi %[[LB:c0[_0-9]*]], %{{.*}} : index
// DOUBLE-NEXT: gpu.barrier
// DOUBLE-NEXT: %[[K0:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[LB]], %{{.*}}] : memref
// DOUBLE-NEXT: %[[V0:.*]] = tessel.load
// DOUBLE-NEXT: tessel.local_store %[[K0]], %[[KBUF]][%[[ZERO:.*]]] :
// DOUBLE-NEXT: tessel.local_store %[[V0]], %[[VBUF]][%[[ZERO]]] :
// DOUBLE-NEXT: %[[SECOND:.*]] = arith.addi %[[LB]], %[[STEP:c64[_0-9]*]] : index
// DOUBLE-NEXT: %[[K1:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[SECOND]], %{{.*}}] : memref
// DOUBLE-NEXT: %[[V1:.*]] = tessel.load
// DOUBLE-NEXT: scf.for %[[KB:.*]] = %[[LB]] to %[[UB:[0-9]+]] step %[[STEP]] iter_args({{.*}}, %[[KC:.*]] = %[[K1]], %[[VC:.*]] = %[[V1]])
// DOUBLE-NEXT:   %[[FROM:.*]] = arith.subi %[[KB]], %[[LB]] : index
// DOUBLE-NEXT:   %[[INDEX:.*]] = arith.divui %[[FROM]], %[[STEP]] : index
// DOUBLE-NEXT:   %[[SLOT:.*]] = arith.remui %[[INDEX]], %c2{{.*}} : index
// DOUBLE-NEXT:   %[[OTHER:.*]] = arith.subi %c1{{.*}}, %[[SLOT]] : index
// DOUBLE-NEXT:   gpu.barrier
// DOUBLE-NEXT:   %[[KR:.*]] = tessel.local_load %[[KBUF]][%[[SLOT]]] {tessel.lds_shared_addresses}
// DOUBLE-NEXT:   %[[VR:.*]] = tessel.local_load %[[VBUF]][%[[SLOT]]] {tessel.lds_shared_addresses}
// DOUBLE-NEXT:   tessel.dot %[[KR]]
// DOUBLE-NEXT:   tessel.local_store %[[KC]], %[[KBUF]][%[[OTHER]]] {tessel.lds_shared_addresses}
// DOUBLE-NEXT:   tessel.local_store %[[VC]], %[[VBUF]][%[[OTHER]]] {tessel.lds_shared_addresses}
// DOUBLE-NEXT:   %[[TWO:.*]] = arith.muli %[[STEP]], %c2{{.*}} : index
// DOUBLE-NEXT:   %[[AHEAD:.*]] = arith.addi %[[KB]], %[[TWO]] : index
// DOUBLE-NEXT:   %[[CLAMPED:.*]] = arith.minui %[[AHEAD]], %[[LAST]] : index
// DOUBLE-NEXT:   %[[K2:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[CLAMPED]], %{{.*}}] in_bounds
// DOUBLE-NEXT:   %[[V2:.*]] = tessel.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[CLAMPED]]] in_bounds
// DOUBLE-NOT:    gpu.barrier
// DOUBLE-NOT:    tessel.load
// DOUBLE:        tessel.dot %[[VR]]
// DOUBLE-NEXT:   scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[K2]], %[[V2]] :
// The masked loop (the causal diagonal) loads its own blocks into slot 0
// (in bounds: the sequence is whole key blocks).
// DOUBLE:      scf.for %[[KBM:.*]] = %[[UB]] to %{{.*}} step %{{.*}} iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}) ->
// DOUBLE-NEXT:   tessel.load %arg1[%{{.*}}, %{{.*}}, %[[KBM]], %{{.*}}] in_bounds
// DOUBLE:      } {tessel.own_loads}

// SCORES-LABEL: func.func @attention
// SCORES:      %[[MAIN:.*]]:7 = scf.for %[[KB:.*]] = %{{.*}} to %{{.*}} step %[[STEP:c64[_0-9]*]] iter_args(
// SCORES:        gpu.barrier
// SCORES:        tessel.dot
// SCORES-NEXT:   %[[AHEADSTEP:.*]] = arith.addi %[[KB]], %[[STEP]] : index
// SCORES-NEXT:   %[[CLAMPED:.*]] = arith.minui %[[AHEADSTEP]], %{{.*}} : index
// SCORES-NEXT:   %[[PLUS:.*]] = arith.addi %[[CLAMPED]], %c64{{.*}} : index
// SCORES-NEXT:   %[[KROW:.*]] = arith.minui %[[PLUS]], %{{.*}} : index
// SCORES-NEXT:   tessel.load %arg1[%{{.*}}, %{{.*}}, %[[KROW]], %{{.*}}] in_bounds
// SCORES-NEXT:   tessel.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[CLAMPED]]] in_bounds
// The masked loop over the causal diagonal of a sequence of whole key
// blocks continues the scores ahead: the unmasked loop's last S^T (of the
// diagonal's first block) is masked in front of it, and it prefetches its
// blocks as the unmasked loop does, masking each next block's S^T.
// SCORES:      %[[VISIBLE0:.*]] = arith.cmpi slt
// SCORES:      %[[FIRST:.*]] = arith.select %[[VISIBLE0]], %[[MAIN]]#3, %{{.*}}
// SCORES-NEXT: tessel.reduce "max" %[[FIRST]]
// SCORES:      scf.for %{{.*}} iter_args(%{{[^,]*}} = %[[MAIN]]#0, %{{[^,]*}} = %[[MAIN]]#1, %{{[^,]*}} = %[[MAIN]]#2, %{{[^,]*}} = %[[FIRST]],
// SCORES:        tessel.load %arg1[{{.*}}] in_bounds
// SCORES:        %[[S:.*]] = tessel.dot
// SCORES:        %[[VISIBLE:.*]] = arith.cmpi slt
// SCORES-NEXT:   %[[MASKED:.*]] = arith.select %[[VISIBLE]], %{{.*}}, %{{.*}}
// SCORES-NEXT:   tessel.reduce "max" %[[MASKED]]
// SCORES-NOT:  tessel.own_loads

// The two loops run as one pipeline: the first clamps its prefetches to
// the second's last block (the span is to the second's end, not its own),
// so its last iterations store and load the diagonal's first blocks; the
// second has no prologue (no barrier, store or load between the loops),
// takes the first's loaded tiles as its own, and counts its slots from the
// first loop's lower bound.
// CHAIN-LABEL: func.func @attention
// CHAIN:      %[[SPAN:.*]] = arith.subi %[[END:[0-9]+]], %[[LB:c0[_0-9]*]] : index
// CHAIN:      gpu.barrier
// CHAIN:      %[[FIRST:.*]]:7 = scf.for %{{.*}} = %[[LB]] to %[[UB:[0-9]+]] step
// CHAIN:        scf.yield {{.*}}, tensor<64x64xf16, #blocked1>
// CHAIN-NEXT: }
// CHAIN-NOT:  {{gpu.barrier|tessel.local_store|tessel.load}}
// CHAIN:      scf.for %{{.*}} = %[[UB]] to %[[END]] step %{{.*}} iter_args({{.*}}, %{{[^ ]*}} = %[[FIRST]]#5, %{{[^ ]*}} = %[[FIRST]]#6)
// CHAIN-NEXT:   arith.subi %{{.*}}, %[[LB]] : index
