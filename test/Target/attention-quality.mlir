// Kernel quality of gfx942's four-wave f16 FlashAttention forward, D = 128,
// Sq = Skv = 4096, causal and not (the default until the three-slot
// ping-pong form took gfx942's head dim 128, given by --config here; the
// form of the shapes ping-pong does not take, e.g. a sequence that is not
// whole blocks of 256 queries): the structure of the transposed form
// (S^T = K Q^T, O^T = V^T P^T), K and V double-buffered in LDS with one
// barrier per key block (stages = 3), and P rounded to bf16 without a NaN
// check (bf16). The default kernels (ping-pong, PP942 below and gfx950's)
// follow. docs/performance.md has the measurements.
//
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 --causal > %t.causal.mlir
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 > %t.full.mlir
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608, scores_ahead>' > %t.causal4.mlir
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608, scores_ahead>' > %t.full4.mlir
// RUN: tesselc %t.causal4.mlir --chip=gfx942 --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tesselc %t.full4.mlir --chip=gfx942 --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tesselc %t.causal4.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=ISA
// RUN: tesselc %t.full4.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=ISA
// RUN: tesselc %t.full4.mlir --chip=gfx942 --emit=perf | FileCheck %s --check-prefix=PERF
// RUN: tesselc %t.causal4.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=PRIO
// RUN: tesselc %t.full.mlir --chip=gfx950 --emit=report | FileCheck %s --check-prefix=REPORT950
// The causal kernels in the stream-K form with the scores ahead, whose
// registers are closest to the limit (244-254 VGPRs): bf16 on gfx942, f16 on
// gfx90a (batch 1 x 4 heads: 128 query blocks on 220 slots).
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t bf16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 608, scores_ahead, unrolled>' | tesselc --chip=gfx942 --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tessel-gen attention -b 1 -h 4 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 --causal | tesselc --chip=gfx90a --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tesselc %t.full.mlir --chip=gfx950 --emit=isa | FileCheck %s --check-prefix=ISA950
// RUN: tesselc %t.full.mlir --chip=gfx950 --emit=isa > %t.full950.s
// RUN: FileCheck %s --check-prefix=LOOP950 < %t.full950.s
// RUN: FileCheck %s --check-prefix=SUM950 < %t.full950.s
// RUN: tesselc %t.full.mlir --chip=gfx950 --emit=perf | FileCheck %s --check-prefix=PERF950
// RUN: tesselc %t.causal4.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=PREFETCH
// RUN: tesselc %t.causal4.mlir --chip=gfx942 --emit=perf | FileCheck %s --check-prefix=DOUBLE
// RUN: tesselc %t.full4.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=AHEAD
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 64 -t f16 --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608, scores_ahead, unrolled>' | tesselc --chip=gfx942 --emit=isa > %t.d64.s
// RUN: FileCheck %s --check-prefix=P64 < %t.d64.s
// RUN: FileCheck %s --check-prefix=UNROLL64 < %t.d64.s
// RUN: FileCheck %s --check-prefix=NOMOV64 < %t.d64.s
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t bf16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 608, scores_ahead, unrolled>' > %t.bf16.mlir
// RUN: tesselc %t.bf16.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=BF16
// RUN: tessel-gen attention -b 4 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">' > %t.batch4.mlir
// RUN: tessel-opt %t.batch4.mlir --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma,tessel-promote-lds))' | FileCheck %s --check-prefix=LDS
// RUN: tessel-opt %t.full4.mlir --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma,tessel-promote-lds))' | FileCheck %s --check-prefix=LDSSK
// RUN: tesselc %t.full.mlir --chip=gfx942 --emit=report | FileCheck %s --check-prefix=PP942
// RUN: tesselc %t.causal.mlir --chip=gfx942 --emit=report | FileCheck %s --check-prefix=PP942
// RUN: tesselc %t.full.mlir --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=LOOP942
// RUN: tessel-gen attention -b 1 -h 32 --seq-q 4096 --seq-kv 4096 -d 128 -t bf16 | tesselc --chip=gfx950 --emit=isa | FileCheck %s --check-prefix=CVT950
// RUN: tessel-gen attention -b 1 -h 32 --kv-heads 8 --seq-q 1 --seq-kv 4096 -d 128 -t bf16 | tesselc --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=ENTRY
// RUN: tessel-gen attention -b 1 -h 32 --kv-heads 8 --seq-q 1 --seq-kv 4096 -d 128 -t bf16 | tesselc --chip=gfx942 --emit=report | FileCheck %s --check-prefix=DECODE
// RUN: tessel-gen attention -b 1 -h 32 --kv-heads 8 --seq-q 8 --seq-kv 4096 -d 128 -t bf16 | tesselc --chip=gfx942 --emit=report | FileCheck %s --check-prefix=DECODE

