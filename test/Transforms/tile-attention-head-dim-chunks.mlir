// A padded head dim computes in chunks of 32 head dims on the MFMA chips
// where that is fewer than the padding (getAttentionHeadDimChunk): S^T is
// the sum of one product per chunk (32 head dims of K against 32 of Q^T),
// O^T one accumulator per chunk. 96 of 128 with gfx942's 8-deep
// instructions, and with gfx950's 16-deep ones where the kernel has masked
// loops (causal, windows); gfx950 without masks and 112 (whose chunks
// would cover 128 anyway) keep the padded head dim whole.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 96 -t f16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=CHUNKS
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 96 -t f16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x16_f16">' | tessel-opt --tessel-tile=chip=gfx950 | FileCheck %s --check-prefix=CHUNKS
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 96 -t bf16 --window 64,0 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">' | tessel-opt --tessel-tile=chip=gfx950 | FileCheck %s --check-prefix=CHUNKS
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 96 -t f16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x16_f16">' | tessel-opt --tessel-tile=chip=gfx950 | FileCheck %s --check-prefix=WHOLE
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 112 -t f16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=WHOLE

// CHUNKS-LABEL: func.func @attention
// CHUNKS: scf.for
// CHUNKS: %[[S0:.*]] = tessel.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<32x32x{{.*}}>, tensor<32x128x{{.*}}> -> tensor<32x128xf32
// CHUNKS-NEXT: %[[S1:.*]] = tessel.dot %{{.*}}, %{{.*}}, %[[S0]] : tensor<32x32x
// CHUNKS-NEXT: tessel.dot %{{.*}}, %{{.*}}, %[[S1]] : tensor<32x32x
// CHUNKS-COUNT-3: tessel.dot %{{.*}} : tensor<32x32x{{.*}}>, tensor<32x128x{{.*}}, #mma> -> tensor<32x128xf32, #mma>
// CHUNKS: return

// WHOLE-LABEL: func.func @attention
// WHOLE: scf.for
// WHOLE: tessel.dot %{{.*}} : tensor<32x128x{{.*}}>, tensor<128x128x{{.*}}> -> tensor<32x128xf32
// WHOLE-NOT: tensor<32x32xf
// WHOLE: tessel.dot %{{.*}} : tensor<128x32x{{.*}}>, tensor<32x128x{{.*}}, #mma> -> tensor<128x128xf32, #mma>
