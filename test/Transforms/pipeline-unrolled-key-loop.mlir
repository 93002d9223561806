// A four-wave key loop with the scores ahead and K and V^T double-buffered
// (stages = 3) whose config says `unrolled` is unrolled by two after
// tessel-pipeline builds it: each copy keeps its slots from the induction
// variable ((iv - lb) / step mod 2, read and the other one written) and its
// own barrier, and the S^T computed ahead passes from the first copy to the
// second in registers. A rolled loop after the unrolled one runs the block
// left over (here with a dynamic key length), then the tail loop. The
// function is marked tessel.key_loop_unroll = 2 for the performance model.
// Without `unrolled` the loop stays rolled.
//
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --dynamic seq-kv --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, unrolled>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline --canonicalize | FileCheck %s
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --dynamic seq-kv --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline --canonicalize | FileCheck %s --check-prefix=ROLLED

// CHECK-LABEL: func.func @attention
// CHECK-SAME:  tessel.key_loop_unroll = 2 : i64
// The unrolled loop: two blocks a step of 128 keys.
// CHECK:       %[[MAIN:.*]]:7 = scf.for %{{.*}} step %c128
// CHECK:         %[[SLOT1:.*]] = arith.remui %{{.*}}, %c2 : index
// CHECK:         gpu.barrier
// CHECK:         tessel.local_load %[[K:[0-9]+]][%[[SLOT1]]]
// CHECK:         %[[S1:.*]] = tessel.dot
// CHECK:         tessel.local_store %{{.*}}, %[[K]][%{{.*}}]
// CHECK:         %[[SLOT2:.*]] = arith.remui %{{.*}}, %c2 : index
// CHECK:         gpu.barrier
// CHECK:         tessel.local_load %[[K]][%[[SLOT2]]]
// CHECK:         %[[S2:.*]] = tessel.dot
// CHECK:         tessel.local_store %{{.*}}, %[[K]][%{{.*}}]
// CHECK:         scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[S2]],
// The block left over, from the unrolled loop's results.
// CHECK:       scf.for %{{.*}} step %c64 iter_args(%{{.*}} = %[[MAIN]]#0,
// CHECK:         arith.remui %{{.*}}, %c2 : index
// CHECK:         gpu.barrier
// CHECK-NOT:     scf.for
// CHECK:         scf.yield

// ROLLED-LABEL: func.func @attention
// ROLLED-NOT:   tessel.key_loop_unroll
// ROLLED:       scf.for %{{.*}} step %c64
// ROLLED-NOT:   step %c128