// A split-KV decode reads all of its pointers at the entry, before its first
// wait for kernel arguments (Q, K, V, O and the three workspaces), so the
// key block's loads wait for one scalar latency only.
// ENTRY-LABEL: attention:
// ENTRY: s_waitcnt lgkmcnt(0)
// ENTRY-NOT: s_load_dwordx2
// ENTRY: buffer_load_dwordx4

// A split-KV decode block (one wave of 16 rows, or two of 16) loads its key
// block straight into the first product's operands: only V^T, 64 keys x
// 128 head dims of bf16, goes through LDS (16 KiB, 32 KiB with K).
// DECODE: kernel attention (amdgcn-amd-amdhsa--gfx942)
// DECODE: LDS bytes         16384
// DECODE: scratch bytes     0

// Four waves of 32 queries; K and V only in LDS (gfx942: one slot of
// 32-key blocks without the mask, 16 KiB, two with it, 32 KiB; gfx950: two
// slots of 64-key blocks, 64 KiB), no spills of any kind.
// REPORT: kernel attention (amdgcn-amd-amdhsa--gfx9{{0a|42|50}})
// REPORT: workgroup         256x1x1
// REPORT: AGPRs             0
// REPORT: LDS bytes         {{65536|32768|16384}}
// REPORT: scratch bytes     0
// REPORT: VGPR spills       0
// REPORT: SGPR spills       0
// REPORT: occupancy         2 waves/SIMD

// Q goes straight from global memory into registers (the LDS check below:
// only K and V have buffers); 16-byte K/V loads and LDS stores, 16-byte K
// reads, both products on MFMA, the column statistics with one cross-lane
// permute each (no swizzle butterflies), and the bare v_exp_f32 (no
// denormal rescaling with v_ldexp).
// ISA-LABEL: attention:
// ISA-NOT: scratch_
// ISA: global_load_dwordx4
// ISA: ds_write_b128
// ISA: ds_read_b128
// ISA: v_mfma_f32_32x32x8_f16
// ISA-DAG: ds_read{{2st64_b64|_b64}}
// ISA-DAG: ds_bpermute_b32
// ISA-DAG: v_exp_f32
// ISA: v_mfma_f32_32x32x8_f16
// ISA-NOT: ds_swizzle
// ISA-NOT: v_ldexp_f32
// ISA-NOT: ds_read_u16
// ISA: s_cbranch_vcc{{n?}}z
// ISA-NOT: ds_swizzle
// ISA-NOT: v_ldexp_f32
// ISA: .private_segment_fixed_size: 0

// gfx950 (the REPORT lines above hold too: P^T takes no LDS): the
// double-rate v_mfma_f32_32x32x16_f16 for both products, P^T fed from its
// registers in two 4-key runs per instruction, the half-wave reduction a
// v_permlane32_swap.
// ISA950-LABEL: attention:
// ISA950-NOT: scratch_
// ISA950: v_mfma_f32_32x32x16_f16
// ISA950: v_permlane32_swap
// ISA950: v_exp_f32
// ISA950: v_mfma_f32_32x32x16_f16
// ISA950-NOT: v_mfma_f32_32x32x8_f16
// ISA950-NOT: ds_read_u16
// ISA950: .private_segment_fixed_size: 0

