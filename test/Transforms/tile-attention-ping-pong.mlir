// The ping-pong key loop (ping_pong): the upper half of the waves waits at
// a barrier in front of the loop over whole blocks (after the first
// block's S^T, computed in front of it), so it runs a phase behind the
// lower half, which waits at one after the loop. Each iteration is a
// softmax phase (the lazy rescale, whose test compares the carried block's
// scores with one limit per query and whose branch alone takes the block's
// maximum, then the block's weights and their sum), a barrier that opens
// the matrix phase (the next block's K, clamped to the last block in 32
// bits, this block's V^T, the next S^T and the second product) and a
// barrier. The causal diagonal's masked loop after it takes the same
// phases, between its own pair of stagger barriers: it starts from the
// first loop's last S^T, masked, and masks each next S^T in its matrix
// phase (under the second product; at head dim 64, below, only in the
// waves that need it). (Head dim 128: at 64 the loop takes
// the weights first, below.)
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 128 -t f16 --causal --config='#tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s

// CHECK-LABEL: func.func @attention
// CHECK: %[[S0:.*]] = tessel.dot
// CHECK-NOT: {{scf.for|tessel.reduce}}
// CHECK: tessel.phase_barrier half 1
// CHECK: %[[LOOP:.*]]:4 = scf.for %[[N0:[^ ]*]] = {{.*}} iter_args(%[[M:[^ ]*]] = %{{[^,]*}}, %[[L:[^ ]*]] = %{{[^,]*}}, %[[O:[^ ]*]] = %{{[^,]*}}, %[[S:[^ ]*]] = %[[S0]])
// CHECK-NOT: tessel.phase_barrier
// CHECK: %[[GROWN:.*]] = arith.addf %[[M]], %{{.*}} : tensor<1x256xf32
// CHECK-NEXT: arith.constant dense<7.84206533>
// CHECK-NEXT: %[[LIMIT:.*]] = arith.mulf %[[GROWN]], %{{.*}} : tensor<1x256xf32
// CHECK-NEXT: %[[LIMITS:.*]] = tessel.broadcast %[[LIMIT]]
// CHECK-NEXT: %[[ABOVE:.*]] = arith.cmpf ogt, %[[S]], %[[LIMITS]]
// CHECK-NEXT: %[[ANY:.*]] = tessel.wave_any %[[ABOVE]]
// CHECK-NEXT: %[[R:.*]]:3 = scf.if %[[ANY]]
// CHECK-NEXT: tessel.reduce "max" %[[S]] along 0
// CHECK-NOT: {{tessel.phase_barrier|tessel.dot|tessel.load}}
// CHECK: %[[P:.*]] = math.exp2 %{{.*}} fastmath<afn> : tensor<32x256xf32
// CHECK-NOT: {{tessel.phase_barrier|tessel.dot|tessel.load}}
// CHECK: %[[PLOW:.*]] = arith.truncf %[[P]]
// CHECK-NOT: {{tessel.phase_barrier|tessel.dot|tessel.load}}
// CHECK: %[[SUM:.*]] = tessel.reduce "add" %{{.*}} along 0 within_lanes
// CHECK-NEXT: %[[LNEW:.*]] = arith.addf %[[R]]#1, %[[SUM]] : tensor<2x256xf32
// CHECK-NEXT: tessel.phase_barrier matrix
// CHECK-NOT: tessel.phase_barrier
// CHECK: %[[AHEAD:.*]] = arith.addi %[[N0]], %c32
// CHECK: arith.index_castui %[[AHEAD]] : index to i32
// CHECK: %[[NEXT32:.*]] = arith.minui %{{.*}} : i32
// CHECK-NEXT: %[[NEXT:.*]] = arith.index_castui %[[NEXT32]] : i32 to index
// CHECK: %[[K:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[NEXT]], %{{.*}}] in_bounds
// CHECK: %[[VT:.*]] = tessel.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[N0]]] in_bounds
// CHECK: %[[SNEXT:.*]] = tessel.dot %[[K]]
// CHECK-NEXT: %[[ONEW:.*]] = tessel.dot %[[VT]], %[[PLOW]], %[[R]]#2
// CHECK-NEXT: tessel.phase_barrier
// CHECK-NEXT: scf.yield %[[R]]#0, %[[LNEW]], %[[ONEW]], %[[SNEXT]] :
// CHECK-NEXT: }
// CHECK-NEXT: tessel.phase_barrier half 0
// CHECK: %[[FIRST:.*]] = arith.select %{{.*}}, %[[LOOP]]#3, %{{.*}}
// CHECK-NOT: tessel.reduce
// CHECK: tessel.phase_barrier half 1
// CHECK: scf.for %{{.*}} iter_args(%{{[^,]*}} = %[[LOOP]]#0, %{{[^,]*}} = %[[LOOP]]#1, %{{[^,]*}} = %[[LOOP]]#2, %{{[^,]*}} = %[[FIRST]])
// CHECK: tessel.phase_barrier matrix
// CHECK: %[[SM:.*]] = tessel.dot
// CHECK: %[[MASKED:.*]] = arith.select %{{.*}}, %[[SM]], %{{.*}}
// CHECK-NEXT: tessel.dot
// CHECK-NEXT: tessel.phase_barrier
// CHECK-NEXT: scf.yield {{.*}}, %[[MASKED]] :
// CHECK: tessel.phase_barrier half 0
// CHECK-NOT: tessel.phase_barrier
// The half-waves' parts of l added once, after the loops.
// CHECK: tessel.reduce "add" %{{.*}} along 0 : tensor<2x256xf32, #{{.*}}> -> tensor<1x256xf32, #linear>
// CHECK-NOT: tessel.phase_barrier
// CHECK: return

