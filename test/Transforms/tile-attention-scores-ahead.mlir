// With scores_ahead the loop over whole key blocks carries the next
// block's S^T: the first block's is computed in front of the loop (its K
// loaded with masks: the loop may run no iteration); iteration n0 loads K
// of block min(n0 + N, last block) and V^T of block n0, computes the next
// S^T, then the softmax of the carried one and the second product. On a
// sequence of whole key blocks the causal diagonal's masked loop after it
// takes the same form and continues its scores ahead: the first loop's
// last block is the diagonal's last (its lookahead computes the
// diagonal's first S^T), and the second loop masks each S^T before its
// maximum. A tail block (a sequence of 250 keys) keeps a masked loop that
// computes its own blocks.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 250 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=TAIL
// 8-bit P (fp8 attention) keeps the exact update: weights up to 2^8 would
// not fit its format.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 128 -t f8E4M3FNUZ --descale --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x16_fp8_fp8", scores_ahead>' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=EXACT
// Without it, each iteration computes its own block's S^T.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=OWN

// CHECK-LABEL: func.func @attention
// CHECK: %[[QT:.*]] = tessel.load %{{.*}} : memref<1x2x64x128xf16, {{.*}}> -> tensor<64x128xf16
// The lookahead's last block: lb + ((end - lb - 1) / N) * N, with end the
// masked loop's.
// CHECK: %[[SPAN:.*]] = arith.subi %[[END:[0-9]+]], %[[LB:c0[_0-9]*]] : index
// CHECK-NEXT: %[[SPAN1:.*]] = arith.subi %[[SPAN]], %c1{{.*}} : index
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.divui %[[SPAN1]], %c64{{.*}} : index
// CHECK-NEXT: %[[OFFSET:.*]] = arith.muli %[[BLOCKS]], %c64{{.*}} : index
// CHECK-NEXT: %[[LAST:.*]] = arith.addi %[[LB]], %[[OFFSET]] : index
// CHECK: %[[K0:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[LB]], %{{.*}}] : memref
// CHECK: %[[S0:.*]] = tessel.dot %[[K0]], %[[QT]]
// f16 P: the loop also carries each block's maximum (log2 units) for the
// lazy rescale, computed with its S^T.
// CHECK: %[[MAX0:.*]] = tessel.reduce "max" %[[S0]] along 0
// CHECK: %[[MAX0S:.*]] = arith.mulf %[[MAX0]], %{{.*}}
// CHECK: %[[LOOP:.*]]:5 = scf.for %[[N0:.*]] = %[[LB]] to %[[UB:[0-9]+]] step %{{.*}} iter_args(%[[M:[^ ]*]] = %{{[^,]*}}, %[[L:[^ ]*]] = %{{[^,]*}}, %[[O:[^ ]*]] = %{{[^,]*}}, %[[S:[^ ]*]] = %[[S0]], %[[BMAX:[^ ]*]] = %[[MAX0S]])
// The rescale only where some query of the wave saw its maximum grow by
// more than 8 (log2 units), behind an unlikely branch.
// CHECK:   %[[EIGHT:.*]] = arith.constant dense<8.000000e+00>
// CHECK-NEXT: %[[LIMIT:.*]] = arith.addf %[[M]], %[[EIGHT]]
// CHECK-NEXT: %[[GROWN:.*]] = arith.cmpf ogt, %[[BMAX]], %[[LIMIT]]
// CHECK-NEXT: %[[ANY:.*]] = tessel.wave_any %[[GROWN]]
// CHECK-NEXT: %[[R:.*]]:3 = scf.if %[[ANY]]
// CHECK-NEXT: %[[MNEW:.*]] = arith.maxnumf %[[M]], %[[BMAX]]
// CHECK:     %[[ALPHA:.*]] = math.exp2
// CHECK:     %[[ALPHAL:.*]] = tessel.broadcast %[[ALPHA]] : tensor<1x128xf32, #linear> -> tensor<2x128xf32
// CHECK-NEXT: arith.mulf %[[L]], %[[ALPHAL]]
// CHECK:     %[[ALPHAS:.*]] = tessel.broadcast %[[ALPHA]]
// CHECK:     arith.mulf %[[O]], %[[ALPHAS]]
// CHECK:   } else {
// CHECK-NEXT: scf.yield %[[M]], %[[L]], %[[O]]
// CHECK-NEXT: } {tessel.unlikely}
// CHECK:   %[[AHEAD:.*]] = arith.addi %[[N0]], %c64{{.*}} : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.minui %[[AHEAD]], %[[LAST]] : index
// CHECK:   %[[KN:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[NEXT]], %{{.*}}] in_bounds
// CHECK:   %[[VT:.*]] = tessel.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[N0]]] in_bounds
// CHECK:   %[[SN:.*]] = tessel.dot %[[KN]], %[[QT]]
// The weights against the (possibly stale) running maximum; no other
// multiply of O.
// CHECK-NOT: arith.maxnumf
// CHECK:   arith.cmpf oeq, %[[R]]#0
// CHECK:   %[[P:.*]] = math.exp2 %{{.*}} : tensor<64x128xf32, #mma>
// CHECK-NOT: arith.mulf %[[R]]#2
// CHECK:   %[[ACC:.*]] = tessel.dot %[[VT]], %{{.*}}, %[[R]]#2
// CHECK-NEXT: %[[MAXN:.*]] = tessel.reduce "max" %[[SN]] along 0
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[MAXNS:.*]] = arith.mulf %[[MAXN]]
// CHECK-NEXT: scf.yield %[[R]]#0, %{{.*}}, %[[ACC]], %[[SN]], %[[MAXNS]] :
// The diagonal's first S^T, masked: key offset < query offset + shift.
// CHECK: %[[VISIBLE0:.*]] = arith.cmpi slt
// CHECK: %[[FIRST:.*]] = arith.select %[[VISIBLE0]], %[[LOOP]]#3, %{{.*}}
// CHECK-NEXT: %[[FMAX:.*]] = tessel.reduce "max" %[[FIRST]] along 0
// CHECK-NEXT: arith.constant
// CHECK-NEXT: %[[FMAXS:.*]] = arith.mulf %[[FMAX]]
// CHECK: scf.for %[[NM:.*]] = %[[UB]] to %[[END]] step %{{.*}} iter_args(%{{.*}} = %[[LOOP]]#0, %{{.*}} = %[[LOOP]]#1, %{{.*}} = %[[LOOP]]#2, %{{.*}} = %[[FIRST]], %{{.*}} = %[[FMAXS]])
// CHECK:   tessel.wave_any
// CHECK:   %[[KM:.*]] = tessel.load %arg1[%{{.*}}] in_bounds
// CHECK:   %[[SM:.*]] = tessel.dot %[[KM]], %[[QT]]
// CHECK:   %[[VISIBLE:.*]] = arith.cmpi slt
// CHECK:   %[[MASKED:.*]] = arith.select %[[VISIBLE]], %[[SM]], %{{.*}}
// CHECK-NEXT: tessel.reduce "max" %[[MASKED]] along 0

// TAIL-LABEL: func.func @attention
// TAIL: %[[LOOP:.*]]:5 = scf.for
// TAIL: scf.for %[[NM:.*]] = %{{.*}} iter_args(%{{[^,]*}} = %[[LOOP]]#0, %{{[^,]*}} = %[[LOOP]]#1, %{{[^,]*}} = %[[LOOP]]#2) ->
// TAIL:   %[[KM:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[NM]], %{{.*}}] : memref
// TAIL:   tessel.dot %[[KM]]
// TAIL: } {tessel.own_loads}

// OWN-LABEL: func.func @attention
// OWN: scf.for %[[N0:.*]] = %{{.*}} iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}) ->
// OWN:   %[[K:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[N0]], %{{.*}}] in_bounds
// OWN:   %[[S:.*]] = tessel.dot %[[K]]
// OWN:   tessel.reduce "max" %[[S]] along 0

// EXACT-LABEL: func.func @attention
// EXACT-NOT: tessel.wave_any
// EXACT: scf.for
// EXACT: arith.maxnumf
// EXACT: tessel.dot