// gfx950's kernel is the ping-pong form (tessel-select-config): 8 waves of
// 32 queries, two a SIMD, 48 KiB of LDS (three slots of K and V^T), one
// workgroup per CU, no spills.
// REPORT950: kernel attention (amdgcn-amd-amdhsa--gfx950)
// REPORT950: workgroup         512x1x1
// REPORT950: AGPRs             0
// REPORT950: LDS bytes         49152
// REPORT950: scratch bytes     0
// REPORT950: VGPR spills       0
// REPORT950: SGPR spills       0
// REPORT950: occupancy         2 waves/SIMD

// gfx942's default at head dim 128 is the ping-pong form too (f16, causal
// and not; stream-K over one workgroup per CU): 8 waves, 48 KiB of LDS
// (three slots), no spills. Its key loop (not unrolled by its slots on
// gfx942): the block's eight K reads, then the lazy rescale's test (the
// maximum of the lane's scores against (m + 8) over the score scale: no
// exchange between lanes, which on gfx942 is an LDS permute); the
// matrix phase at wave priority 1 with the next S^T's 16 MFMAs first,
// then the next blocks' LDS stores (K, and V^T transposed in 8-byte
// writes) and buffer loads among the second product's MFMAs, and the
// barrier right after the last MFMA.
// PP942: kernel attention (amdgcn-amd-amdhsa--gfx942)
// PP942: workgroup         512x1x1
// PP942: AGPRs             0
// PP942: LDS bytes         49152
// PP942: scratch bytes     0
// PP942: VGPR spills       0
// PP942: SGPR spills       0
// PP942: occupancy         2 waves/SIMD
// LOOP942-LABEL: attention:
// LOOP942-COUNT-8: ds_read_b128
// LOOP942-NOT: v_mfma
// LOOP942: v_add_f32_e32 [[GROWN:v[0-9]+]], 0x41000000,
// LOOP942-NEXT: v_mul_f32_e32 [[LIMIT:v[0-9]+]], 0x{{[0-9a-f]+}}, [[GROWN]]
// LOOP942-NEXT: v_max_f32_e32 [[MAX:v[0-9]+]], v{{[0-9]+}}, v{{[0-9]+}}
// LOOP942-COUNT-7: v_max3_f32 [[MAX]], [[MAX]], v{{[0-9]+}}, v{{[0-9]+}}
// LOOP942-NEXT: v_cmp_gt_f32_e32 vcc, [[MAX]], [[LIMIT]]
// LOOP942-NEXT: s_cbranch_vccnz
// The row sum stays within each lane (no LDS permute between the halves).
// LOOP942-NOT: {{v_mfma|ds_bpermute}}
// LOOP942: s_barrier
// LOOP942-NEXT: s_waitcnt lgkmcnt(0)
// LOOP942-NEXT: s_setprio 1
// LOOP942-NEXT: v_mfma_f32_32x32x8_f16
// LOOP942-NOT: {{s_barrier|s_setprio|v_exp_f32|ds_write|buffer_load}}
// LOOP942-COUNT-15: v_mfma_f32_32x32x8_f16
// LOOP942-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP942: ds_write_b128
// LOOP942-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP942: buffer_load_dwordx4
// LOOP942-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP942-COUNT-2: ds_write_b64
// LOOP942-NOT: {{s_barrier|s_setprio|v_exp_f32|ds_write|buffer_load}}
// LOOP942: v_mfma_f32_32x32x8_f16
// LOOP942-NOT: {{s_barrier|v_exp_f32|ds_write|buffer_load}}
// LOOP942: s_setprio 0
// LOOP942-NEXT: s_waitcnt lgkmcnt(0)
// LOOP942-NEXT: s_barrier