// At head dim 64 the loop takes the weights first (gfx950 and gfx942): it carries no block maximum; its softmax phase computes
// the block's weights against the running maximum and their sums within
// lanes (l is kept as the two half-waves' parts, 2 x 256), and the
// rescale's branch tests those sums (more than 2^15) or an empty running
// maximum; only the branch takes the block's maximum and computes the
// weights again. It yields m, l, O, the rounded weights and their sums.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --config='#tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x16_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx950 | FileCheck %s --check-prefix=WEIGHTS
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --causal --config='#tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefixes=WEIGHTS,MASKS

// WEIGHTS-LABEL: func.func @attention
// WEIGHTS: tessel.phase_barrier half 1
// WEIGHTS: scf.for %{{.*}} iter_args(%[[M:[^ ]*]] = %{{[^,]*}}, %[[L:[^ ]*]] = %{{[^,]*}}, %[[O:[^ ]*]] = %{{[^,]*}}, %[[S:[^ ]*]] = %{{[^)]*}}) -> (tensor<1x256xf32, #linear>, tensor<2x256xf32, #[[SUMS:linear[0-9]*]]>, tensor<64x256xf32, #mma>, tensor<64x256xf32, #mma>)
// WEIGHTS-NOT: tessel.reduce "max"
// WEIGHTS: %[[P:.*]] = math.exp2 %{{.*}} fastmath<afn> : tensor<64x256xf32, #mma>
// WEIGHTS: %[[PLOW:.*]] = arith.truncf %[[P]]
// WEIGHTS: %[[SUM:.*]] = tessel.reduce "add" %{{.*}} along 0 within_lanes : tensor<64x256xf32, #mma> -> tensor<2x256xf32, #[[SUMS]]>
// WEIGHTS: %[[LIMIT:.*]] = arith.constant dense<3.276800e+04>
// WEIGHTS: %[[BIG:.*]] = arith.cmpf ogt, %[[SUM]], %[[LIMIT]]
// WEIGHTS: %[[EMPTY1:.*]] = arith.cmpf oeq, %[[M]]
// WEIGHTS-NEXT: %[[EMPTY:.*]] = tessel.broadcast %[[EMPTY1]] : tensor<1x256xi1, #linear> -> tensor<2x256xi1, #[[SUMS]]>
// WEIGHTS: %[[EITHER:.*]] = arith.ori %[[BIG]], %[[EMPTY]]
// WEIGHTS: %[[ANY:.*]] = tessel.wave_any %[[EITHER]]
// WEIGHTS: %[[R:.*]]:5 = scf.if %[[ANY]]
// WEIGHTS-NEXT: tessel.reduce "max" %[[S]] along 0
// WEIGHTS: math.exp2 %{{.*}} fastmath<afn> : tensor<64x256xf32, #mma>
// WEIGHTS: scf.yield
// WEIGHTS-NEXT: } else {
// WEIGHTS-NEXT: scf.yield %[[M]], %[[L]], %[[O]], %[[PLOW]], %[[SUM]]
// WEIGHTS: %[[LNEW:.*]] = arith.addf %[[R]]#1, %[[R]]#4
// WEIGHTS-NEXT: tessel.phase_barrier matrix
// WEIGHTS-NOT: tessel.reduce "max"
// WEIGHTS: scf.yield %[[R]]#0, %[[LNEW]]
// The causal diagonal's loop (gfx942's RUN) masks each next S^T after the
// second product, behind a wave-uniform branch taken where one of the
// wave's queries does not see the whole block (one compare per lane).
// MASKS: tessel.phase_barrier half 1
// MASKS: scf.for
// MASKS: tessel.phase_barrier matrix
// MASKS: %[[SM:.*]] = tessel.dot
// MASKS-NEXT: tessel.dot
// MASKS-NEXT: %[[QUERY:.*]] = tessel.iota 1 : tensor<1x256xi32
// MASKS: %[[LIMIT:.*]] = arith.addi %[[QUERY]], %{{.*}} : tensor<1x256xi32
// MASKS-NEXT: %[[PART:.*]] = arith.cmpi slt, %[[LIMIT]], %{{.*}} : tensor<1x256xi32
// MASKS-NEXT: %[[ANYPART:.*]] = tessel.wave_any %[[PART]]
// MASKS-NEXT: %[[MASKED:.*]] = scf.if %[[ANYPART]]
// MASKS: arith.select %{{.*}}, %[[SM]], %{{.*}}
// MASKS: } else {
// MASKS-NEXT: scf.yield %[[SM]]
// MASKS-NEXT: }
// MASKS-NEXT: tessel.phase_barrier
// MASKS-NEXT: scf.yield {{.*}}, %[[MASKED]] :
