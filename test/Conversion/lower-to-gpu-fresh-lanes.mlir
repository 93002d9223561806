// A loop marked tessel.fresh_lanes (stream-K attention's merges, after the
// loop over query blocks) reads the lane and wave ids again right before
// it: the lane from the hardware's lane count (gpu.lane_id, v_mbcnt), which
// LLVM cannot prove equal to the entry's thread id modulo 64, and the wave
// from the thread id less that lane. Its lane coordinates are computed
// there from them, so neither MLIR's nor LLVM's CSE merges them with the
// entry's, which would keep them live (or spilled: 12-16 VGPRs in gfx942's
// causal head-dim-128 kernels) across the key loops.
//
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 512 --seq-kv 512 -d 128 -t bf16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 3, scores_ahead>' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s

// CHECK-LABEL: gpu.func @attention
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[LANE0:[0-9]+]] = arith.remui %[[TID]], %c64 : index
// CHECK-NEXT: %[[WAVE0:[0-9]+]] = arith.divui %[[TID]], %c64 : index
// CHECK-NOT: gpu.lane_id
// The loop over query blocks.
// CHECK: scf.for {{.*}} -> (i32) : i32 {
// CHECK-NOT: gpu.lane_id
// CHECK: } {loop_annotation =
// CHECK-NOT: scf.for
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[LANE:.*]] = gpu.lane_id
// CHECK-NEXT: %[[START:.*]] = arith.subi %[[T]], %[[LANE]] : index
// CHECK-NEXT: %{{.*}} = arith.divui %[[START]], %c64 : index
// CHECK: %{{.*}} = arith.shrui %[[LANE]], %{{.*}} : index
// The merges use none of the entry's ids.
// CHECK-NOT: %[[LANE0]]{{[^0-9_]}}
// CHECK-NOT: %[[WAVE0]]{{[^0-9_]}}
// CHECK: scf.for %{{.*}} = %c0_i32 to %c2_i32 step %c1_i32 : i32 {
// CHECK-NOT: %[[LANE0]]{{[^0-9_]}}
// CHECK-NOT: %[[WAVE0]]{{[^0-9_]}}
// CHECK: gpu.return
