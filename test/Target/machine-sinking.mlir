// The code generator's machine sinking runs for a gpu.module unless every
// kernel in it is marked tessel.skip_machine_sinking, which the lowering
// puts on kernels with an unlikely branch (attention's lazy rescale): the
// pass moved the K reads a ping-pong key loop issues at the top of its
// softmax phase, ahead of the rescale test, into the block after the
// branch, where the scheduler spread them behind the exponentials
// (docs/performance.md, "K read in the softmax phase").
//
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=ATTENTION
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f8E4M3FNUZ --descale | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=FP8
// RUN: tessel-gen matmul -m 256 -n 256 -k 256 -t bf16 --transpose-b | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=MATMUL
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 1024 -d 128 -t f16 --config='#tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_f16", scores_ahead, ping_pong>' | tesselc - --chip=gfx950 --emit=isa | FileCheck %s --check-prefix=ISA

// ATTENTION-LABEL: gpu.func @attention
// ATTENTION-SAME: tessel.skip_machine_sinking

// 8-bit attention rescales at every block (no lazy rescale, no branch).
// FP8-LABEL: gpu.func @attention
// FP8-NOT: tessel.skip_machine_sinking

// MATMUL-LABEL: gpu.func @matmul
// MATMUL-NOT: tessel.skip_machine_sinking

// The key loop starts with the block's eight K reads, then the rescale
// test (the limit m + 8 over the score scale, the maximum of the lane's 16
// scores, one compare: no exchange between lanes) and its branch.
// ISA-LABEL: attention:
// ISA: .LBB0_3:
// ISA-COUNT-8: ds_read_b128 v[{{[0-9]+:[0-9]+}}], v{{[0-9]+}} offset:24576
// ISA-NEXT: v_add_f32_e32 [[GROWN:v[0-9]+]], 0x41000000,
// ISA-NEXT: v_mul_f32_e32 [[LIMIT:v[0-9]+]], 0x{{[0-9a-f]+}}, [[GROWN]]
// ISA-NEXT: v_max_f32_e32 [[MAX:v[0-9]+]], v{{[0-9]+}}, v{{[0-9]+}}
// ISA-COUNT-7: v_max3_f32 [[MAX]], [[MAX]], v{{[0-9]+}}, v{{[0-9]+}}
// ISA-NEXT: v_cmp_gt_f32_e32 vcc, [[MAX]], [[LIMIT]]
// ISA-NEXT: s_cbranch_vccnz
