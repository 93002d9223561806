// Head-dim chunks read one product ahead (kLdsReadAheadAttrName): where an
// MFMA kernel computes its head dim in more than four chunks and the O^T
// accumulators take at most 96 registers a lane, tessel-tile marks the
// chunks' loads, and tessel-promote-lds reads each chunk in front of the
// product before its own. Head dim 192 on gfx942 (six chunks of 32): the
// first product's chunk k + 1 is read before its chunk k's product, the
// second product's first chunk (V^T) before the first product's last one,
// in flight through the softmax.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 192 -t bf16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=MARKED
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 192 -t bf16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 | FileCheck %s --check-prefix=AHEAD
// Three chunks (head dim 96) and 112 accumulator registers (224) are read
// right before their products.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 96 -t f16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=AT-USE
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 224 -t f16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=AT-USE
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 224 -t f16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 | FileCheck %s --check-prefix=READ-AT-USE

// MARKED-LABEL: func.func @attention
// MARKED: scf.for
// MARKED-COUNT-6: tessel.load %arg1{{.*}} {tessel.lds_read_ahead, tessel.lds_read_at_use, tessel.scalar_origin} : {{.*}} -> tensor<32x32xbf16
// MARKED-COUNT-6: tessel.load %transpose{{.*}} {tessel.lds_read_ahead, tessel.lds_read_at_use, tessel.scalar_origin} : {{.*}} -> tensor<32x32xbf16

// AHEAD-LABEL: func.func @attention
// AHEAD: scf.for
// AHEAD-COUNT-12: tessel.local_store
// AHEAD-NEXT: gpu.barrier
// AHEAD-NEXT: %[[K0:.*]] = tessel.local_load
// AHEAD-NEXT: %[[K1:.*]] = tessel.local_load
// AHEAD-NEXT: %[[S0:.*]] = tessel.dot %[[K0]], %{{.*}}, %{{.*}} :
// AHEAD-NEXT: %[[K2:.*]] = tessel.local_load
// AHEAD-NEXT: %[[S1:.*]] = tessel.dot %[[K1]], %{{.*}}, %[[S0]] :
// AHEAD-NEXT: %[[K3:.*]] = tessel.local_load
// AHEAD-NEXT: tessel.dot %[[K2]], %{{.*}}, %[[S1]] :
// AHEAD: %[[V0:.*]] = tessel.local_load {{.*}} -> tensor<32x32xbf16, #mma_operand2>
// AHEAD-NEXT: %[[S:.*]] = tessel.dot {{.*}} -> tensor<32x128xf32, #mma>
// AHEAD: tessel.reduce "max" %[[S]]
// AHEAD: %[[V1:.*]] = tessel.local_load {{.*}} -> tensor<32x32xbf16, #mma_operand2>
// AHEAD-NEXT: tessel.dot %[[V0]], %{{.*}} -> tensor<32x128xf32, #mma>
// AHEAD-NEXT: tessel.convert_layout
// AHEAD-NEXT: tessel.local_load
// AHEAD-NEXT: tessel.dot %[[V1]], %{{.*}} -> tensor<32x128xf32, #mma>

// AT-USE-LABEL: func.func @attention
// AT-USE: scf.for
// AT-USE-NOT: tessel.lds_read_ahead
// AT-USE: tessel.load %arg1{{.*}} {tessel.lds_read_at_use, tessel.scalar_origin}
// AT-USE-NOT: tessel.lds_read_ahead
// AT-USE: return

// READ-AT-USE-LABEL: func.func @attention
// READ-AT-USE: scf.for
// READ-AT-USE-COUNT-14: tessel.local_store
// READ-AT-USE-NEXT: gpu.barrier
// READ-AT-USE-NEXT: %[[K0:.*]] = tessel.local_load
// READ-AT-USE-NEXT: %[[S0:.*]] = tessel.dot %[[K0]], %{{.*}}, %{{.*}} :
// READ-AT-USE-NEXT: %[[K1:.*]] = tessel.local_load
// READ-AT-USE-NEXT: tessel.dot %[[K1]], %{{.*}}, %[[S0]] :
