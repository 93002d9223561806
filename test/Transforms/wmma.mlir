// The tile passes on the WMMA chips (wave32): tessel-tile takes the wave size
// and names the chip in the #tessel.mma layout, tessel-select-mfma gives WMMA
// operands exactly the instruction's elements per lane (16 on gfx11, whose
// half-waves hold copies; 8 on gfx12), tessel-promote-lds reads gfx11's
// operands where they are used, and tessel-lower-to-gpu emits amdgpu.wmma.

// RUN: tessel-gen matmul -m 64 -n 64 -k 64 -t f16 --config='#tessel.config<tile = [32, 32, 32], waves = [1, 2], stages = 2, instr = "v_wmma_f32_16x16x16_f16">' | tessel-opt --tessel-tile=chip=gfx1100 --tessel-select-mfma=chip=gfx1100 | FileCheck %s --check-prefix=GFX11
// GFX11: #blocked = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 4], waves = [2, 1], order = [1, 0]>
// GFX11: #mma = #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 2], chip = "gfx1100">
// GFX11: #mma_operand = #tessel.mma_operand<a, #mma, kWidth = 16>
// GFX11: #mma_operand1 = #tessel.mma_operand<b, #mma, kWidth = 16>
// GFX11-LABEL: func.func @matmul
// GFX11-SAME: tessel.workgroup_size = 64
// GFX11: tessel.dot {{.*}} : tensor<32x32xf16, #mma_operand>, tensor<32x32xf16, #mma_operand1> -> tensor<32x32xf32, #mma>

// RUN: tessel-gen matmul -m 64 -n 64 -k 64 -t bf16 --config='#tessel.config<tile = [32, 32, 32], waves = [1, 2], stages = 2, instr = "v_wmma_f32_16x16x16_bf16">' | tessel-opt --tessel-tile=chip=gfx1201 --tessel-select-mfma=chip=gfx1201 --tessel-promote-lds=chip=gfx1201 --tessel-lower-to-gpu=chip=gfx1201 | FileCheck %s --check-prefix=GFX12
// GFX12-LABEL: gpu.func @matmul
// GFX12: amdgpu.wmma 16x16x16 {{.*}} : vector<8xbf16>, vector<8xbf16>, vector<8xf32>
// GFX12-NOT: amdgpu.mfma

// gfx11 attention: V^T is read from LDS after the softmax, right before the
// second product, not with K^T after the barrier.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 128 -d 128 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx1100}),tessel-tile{chip=gfx1100},func.func(tessel-select-mfma{chip=gfx1100},tessel-promote-lds{chip=gfx1100}))' | FileCheck %s --check-prefix=READ
// READ: #tessel.config<tile = [128, 16], waves = [8, 1]
// READ: scf.for
// READ: gpu.barrier
// READ: gpu.barrier
// READ-NEXT: tessel.local_load
// READ-NEXT: tessel.dot
// READ: math.exp2
// READ: tessel.local_load
// READ-NEXT: tessel.dot

// A WMMA config tiled without a chip is an error (its layouts depend on it).
// RUN: tessel-gen matmul -m 64 -n 64 -k 64 -t f16 --config='#tessel.config<tile = [32, 32, 32], waves = [1, 2], stages = 2, instr = "v_wmma_f32_16x16x16_f16">' | not tessel-opt --tessel-tile 2>&1 | FileCheck %s --check-prefix=NOCHIP
// NOCHIP: error: 'tessel.matmul' op instruction v_wmma_f32_16x16x16_f16 is a WMMA instruction, whose layout depends on the chip: tile with a chip

// An attention key block is two instruction steps on a 32-row MFMA, one on
// a 16-row MFMA (16 keys for gfx942's 16x16x16, 32 for gfx950's 16x16x32)
// and on WMMA.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 64 --seq-kv 64 -d 64 -t f16 --config='#tessel.config<tile = [64, 16], waves = [2, 1], stages = 1, instr = "v_mfma_f32_16x16x32_f16">' | not tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}))' 2>&1 | FileCheck %s --check-prefix=KEYS
// KEYS: error: 'tessel.attention' op key block 16 must be a multiple of 32 (1 step(s) of v_mfma_f32_16x16x32_f16)
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 64 --seq-kv 64 -d 64 -t f16 --config='#tessel.config<tile = [64, 16], waves = [2, 1], stages = 1, instr = "v_mfma_f32_16x16x16_f16">' | tessel-run --chip gfx942 | FileCheck %s --check-prefix=MFMA16
// MFMA16: on gfx942 (emu){{.*}}: PASS
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 64 --seq-kv 64 -d 64 -t f16 --config='#tessel.config<tile = [64, 16], waves = [4, 1], stages = 1, instr = "v_wmma_f32_16x16x16_f16">' | tessel-run --chip gfx1100 | FileCheck %s --check-prefix=ONESTEP
// ONESTEP: on gfx1100 (emu){{.*}}: PASS

