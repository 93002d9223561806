// The accumulator a kernel's K loop starts from is zeroed by the matrix
// pipe: one 32x32x8 f16 MFMA of zero operands per 16 f32 registers, each
// accumulating onto the previous one (LLVM can neither merge them nor
// rematerialize them as constants next to the loop), between the prologue's
// first global loads and its first LDS store (sched_barriers on both
// sides), instead of 16 VALU moves per block after the loads' wait.
// 128x128 tiles on 2x2 waves: 64x64 per wave, four 32x32 blocks.
//
// RUN: tessel-gen matmul -m 256 -n 256 -k 256 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s
//
// i32 accumulators (i8 products): the same chain, bit-cast (the zero has
// the same bits).
// RUN: tessel-gen matmul -m 256 -n 256 -k 512 -t i8 --transpose-b --config='#tessel.config<tile = [128, 128, 64], waves = [2, 2], stages = 2, instr = "v_mfma_i32_32x32x16_i8">' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=I32
//
// Stream-K's K loop runs once per tile inside the loop over tiles, and its
// zero is also the result of a tile with no K steps (a select): two uses, so
// it stays a constant (LLVM rematerializes it per tile; MFMAs at the
// kernel's entry would stay live across the outer loop).
// RUN: tessel-gen matmul -m 256 -n 256 -k 256 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 3>' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=STREAMK
//
// Attention's output accumulator is rescaled before each product, not
// taken straight into a dot: it keeps the constant.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}),tessel-tile,func.func(tessel-select-mfma{chip=gfx950},tessel-promote-lds{chip=gfx950},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx950})' | FileCheck %s --check-prefix=ATTN
//
// Stream-K attention's output accumulator starts each query block's key
// loop inside the loop over query blocks: the chain is written right
// before that key loop, on every trip. As a constant, LLVM wrote it into
// 32 scalar registers at once there and copied them over, and the causal
// kernel (scores ahead, both LDS slots) spilled 6 SGPRs.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 512 --seq-kv 512 -d 128 -t bf16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 3, scores_ahead>' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=STREAMK-ATTN
// At head dim 64 O^T and S^T (64 keys) have one type, and CSE merges their
// zeros: the key loop still takes the chain, S^T's MFMAs keep the constant
// as their C (an inline 0).
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 512 -d 64 -t f16 --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 3, scores_ahead>' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=SHARED-ZERO
//
// WMMA chips have no MFMA to do it with.
// RUN: tessel-gen matmul -m 256 -n 256 -k 256 -t f16 --transpose-b | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx1100}),tessel-tile{chip=gfx1100},func.func(tessel-select-mfma{chip=gfx1100},tessel-promote-lds{chip=gfx1100},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx1100})' | FileCheck %s --check-prefix=WMMA

// CHECK-LABEL: gpu.func @matmul
// CHECK-DAG: %[[C:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[OPERAND:.*]] = arith.constant dense<0.000000e+00> : vector<4xf16>
// CHECK: amdgpu.raw_buffer_load
// CHECK: amdgpu.raw_buffer_load
// CHECK: amdgpu.raw_buffer_load
// CHECK: amdgpu.raw_buffer_load
// CHECK-NOT: vector.store
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK-NEXT: %[[Z0:.*]] = amdgpu.mfma 32x32x8 %[[OPERAND]] * %[[OPERAND]] + %[[C]]
// CHECK-NOT: vector.store
// CHECK: %[[Z1:.*]] = amdgpu.mfma 32x32x8 %[[OPERAND]] * %[[OPERAND]] + %[[Z0]]
// CHECK-NOT: vector.store
// CHECK: %[[Z2:.*]] = amdgpu.mfma 32x32x8 %[[OPERAND]] * %[[OPERAND]] + %[[Z1]]
// CHECK-NOT: vector.store
// CHECK: %[[Z3:.*]] = amdgpu.mfma 32x32x8 %[[OPERAND]] * %[[OPERAND]] + %[[Z2]]
// CHECK-NOT: amdgpu.mfma
// CHECK: %[[ZEROS:.*]] = vector.shuffle {{.*}} : vector<64xf32>, vector<64xf32>
// CHECK-NEXT: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: amdgpu.mfma
// CHECK: vector.store {{.*}}#gpu.address_space<workgroup>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]],

// I32-LABEL: gpu.func @matmul
// I32: amdgpu.sched_barrier allow = <none>
// I32-COUNT-4: amdgpu.mfma 32x32x8 {{.*}} : vector<4xf16>, vector<4xf16>, vector<16xf32>
// I32-NOT: amdgpu.mfma
// I32: %[[ZEROS:.*]] = vector.bitcast %{{.*}} : vector<64xf32> to vector<64xi32>
// I32-NEXT: amdgpu.sched_barrier allow = <none>
// I32: scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]],

// STREAMK-LABEL: gpu.func @matmul
// STREAMK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<64xf32>
// STREAMK-NOT: vector<4xf16>, vector<4xf16>, vector<16xf32>
// STREAMK: scf.for
// STREAMK-NOT: vector<4xf16>, vector<4xf16>, vector<16xf32>
// STREAMK: scf.for {{.*}} iter_args(%{{.*}} = %[[ZEROS]],

// STREAMK-ATTN-LABEL: gpu.func @attention
// STREAMK-ATTN-NOT: vector<4xf16>, vector<4xf16>, vector<16xf32>
// STREAMK-ATTN: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i32)
// STREAMK-ATTN-NOT: vector<4xf16>, vector<4xf16>, vector<16xf32>
// STREAMK-ATTN: amdgpu.sched_barrier allow = <none>
// STREAMK-ATTN-COUNT-4: amdgpu.mfma 32x32x8 {{.*}} : vector<4xf16>, vector<4xf16>, vector<16xf32>
// STREAMK-ATTN-NOT: amdgpu.mfma
// STREAMK-ATTN: %[[ZEROS:.*]] = vector.shuffle {{.*}} : vector<64xf32>, vector<64xf32>
// STREAMK-ATTN-NEXT: amdgpu.sched_barrier allow = <none>
// STREAMK-ATTN-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[ZEROS]],

// SHARED-ZERO-LABEL: gpu.func @attention
// SHARED-ZERO: %[[ZERO16:.*]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// SHARED-ZERO: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i32)
// SHARED-ZERO: amdgpu.mfma 32x32x8 {{.*}} + %[[ZERO16]] blgp
// SHARED-ZERO: amdgpu.sched_barrier allow = <none>
// SHARED-ZERO-NEXT: %[[Z0:.*]] = amdgpu.mfma 32x32x8 %[[OPERAND:.*]] * %[[OPERAND]] + %[[ZERO16]] blgp
// SHARED-ZERO: amdgpu.mfma 32x32x8 %[[OPERAND]] * %[[OPERAND]] + %[[Z0]] blgp
// SHARED-ZERO: %[[ZEROS:.*]] = vector.shuffle {{.*}} : vector<32xf32>, vector<32xf32>
// SHARED-ZERO-NEXT: amdgpu.sched_barrier allow = <none>
// SHARED-ZERO-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[ZEROS]],
// SHARED-ZERO: amdgpu.mfma 32x32x8 {{.*}} + %[[ZERO16]] blgp

// ATTN-LABEL: gpu.func @attention
// ATTN-NOT: : vector<4xf16>, vector<4xf16>, vector<16xf32>
// ATTN: gpu.return

// WMMA-LABEL: gpu.func @matmul
// WMMA-NOT: amdgpu.mfma
// WMMA: amdgpu.wmma
