// With scores_ahead the loop over whole key blocks carries the next
// block's S^T: the first block's is computed in front of the loop (its K
// loaded with masks: the loop may run no iteration); iteration n0 loads K
// of block min(n0 + N, last block) and V^T of block n0, computes the next
// S^T, then the softmax of the carried one and the second product. The
// causal diagonal's masked loop after it computes its own blocks.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s
// Without it, each iteration computes its own block's S^T.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=OWN

// CHECK-LABEL: func.func @attention
// CHECK: %[[QT:.*]] = tessel.load %{{.*}} : memref<1x2x64x128xf16, {{.*}}> -> tensor<64x128xf16
// The loop's last block: lb + ((ub - lb - 1) / N) * N.
// CHECK: %[[SPAN:.*]] = arith.subi %[[UB:[0-9]+]], %[[LB:c0[_0-9]*]] : index
// CHECK-NEXT: %[[SPAN1:.*]] = arith.subi %[[SPAN]], %c1{{.*}} : index
// CHECK-NEXT: %[[BLOCKS:.*]] = arith.divui %[[SPAN1]], %c64{{.*}} : index
// CHECK-NEXT: %[[OFFSET:.*]] = arith.muli %[[BLOCKS]], %c64{{.*}} : index
// CHECK-NEXT: %[[LAST:.*]] = arith.addi %[[LB]], %[[OFFSET]] : index
// CHECK: %[[K0:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[LB]], %{{.*}}] : memref
// CHECK: %[[S0:.*]] = tessel.dot %[[K0]], %[[QT]]
// CHECK: %[[LOOP:.*]]:4 = scf.for %[[N0:.*]] = %[[LB]] to %[[UB]] step %{{.*}} iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %[[S:.*]] = %[[S0]])
// CHECK:   %[[AHEAD:.*]] = arith.addi %[[N0]], %c64{{.*}} : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.minui %[[AHEAD]], %[[LAST]] : index
// CHECK:   %[[KN:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[NEXT]], %{{.*}}] in_bounds
// CHECK:   %[[VT:.*]] = tessel.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[N0]]] in_bounds
// CHECK:   %[[SN:.*]] = tessel.dot %[[KN]], %[[QT]]
// CHECK-NEXT: tessel.reduce "max" %[[S]] along 0
// CHECK-NOT: tessel.dot %[[KN]]
// CHECK:   %[[ACC:.*]] = tessel.dot %[[VT]], %{{.*}}, %{{.*}}
// CHECK-NEXT: scf.yield %{{.*}}, %{{.*}}, %[[ACC]], %[[SN]] :
// CHECK: scf.for %[[NM:.*]] = %[[UB]] to %{{.*}} iter_args(%{{.*}} = %[[LOOP]]#0, %{{.*}} = %[[LOOP]]#1, %{{.*}} = %[[LOOP]]#2)
// CHECK:   %[[KM:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[NM]], %{{.*}}] : memref
// CHECK:   tessel.dot %[[KM]], %[[QT]]

// OWN-LABEL: func.func @attention
// OWN: scf.for %[[N0:.*]] = %{{.*}} iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}) ->
// OWN:   %[[K:.*]] = tessel.load %arg1[%{{.*}}, %{{.*}}, %[[N0]], %{{.*}}] in_bounds
// OWN:   %[[S:.*]] = tessel.dot %[[K]]
// OWN:   tessel.reduce "max" %[[S]] along 0