// gfx950's bf16 ping-pong kernel converts each block's probabilities in
// its softmax phase, a pair a `v_cvt_pk_bf16_f32`, all eight before the
// barrier that opens the matrix phase and none among the MFMAs
// (splitBf16Truncation; a whole vector's conversion was emitted with the
// second product's operand halves, behind the barrier).
// CVT950-LABEL: attention:
// CVT950: ds_read_b128 v[{{[0-9]+:[0-9]+}}], v{{[0-9]+}} offset:24576
// CVT950: s_cbranch_vccnz
// CVT950-NOT: {{s_barrier|v_mfma}}
// CVT950-COUNT-8: v_cvt_pk_bf16_f32
// CVT950-NOT: {{v_mfma|v_cvt_pk_bf16_f32}}
// CVT950: s_barrier
// CVT950-NEXT: s_waitcnt lgkmcnt(0)
// CVT950-NEXT: s_setprio 1
// CVT950-NOT: {{v_cvt_pk_bf16_f32|s_barrier}}
// CVT950: s_setprio 0

// Its key loop: the upper half of the waves (wave index >= 4, read into a
// scalar register) waits at one barrier in front of it, so the halves run
// a phase apart. The loop is unrolled by its three LDS slots, each copy a
// block: a softmax phase (the block's eight K reads from its slot, the
// slot's base in the instruction's offset field: 24576, 32768, 40960
// bytes; its 16 exps, their sum folded as pairs of v_pk_add_f32, no
// MFMA), a barrier without a wait in front of it (the K reads are waited
// for behind it), then the matrix phase at wave priority 1: the 16 MFMAs
// of both products in one cluster, no K read among them, the next blocks'
// buffer loads and LDS stores after the first product's 8 (they complete
// under the second product's), and a barrier right after the last MFMA.
// No LDS address is computed in the loop (no v_xor, v_add_lshl or
// v_lshlrev). After the loop the lower half waits at one barrier.
// The bias of each block's exponentials (minus the row maximum, which only
// the lazy rescale's unlikely branch changes) stays one register broadcast
// by op_sel_hi, not a vector of copies carried across that branch.
// RUN: FileCheck %s --check-prefix=SPLAT950 < %t.full950.s
// SPLAT950-LABEL: attention:
// SPLAT950-NOT: op_sel_hi:[1,0,1]
// SPLAT950-COUNT-8: v_pk_fma_f32 v[{{[0-9]+:[0-9]+}}], v[{{[0-9]+:[0-9]+}}], s[{{[0-9]+:[0-9]+}}], v[{{[0-9]+:[0-9]+}}] op_sel_hi:[1,0,0]
// SPLAT950-NOT: op_sel_hi:[1,0,1]
// LOOP950-LABEL: attention:
// LOOP950: v_readfirstlane_b32 [[WAVE:s[0-9]+]],
// LOOP950: s_cmp_lt_u32 [[WAVE]], 4
// LOOP950: s_cbranch_scc1 [[SKIP:\.LBB0_[0-9]+]]
// LOOP950-NEXT: s_barrier
// LOOP950-NEXT: [[SKIP]]:
// LOOP950: [[HEAD:\.LBB0_[0-9]+]]:
// LOOP950-NOT: {{v_mfma|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950-COUNT-8: ds_read_b128 v[{{[0-9]+:[0-9]+}}], v{{[0-9]+}} offset:24576
// LOOP950-NOT: {{v_mfma|ds_read_b128|s_waitcnt lgkmcnt\(0\)|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950: s_barrier
// LOOP950-NEXT: s_waitcnt lgkmcnt(0)
// LOOP950-NEXT: s_setprio 1
// LOOP950-NEXT: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32|ds_write|buffer_load|ds_read_b128}}
// LOOP950-COUNT-7: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32|ds_read_b128|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950-COUNT-2: buffer_load_dwordx4 v[{{[0-9]+:[0-9]+}}], v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}], s{{[0-9]+}} offen
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP950-COUNT-2: ds_write_b128
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP950: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|v_exp_f32|ds_write|buffer_load}}
// LOOP950: s_setprio 0
// LOOP950-NEXT: s_waitcnt lgkmcnt(0)
// LOOP950-NEXT: s_barrier
// LOOP950-NOT: {{v_mfma|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950-COUNT-8: ds_read_b128 v[{{[0-9]+:[0-9]+}}], v{{[0-9]+}} offset:32768
// LOOP950-NOT: {{v_mfma|ds_read_b128|s_waitcnt lgkmcnt\(0\)|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950: s_barrier
// LOOP950-NEXT: s_waitcnt lgkmcnt(0)
// LOOP950-NEXT: s_setprio 1
// LOOP950-NEXT: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32|ds_write|buffer_load|ds_read_b128}}
// LOOP950-COUNT-7: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32|ds_read_b128|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950-COUNT-2: buffer_load_dwordx4 v[{{[0-9]+:[0-9]+}}], v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}], s{{[0-9]+}} offen
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP950-COUNT-2: ds_write_b128
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP950: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|v_exp_f32|ds_write|buffer_load}}
// LOOP950: s_setprio 0
// LOOP950-NEXT: s_waitcnt lgkmcnt(0)
// LOOP950-NEXT: s_barrier
// LOOP950-NOT: {{v_mfma|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950-COUNT-8: ds_read_b128 v[{{[0-9]+:[0-9]+}}], v{{[0-9]+}} offset:40960
// LOOP950-NOT: {{v_mfma|ds_read_b128|s_waitcnt lgkmcnt\(0\)|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950: s_barrier
// LOOP950-NEXT: s_waitcnt lgkmcnt(0)
// LOOP950-NEXT: s_setprio 1
// LOOP950-NEXT: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32|ds_write|buffer_load|ds_read_b128}}
// LOOP950-COUNT-7: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32|ds_read_b128|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950-COUNT-2: buffer_load_dwordx4 v[{{[0-9]+:[0-9]+}}], v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}], s{{[0-9]+}} offen
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP950-COUNT-2: ds_write_b128
// LOOP950-NOT: {{s_barrier|s_setprio|v_exp_f32}}
// LOOP950: v_mfma_f32_32x32x16_f16
// LOOP950-NOT: {{s_barrier|v_exp_f32|ds_write|buffer_load}}
// LOOP950: s_setprio 0
// LOOP950-NEXT: s_waitcnt lgkmcnt(0)
// LOOP950-NEXT: s_barrier
// LOOP950-NOT: {{v_mfma|s_barrier|v_xor_b32|v_add_lshl_u32|v_lshlrev_b32}}
// LOOP950: s_cbranch_vccz [[HEAD]]
// LOOP950: v_readfirstlane_b32 [[WAVE2:s[0-9]+]],
// LOOP950-NEXT: s_cmp_gt_u32 [[WAVE2]], 3
// LOOP950-NEXT: s_cbranch_scc1 [[PAST:\.LBB0_[0-9]+]]
// LOOP950-NEXT: s_barrier
// LOOP950-NEXT: [[PAST]]:
// The softmax phase's 16 exps and their sum as 7 + 1 packed adds, all
// before the barrier that opens the matrix phase.
// SUM950-LABEL: attention:
// SUM950: s_cbranch_scc1
// SUM950: {{^}}[[HEAD:\.LBB0_[0-9]+]]:
// SUM950-NOT: v_mfma
// SUM950-COUNT-16: v_exp_f32
// SUM950-NOT: v_mfma
// SUM950-COUNT-7: v_pk_add_f32 v[{{[0-9]+:[0-9]+}}], v[{{[0-9]+:[0-9]+}}], v[{{[0-9]+:[0-9]+}}]{{$}}
// SUM950-NOT: v_mfma
// SUM950: s_barrier
// SUM950-NEXT: s_waitcnt lgkmcnt(0)
// SUM950-NEXT: s_setprio 1

