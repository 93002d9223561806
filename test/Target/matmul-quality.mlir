// Kernel quality of the gfx942 bf16 4096x4096x4096 GEMM (both operands
// K-contiguous) on 128x128x32 tiles of 2x2 waves, as an AMD kernel engineer
// would check it. The config is given: the model-driven default may change
// with the model, and this test describes one kernel.
//
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' > %t.mlir
// RUN: tesselc %t.mlir --chip=gfx942 --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tesselc %t.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=ISA
// RUN: tesselc %t.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=SLOTS
// RUN: tesselc %t.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=ZERO
// RUN: tessel-opt %t.mlir --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma,tessel-promote-lds))' | FileCheck %s --check-prefix=LDS
// RUN: tessel-gen matmul -m 4000 -n 4000 -k 4000 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tesselc --chip=gfx942 --emit=isa - | FileCheck %s --check-prefix=EDGE

// No scratch, no spills; the occupancy and what limits it are reported.
// REPORT: kernel matmul (amdgcn-amd-amdhsa--gfx942)
// REPORT: workgroup         256x1x1
// REPORT: LDS bytes         32768
// REPORT: scratch bytes     0
// REPORT: VGPR spills       0
// REPORT: SGPR spills       0
// REPORT: occupancy         2 waves/SIMD of 8, limited by

