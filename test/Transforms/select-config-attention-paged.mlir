// A paged cache's key blocks lie within one page (tessel-select-config):
// 16-key pages take the 16-row instruction, which drops scores_ahead (the
// rule chose it for the 32-row one); 32-key pages keep the instruction and
// the flag.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 --page-size 16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' | FileCheck %s --check-prefix=PAGE16
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 --page-size 32 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' | FileCheck %s --check-prefix=PAGE32
// A paged key loop keeps its own loads (tessel-pipeline does not touch
// it): bf16 at head dim 128, which double-buffers K and V without pages
// (stages = 3 in the four-wave form, the third run, whose sequence is not
// whole blocks of 256 queries; whole ones take the ping-pong form, the
// fourth), takes stages = 2 and one LDS slot with them.
// Likewise a head dim padded to a power of two (96), whose last chunk
// loads are masked.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 4096 -d 128 -t bf16 --page-size 64 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' | FileCheck %s --check-prefix=PAGED-BF16
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 3968 --seq-kv 3968 -d 128 -t bf16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' | FileCheck %s --check-prefix=BF16
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 4096 --seq-kv 4096 -d 128 -t bf16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' | FileCheck %s --check-prefix=BF16PP
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 4096 --seq-kv 4096 -d 96 -t bf16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' | FileCheck %s --check-prefix=PADDED

// PAGE16-LABEL: func.func @attention
// PAGE16: config = #tessel.config<tile = [128, 16], waves = [4, 1], stages = 1, instr = "v_mfma_f32_16x16x16_f16">}

// PAGE32-LABEL: func.func @attention
// PAGE32: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>}

// PAGED-BF16-LABEL: func.func @attention
// PAGED-BF16: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16", scores_ahead>}

// BF16-LABEL: func.func @attention
// BF16: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 608, scores_ahead, unrolled>}

// BF16PP-LABEL: func.func @attention
// BF16PP: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 304, scores_ahead, ping_pong>}

// PADDED-LABEL: func.func @attention
// PADDED: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 608, scores_ahead>}