// Past head dim 128 a WMMA wave cannot hold Q, O and a key block's K and V:
// head dims go in chunks of 64. D = 192 for the scores takes three chunks
// (none for the padding to 256) and D = 128 for the values two: S^T sums a
// product per chunk of K and Q^T, O^T has one accumulator per chunk, each
// chunk stored to its own columns of O. Every chunk is read from LDS right
// before its product; on gfx11, whose half-waves hold copies of an operand,
// Q^T too: it is written to LDS once, before the loops, and read in them.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 64 --seq-kv 64 -d 192 --head-dim-v 128 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx1100}),tessel-tile{chip=gfx1100},func.func(tessel-select-mfma{chip=gfx1100},tessel-promote-lds{chip=gfx1100}))' | FileCheck %s --check-prefix=CHUNK
// CHUNK: #tessel.config<tile = [64, 16], waves = [4, 1]
// CHUNK: tessel.load %transpose[{{.*}}, %c0{{.*}}, {{.*}}] {tessel.lds_read_at_use} : {{.*}} -> tensor<64x64xf16
// CHUNK: tessel.load %transpose[{{.*}}, %c64{{.*}}, {{.*}}] {tessel.lds_read_at_use} : {{.*}} -> tensor<64x64xf16
// CHUNK: tessel.load %transpose[{{.*}}, %c128{{.*}}, {{.*}}] {tessel.lds_read_at_use} : {{.*}} -> tensor<64x64xf16
// CHUNK-NOT: %c192
// CHUNK: gpu.barrier
// CHUNK-COUNT-3: tessel.local_store {{.*}} : tensor<64x64xf16
// CHUNK-NEXT: gpu.barrier
// CHUNK: scf.for {{.*}} -> (tensor<1x64xf32, #linear>, tensor<2x64xf32, #linear1>, tensor<64x64xf32, #mma>, tensor<64x64xf32, #mma>)
// CHUNK-COUNT-3: tessel.load %arg1{{.*}} in_bounds {tessel.lds_read_at_use, tessel.scalar_origin} : memref<1x2x64x192xf16> -> tensor<16x64xf16
// CHUNK-COUNT-2: tessel.load %transpose{{.*}} in_bounds {tessel.lds_read_at_use, tessel.scalar_origin} : {{.*}} -> tensor<64x16xf16
// CHUNK: gpu.barrier
// CHUNK-COUNT-5: tessel.local_store
// CHUNK-NEXT: gpu.barrier
// CHUNK-NEXT: %[[Q0:.*]] = tessel.local_load
// CHUNK-NEXT: %[[K0:.*]] = tessel.local_load
// CHUNK-NEXT: %[[S0:.*]] = tessel.dot %[[K0]], %[[Q0]], %cst
// CHUNK-NEXT: %[[Q1:.*]] = tessel.local_load
// CHUNK-NEXT: %[[K1:.*]] = tessel.local_load
// CHUNK-NEXT: %[[S1:.*]] = tessel.dot %[[K1]], %[[Q1]], %[[S0]]
// CHUNK-NEXT: %[[Q2:.*]] = tessel.local_load
// CHUNK-NEXT: %[[K2:.*]] = tessel.local_load
// CHUNK-NEXT: tessel.dot %[[K2]], %[[Q2]], %[[S1]]
// CHUNK: math.exp2
// CHUNK: %[[V0:.*]] = tessel.local_load
// CHUNK-NEXT: %[[O0:.*]] = tessel.dot %[[V0]]
// CHUNK: %[[V1:.*]] = tessel.local_load
// CHUNK-NEXT: %[[O1:.*]] = tessel.dot %[[V1]]
// CHUNK-NEXT: scf.yield {{.*}}, %[[O0]], %[[O1]]
// CHUNK: tessel.store {{.*}}, %c0{{.*}}, {{.*}}] : tensor<64x64xf16, #mma>
// CHUNK: tessel.store {{.*}}, %c64{{.*}}, {{.*}}] : tensor<64x64xf16, #mma>

// On gfx12 Q^T stays in registers across the loops: loaded straight into
// its operand layout, never written to LDS.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 128 -d 256 -t bf16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx1201}),tessel-tile{chip=gfx1201},func.func(tessel-select-mfma{chip=gfx1201},tessel-promote-lds{chip=gfx1201}))' | FileCheck %s --check-prefix=CHUNK12
// CHUNK12: #tessel.config<tile = [128, 16], waves = [8, 1]
// CHUNK12-COUNT-4: tessel.load %transpose{{.*}} -> tensor<64x128xbf16, #mma_operand
// CHUNK12-NOT: tessel.local_store
// CHUNK12: scf.for
// CHUNK12-COUNT-8: tessel.load
// CHUNK12: gpu.barrier
// CHUNK12-COUNT-8: tessel.local_store
// CHUNK12-NEXT: gpu.barrier
// CHUNK12-NEXT: tessel.local_load
// CHUNK12-NEXT: tessel.dot

// A user's config for a chunked kernel is checked with the chunks: gfx11
// keeps Q^T in LDS next to K and V (128 queries of head dim 256 do not fit
// its 64 KiB), and 64-key blocks of head dim 256 overflow gfx12's VGPRs.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 128 -d 256 -t f16 --config='#tessel.config<tile = [128, 16], waves = [8, 1], stages = 1, instr = "v_wmma_f32_16x16x16_f16">' | not tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx1100}))' 2>&1 | FileCheck %s --check-prefix=BADCHUNK
// BADCHUNK: error: 'tessel.attention' op the config needs 81920 bytes of LDS, over the 65536 of gfx1100
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 64 --seq-kv 64 -d 256 -t f16 --config='#tessel.config<tile = [64, 64], waves = [4, 1], stages = 1, instr = "v_wmma_f32_16x16x16_f16">' | not tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx1201}))' 2>&1 | FileCheck %s --check-prefix=BADCHUNK12
// BADCHUNK12: error: 'tessel.attention' op head dim 256 needs about 384 VGPRs per lane with 64x64 blocks, over the 256 of gfx1201
