// The pipelined K loop's scheduling groups: each step (unrolled by two, so
// two steps per iteration, each after its amdgpu.sched_barrier) asks the
// backend to put memory instructions after its MFMAs (mask 8): the 4 global
// loads two steps ahead first (mask 32: they write the other step's
// registers), then the 4 LDS stores of the next step (512), then its 8 LDS
// reads (256), after the barrier the stores precede. In a workgroup of four
// waves (one per SIMD) the 16 fit two per MFMA into the first 8 of the
// step's 16 MFMAs, and the last 8 carry none.
//
// RUN: tessel-gen matmul -m 256 -n 256 -k 256 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s
//
// A workgroup of eight waves runs the two waves of each SIMD in phase: its
// steps keep one memory instruction per MFMA (here 20 over 32 MFMAs:
// 4 stores, 4 global loads, 12 LDS reads; rolled loop, stores first).
// RUN: tessel-gen matmul -m 512 -n 512 -k 256 -t bf16 --transpose-b --config='#tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=EIGHT
//
// Attention's first product (S^T = K Q^T, Q^T in registers for the whole
// loop) on gfx942's 8-deep instructions asks for two LDS reads of K before
// its first MFMA, so each MFMA's operand is read two MFMAs ahead; its second
// product (P computed in the loop) and gfx950's 16-deep instructions keep
// one read per MFMA.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=ATTN942
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}),tessel-tile,func.func(tessel-select-mfma{chip=gfx950},tessel-promote-lds{chip=gfx950},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx950})' | FileCheck %s --check-prefix=ATTN950
//
// A loop without the pipeline's scheduling barriers (attention's) keeps one
// LDS read per MFMA and no other groups.
// RUN: tessel-opt %S/lower-to-gpu-in-bounds.mlir --tessel-lower-to-gpu="chip=gfx942" | FileCheck %s --check-prefix=ROLLED

// CHECK-LABEL: gpu.func @matmul
// CHECK: scf.for
// CHECK: amdgpu.sched_barrier allow = <none>
// CHECK-NOT: rocdl.sched.group.barrier
// CHECK: gpu.barrier
// CHECK-COUNT-16: amdgpu.mfma 32x32x8
// CHECK-NOT: amdgpu.mfma
// CHECK: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 32, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 32, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 512, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 512, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 256, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 256, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 256, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 256, 2, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NEXT: rocdl.sched.group.barrier 8, 1, 0
// CHECK-NOT: rocdl.sched.group.barrier 256
// CHECK-NOT: rocdl.sched.group.barrier 512
// CHECK-NOT: rocdl.sched.group.barrier 32
// CHECK: amdgpu.sched_barrier allow = <none>

// EIGHT-LABEL: gpu.func @matmul
// EIGHT: scf.for
// EIGHT-COUNT-32: amdgpu.mfma 32x32x8
// EIGHT-NOT: amdgpu.mfma
// EIGHT-COUNT-4: rocdl.sched.group.barrier 512, 1, 0
// EIGHT-COUNT-4: rocdl.sched.group.barrier 32, 1, 0
// EIGHT-COUNT-12: rocdl.sched.group.barrier 256, 1, 0
// EIGHT-COUNT-12: rocdl.sched.group.barrier 8, 1, 0
// EIGHT-NOT: rocdl.sched.group.barrier {{[0-9]+}}, 2, 0
// EIGHT: scf.yield

// ROLLED-LABEL: gpu.func @matmul
// ROLLED: scf.for
// ROLLED-NOT: amdgpu.sched_barrier
// ROLLED: amdgpu.mfma
// ROLLED-COUNT-4: rocdl.sched.group.barrier 8, 1, 0
// ROLLED-NOT: rocdl.sched.group.barrier 512
// ROLLED-NOT: rocdl.sched.group.barrier 32
// ROLLED: scf.yield

// ATTN942-LABEL: gpu.func @attention
// ATTN942: scf.for
// ATTN942-COUNT-8: amdgpu.mfma 32x32x8
// ATTN942-NOT: amdgpu.mfma
// ATTN942: rocdl.sched.group.barrier 256, 2, 0
// ATTN942-NEXT: rocdl.sched.group.barrier 8, 1, 0
// ATTN942-NEXT: rocdl.sched.group.barrier 256, 1, 0
// ATTN942: amdgpu.mfma 32x32x8
// ATTN942-NOT: rocdl.sched.group.barrier 256, 2, 0
// ATTN942: rocdl.sched.group.barrier 8, 1, 0
// ATTN942-NEXT: rocdl.sched.group.barrier 256, 1, 0
// ATTN942-NOT: rocdl.sched.group.barrier 256, 2, 0
// ATTN942: scf.yield

// ATTN950-LABEL: gpu.func @attention
// ATTN950-NOT: rocdl.sched.group.barrier 256, 2, 0
// ATTN950: rocdl.sched.group.barrier 8, 1, 0
// ATTN950-NOT: rocdl.sched.group.barrier 256, 2, 0
// ATTN950: gpu.return