// The model sees the halves' offset: the loop's two waves of a SIMD run a
// phase apart.
// PERF950: with 2 wave(s) per SIMD a phase apart (ping-pong)

// Each product's cluster of MFMAs in the key loop runs at wave priority 1
// (lib/Target/MatrixPriority.cpp): the two waves of a SIMD alternate
// between their matrix clusters and their softmax. (In the kernel without
// the mask, whose softmax issues among the next block's first product, the
// loop is one cluster.)
// (unittests/Target/MatrixPriorityTest.cpp checks the exact placement.)
// PRIO-LABEL: attention:
// Stream-K: before each query block's key loops, the output accumulator's
// zero (four MFMAs of zero operands, each onto the previous one) is a
// cluster of its own.
// PRIO: v_mfma_f32_32x32x8_f16 v{{\[[0-9]+:[0-9]+\]}}, [[ZERO:v\[[0-9]+:[0-9]+\]]], [[ZERO]], 0
// PRIO-COUNT-3: v_mfma_f32_32x32x8_f16 v{{\[[0-9]+:[0-9]+\]}}, [[ZERO]], [[ZERO]], v
// PRIO-NEXT: s_setprio 0
// PRIO: s_setprio 1
// PRIO-NEXT: v_mfma_f32_32x32x8_f16
// PRIO-NOT: s_setprio
// PRIO: s_setprio 0
// PRIO-NOT: s_setprio
// PRIO: v_exp_f32
// PRIO: s_setprio 1
// PRIO-NEXT: v_mfma_f32_32x32x8_f16
// PRIO-NOT: s_setprio
// PRIO: s_setprio 0
// PRIO: s_cbranch_vccnz

