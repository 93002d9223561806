// Kernel quality of the default gfx942 f16 FlashAttention forward, D = 128,
// Sq = Skv = 4096, causal and not. What holds today is checked here; what
// does not yet (SGPR spills, P's trip through LDS in 16-bit accesses,
// occupancy 1) is written down in docs/performance.md.
//
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 --causal > %t.causal.mlir
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 > %t.full.mlir
// RUN: tesselc %t.causal.mlir --chip=gfx942 --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tesselc %t.full.mlir --chip=gfx942 --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tesselc %t.causal.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=ISA
// RUN: tessel-opt %t.causal.mlir --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma,tessel-promote-lds))' | FileCheck %s --check-prefix=LDS

// REPORT: kernel attention (amdgcn-amd-amdhsa--gfx942)
// REPORT: workgroup         128x1x1
// REPORT: scratch bytes     0
// REPORT: VGPR spills       0
// REPORT: occupancy

// Both products on MFMA; 128-bit global loads of Q, K and V and 128-bit LDS
// accesses for them; the row reductions as lane swizzles; exp2 on the VALU.
// ISA-LABEL: attention:
// ISA-NOT: scratch_
// ISA: global_load_dwordx4
// ISA: ds_write_b128
// ISA: ds_read_b128
// ISA: v_mfma_f32_32x32x8_f16
// ISA: ds_swizzle_b32
// ISA: v_exp_f32
// ISA: v_mfma_f32_32x32x8_f16
// ISA: .private_segment_fixed_size: 0

// Zero bank conflicts by the layout analysis for the Q, K and V buffers.
// LDS-COUNT-3: tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64}
