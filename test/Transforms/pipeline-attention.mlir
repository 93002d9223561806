// Attention's key loops prefetch the next block into registers and keep one
// LDS slot (tessel-pipeline on a config tile of [M, N] with stages = 2): the
// first block is loaded, masked, in front of the loop; inside, the carried
// tiles are stored to the slot between the two barriers, and the next
// block's loads follow the first product, clamped to the loop's last block
// (the last iteration reloads its own).
// Only the loop over whole blocks does this; the masked loop over the causal
// diagonal loads its own blocks.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s
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
// The masked loop (the causal diagonal) loads its own blocks.
// CHECK:      scf.for %[[KBM:.*]] = %[[UB]] to %{{.*}} step %{{.*}} iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}) ->
// CHECK-NEXT:   tessel.load %arg1[%{{.*}}, %{{.*}}, %[[KBM]], %{{.*}}] : memref

// STAGES1-LABEL: func.func @attention
// STAGES1:      scf.for %[[KB:.*]] = {{.*}} iter_args(%{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}, %{{[^,]*}} = %{{[^,]*}}) ->
// STAGES1-NEXT:   arith.constant
// STAGES1-NEXT:   tessel.load %arg1[%{{.*}}, %{{.*}}, %[[KB]], %{{.*}}] in_bounds