// All four SIMDs busy.
// PERF: placement             4 of 4 SIMDs busy
// PERF-NOT: idle-simds

// Two LDS buffers (of the kernel without the causal mask, at a batch whose
// query blocks fill the chip's rounds: one workgroup per query block, 64-key
// blocks), both without bank conflicts by the layout analysis: K ([keys,
// D], D contiguous) and V^T ([D, keys]) with the keys contiguous (the
// default order), so that the second product reads its K runs whole. V^T's
// write (8-byte runs from lanes 8 rows apart) needs the folded phase.
// LDS-DAG: #[[$VSW:swizzle[0-9]*]] = #tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 16, fold = true>
// LDS-DAG: tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[128, 64], f16, #[[$VSW]]>
// LDS-DAG: tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[64, 128], f16,
// LDS-NOT: tessel.local_alloc

// At batch 1 the 1024 query blocks fill 608 slots 1.7 times: the kernel is
// stream-K (tessel-select-config), on 32-key blocks whose V^T rows (64
// bytes) leave its 8-byte writes 4-way conflicts (the reads none). (Two
// slots each once tessel-pipeline runs.)
// LDSSK: tessel.stream_k = 608 : i64
// LDSSK-DAG: tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 4.000000e+00 : f64} : !tessel.lds<1 x[128, 32], f16,
// LDSSK-DAG: tessel.local_alloc {tessel.read_conflicts = 0.000000e+00 : f64, tessel.write_conflicts = 0.000000e+00 : f64} : !tessel.lds<1 x[32, 128], f16,
// LDSSK-NOT: tessel.local_alloc

// The causal kernel's loop over whole key blocks (the first loop) is the
// full kernel's (scores ahead, K and V^T in two LDS slots, lazy rescale):
// its header tests the rescale and holds the block's one barrier; the body
// stores the next block (loaded an iteration earlier) into the other slot
// after its first MFMAs and loads the block after next after the stores.
// No second barrier: the next iteration's orders the stores before their
// reads.
// PREFETCH-LABEL: attention:
// PREFETCH: v_add_f32_e32 {{v[0-9]+}}, 0x41000000,
// PREFETCH: s_barrier
// PREFETCH-NEXT: s_cbranch_vccnz [[RESCALE:\.LBB0_[0-9]+]]
// PREFETCH-NEXT: .LBB0_{{[0-9]+}}:
// PREFETCH-NOT: s_barrier
// PREFETCH: v_mfma_f32_32x32x8_f16
// PREFETCH-NOT: s_barrier
// PREFETCH: ds_write_b128
// PREFETCH-NOT: s_barrier
// PREFETCH: {{global|buffer}}_load_dword
// PREFETCH-NOT: s_barrier
// PREFETCH: v_mfma_f32_32x32x8_f16
// PREFETCH-NOT: s_barrier
// PREFETCH: s_cbranch_vcc{{n?}}z .LBB0_{{[0-9]+}}
// PREFETCH-NEXT: s_branch
// PREFETCH-NEXT: [[RESCALE]]:

// The model sees the same loop: 32 MFMAs, the next blocks' 6 loads, one
// barrier.
// DOUBLE: loop +0x{{[0-9a-f]+}}..+0x{{[0-9a-f]+}}: {{[0-9]+}} instructions (32 matrix, {{[0-9]+}} VALU, {{[0-9]+}} LDS, 6 global, 1 barrier)

// bf16 on gfx942 (no conversion instruction): the key loop rounds P to
// nearest, ties away, adding 0x8000 to two values at once as one 64-bit
// integer (v_lshl_add_u64 of a register pair and 0x0000800000008000, no
// v_add_u32 a value nor v_add3_u32 of the lowest kept bit) and with no NaN
// test (the f32 row sum carries a NaN); O's rounding after the loop, to
// nearest even, keeps it. The key loop is
// unrolled by two (`unrolled`, chooseAttentionUnroll): each of its two
// blocks starts with the slot's base after the lazy rescale's test, the
// first block's test being the loop's header.
// BF16-LABEL: attention:
// BF16: [[HEAD:\.LBB0_[0-9]+]]:{{[[:space:]]+}}{{(v_mul_f32_e32 .*[[:space:]]+)?}}v_add_f32_e32 {{v[0-9]+}}, 0x41000000,
// BF16: s_cbranch_vccnz .LBB0_{{[0-9]+}}
// BF16-NEXT: .LBB0_{{[0-9]+}}:{{[[:space:]]+}}{{(s_mov_b64 s\[[0-9]+:[0-9]+\], s\[[0-9]+:[0-9]+\][[:space:]]+)?}}s_and_b32 {{s[0-9]+}}, {{s[0-9]+}}, 0x1000
// BF16-NOT: {{v_cmp_[ou]_f32|v_add3_u32|v_add_u32_e32 v[0-9]+, 0x8000}}
// BF16: v_lshl_add_u64 v[{{[0-9]+:[0-9]+}}], v[{{[0-9]+:[0-9]+}}], 0, s[{{[0-9]+:[0-9]+}}]
// BF16-NOT: {{v_cmp_[ou]_f32|v_add3_u32|v_add_u32_e32 v[0-9]+, 0x8000}}
// BF16: s_cbranch_vccnz .LBB0_{{[0-9]+}}
// BF16-NEXT: .LBB0_{{[0-9]+}}:{{[[:space:]]+}}{{(s_mov_b64 s\[[0-9]+:[0-9]+\], s\[[0-9]+:[0-9]+\][[:space:]]+)?}}s_and_b32 {{s[0-9]+}}, {{s[0-9]+}}, 0x1000
// BF16-NOT: {{v_cmp_[ou]_f32|v_add3_u32|v_add_u32_e32 v[0-9]+, 0x8000}}
// BF16: v_lshl_add_u64 v[{{[0-9]+:[0-9]+}}], v[{{[0-9]+:[0-9]+}}], 0, s[{{[0-9]+:[0-9]+}}]
// BF16-NOT: {{v_cmp_[ou]_f32|v_add3_u32|v_add_u32_e32 v[0-9]+, 0x8000}}
// BF16: s_cbranch_vcc{{n?}}z [[HEAD]]
// BF16: v_cmp_{{[ou]}}_f32