// 128-bit buffer loads (a resource in SGPRs, one 32-bit offset per lane)
// and 128-bit LDS writes and reads; in the K loop of this tile-aligned
// problem no global_load and no mask (v_cndmask). Each step's memory
// instructions issue in the shadow of the first half of its MFMAs, two
// after each: the global loads two steps ahead, the LDS stores of the next
// step, the barrier, then the next step's LDS reads; the step's last eight
// MFMAs carry none, so the reads land before the next step needs them.
// ISA-LABEL: matmul:
// ISA-NOT: scratch_
// ISA: buffer_load_dwordx4 v[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen
// ISA: ds_write_b128
// ISA: ds_read_b128
// ISA: .LBB0_1:
// ISA-NOT: global_load
// ISA-NOT: v_cndmask
// ISA: v_mfma_f32_32x32x8_bf16
// ISA-NOT: global_load
// ISA-NOT: v_cndmask
// ISA-COUNT-2: buffer_load_dwordx4 v[{{[0-9]+}}:{{[0-9]+}}], v{{[0-9]+}}, s[{{[0-9]+}}:{{[0-9]+}}], 0 offen
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NOT: global_load
// ISA-NOT: v_cndmask
// ISA-COUNT-2: ds_write_b128
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NOT: global_load
// ISA-NOT: v_cndmask
// ISA: s_barrier
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: ds_read_b128
// ISA-NEXT: ds_read_b128
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: ds_read_b128
// ISA-NEXT: ds_read_b128
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: ds_read_b128
// ISA-NEXT: ds_read_b128
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: ds_read_b128
// ISA-NEXT: ds_read_b128
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA-NEXT: s_waitcnt lgkmcnt(
// ISA-NEXT: v_mfma_f32_32x32x8_bf16
// ISA: s_cbranch_vccnz .LBB0_1
// ISA-NOT: ds_read_b64
// ISA-NOT: ds_read_u16
// ISA: .private_segment_fixed_size: 0

// The K loop unrolled by its two LDS slots: each access of the second slot
// uses the address register of the first slot's and 8192 bytes in the
// instruction's offset field (the slot's base added after the swizzle; the
// backend may give B's second write A's, 16384 bytes apart).
// SLOTS-LABEL: matmul:
// SLOTS: .LBB0_1:
// SLOTS: ds_write_b128 [[W0:v[0-9]+]], v[{{[0-9]+}}:{{[0-9]+}}] offset:8192
// SLOTS: ds_write_b128 [[W1:v[0-9]+]], v[{{[0-9]+}}:{{[0-9]+}}] offset:8192
// SLOTS: ds_read_b128 v[{{[0-9]+}}:{{[0-9]+}}], [[R0:v[0-9]+]] offset:8192
// SLOTS: ds_read_b128 v[{{[0-9]+}}:{{[0-9]+}}], [[R1:v[0-9]+]] offset:8192
// SLOTS: ds_write_b128 [[W0]], v[{{[0-9]+}}:{{[0-9]+}}]{{ *$}}
// SLOTS: ds_write_b128 v{{[0-9]+}}, v[{{[0-9]+}}:{{[0-9]+}}]{{( offset:16384)?}}{{ *$}}
// SLOTS: ds_read_b128 v[{{[0-9]+}}:{{[0-9]+}}], [[R0]]{{ *$}}
// SLOTS: ds_read_b128 v[{{[0-9]+}}:{{[0-9]+}}], [[R1]]{{ *$}}
// SLOTS: s_cbranch_vccnz .LBB0_1

// Zero bank conflicts by the layout analysis, for the writes and the reads
// of both operands.
// LDS-COUNT-2: tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64}

// The accumulators (64 f32 registers a lane) are zeroed by four MFMAs of
// zero operands, chained, in the shadow of the prologue's first loads and
// before the first wait for them; no VALU moves of zeros before the loop.
// ZERO-LABEL: matmul:
// ZERO-COUNT-4: buffer_load_dwordx4
// ZERO-NOT: s_waitcnt vmcnt
// ZERO-NOT: v_mov_b32_e32 v{{[0-9]+}}, 0{{$}}
// ZERO: v_mfma_f32_32x32x8_f16 v[[[R0:[0-9]+]]:[[R1:[0-9]+]]], v[[[Z:[0-9]+:[0-9]+]]], v[[[Z]]], 0{{$}}
// ZERO-NEXT: v_mfma_f32_32x32x8_f16 v[[[S0:[0-9]+]]:[[S1:[0-9]+]]], v[[[Z]]], v[[[Z]]], v[[[R0]]:[[R1]]]
// ZERO-NEXT: v_mfma_f32_32x32x8_f16 v[[[T0:[0-9]+]]:[[T1:[0-9]+]]], v[[[Z]]], v[[[Z]]], v[[[S0]]:[[S1]]]
// ZERO-NEXT: v_mfma_f32_32x32x8_f16 v{{.*}}, v[[[Z]]], v[[[Z]]], v[[[T0]]:[[T1]]]
// ZERO-NOT: v_mov_b32_e32 v{{[0-9]+}}, 0{{$}}
// ZERO: s_waitcnt vmcnt
// ZERO-NOT: v_mov_b32_e32 v{{[0-9]+}}, 0{{$}}
// ZERO: .LBB0_1:

// Tiles past the edge (4000 is no multiple of 128): C is stored through its
// buffer resource, masked-off vectors sent past the end, with no branch; the
// rounding to bf16 is 4 VALU instructions a value (v_cmp, v_cndmask to the
// quiet NaN, v_bfe_u32, v_add3_u32) and one v_perm_b32 a pair, without the
// backend's `or` of the NaN's quiet bit; C's pointer is loaded at the
// kernel's entry with A's and B's, not after the K loop.
// EDGE-LABEL: matmul:
// EDGE-COUNT-3: s_load_dwordx2
// EDGE: .LBB0_1:
// EDGE: s_cbranch_vccnz .LBB0_1
// EDGE-NOT: s_load
// EDGE-NOT: s_cbranch
// EDGE-NOT: 0x400000
// EDGE: v_cmp_{{[ou]}}_f32
// EDGE: v_cndmask_b32
// EDGE: v_bfe_u32
// EDGE: v_add3_u32
// EDGE: v_perm_b32
// EDGE-COUNT-16: buffer_store_dwordx2
// EDGE-NOT: s_cbranch
// EDGE-NOT: global_store
// EDGE: s_endpgm