// The kernel without the mask computes the next key block's S^T one
// iteration ahead (scores_ahead), K and V double-buffered in LDS (stages =
// 3), and rescales lazily: the loop's first block tests whether a query of
// the wave saw its maximum grow past the running one by more than 8
// (0x41000000) and branches, after the block's barrier, to the rescale,
// which LLVM lays out after the loop's back edge (the condition is expected
// false): the loop itself multiplies no accumulator. The next block's first
// product starts right away, its K reads (16-byte) interleaved with its
// MFMAs (one issued between the first two), and this block's softmax (its exps) issues among them.
// AHEAD-LABEL: attention:
// AHEAD: v_add_f32_e32 [[LIMIT:v[0-9]+]], 0x41000000,
// AHEAD-NEXT: v_cmp_gt_f32_e32 vcc, {{v[0-9]+}}, [[LIMIT]]
// AHEAD: s_barrier
// AHEAD-NEXT: s_cbranch_vccnz [[RESCALE:\.LBB0_[0-9]+]]
// AHEAD-NEXT: [[BODY:\.LBB0_[0-9]+]]:
// AHEAD-NOT: v_pk_mul_f32
// AHEAD: s_setprio 1{{[[:space:]]+}}v_mfma_f32_32x32x8_f16
// AHEAD-NOT: {{v_mfma|v_pk_mul_f32}}
// AHEAD: ds_read_b128
// AHEAD-NOT: v_pk_mul_f32
// AHEAD: v_exp_f32
// AHEAD-NOT: v_pk_mul_f32
// AHEAD: v_mfma_f32_32x32x8_f16
// AHEAD-NOT: v_pk_mul_f32
// AHEAD: s_cbranch_vccnz .LBB0_{{[0-9]+}}
// AHEAD-NEXT: s_branch
// AHEAD-NEXT: [[RESCALE]]:
// AHEAD: v_exp_f32
// AHEAD-COUNT-32: v_pk_mul_f32
// AHEAD: s_branch [[BODY]]

// At head dim 64 the f16 probabilities are rounded toward zero, two a
// v_cvt_pkrtz_f16_f32 (16 for a lane's 32 of a 64-key block), where the
// row sums add the rounded values: the key loop converts with no
// v_cvt_f16_f32 and no v_pack_b32_f16. O is still rounded to nearest.
// gfx942's four-wave f16 kernel at head dim 64 (given: the chooser now
// takes the ping-pong form there) unrolls its key loop by two
// (`unrolled`): the two blocks' S^T computed ahead alternate
// between two sets of registers, so the loop (64 MFMAs, two blocks) copies
// no register into another, where the rolled loop moved the next block's
// 32 registers of S^T into the carried ones every block.
// UNROLL64-LABEL: attention:
// UNROLL64: [[LOOP:\.LBB0_[0-9]+]]:{{[[:space:]]+}}v_add_f32_e32 {{v[0-9]+}}, 0x41000000
// UNROLL64-COUNT-64: v_mfma_f32_32x32x8_f16
// UNROLL64-NOT: v_mfma_f32_32x32x8_f16
// UNROLL64: s_cbranch_vcc{{n?}}z [[LOOP]]
// NOMOV64-LABEL: attention:
// NOMOV64: [[LOOP:\.LBB0_[0-9]+]]:{{[[:space:]]+}}v_add_f32_e32 {{v[0-9]+}}, 0x41000000
// NOMOV64-NOT: {{v_mov_b32_e32 v[0-9]+, v[0-9]+$}}
// NOMOV64: s_cbranch_vcc{{n?}}z [[LOOP]]

// P64-LABEL: attention:
// P64-NOT: {{v_pack_b32_f16|v_cvt_f16_f32}}
// P64-COUNT-16: v_cvt_pkrtz_f16_f32
// P64-NOT: {{v_cvt_pkrtz_f16_f32|v_pack_b32_f16|v_cvt_f16_f32}}
// P64: s_cbranch_vccnz .LBB0_{{[0-9]+}}
// P64: v_cvt_f16_f32_e32
// P64: v_pack_b32_f16
