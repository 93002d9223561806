// The code generator's loop strength reduction runs for a gpu.module unless
// every kernel in it is marked tessel.skip_loop_strength_reduction, which
// the lowering puts on matmul kernels: their K loops step their buffer
// offsets themselves, the pass changed nothing their speed depends on and
// took about a sixth of their code generation time (docs/performance.md,
// "JIT compile latency"). Attention kernels keep it.
//
// RUN: tesselc %s --chip=gfx942 --emit=isa | FileCheck %s
// RUN: tessel-gen matmul -m 256 -n 256 -k 256 -t bf16 --transpose-b | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=MATMUL
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 256 --seq-kv 256 -d 64 -t f16 | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile,func.func(tessel-select-mfma{chip=gfx942},tessel-promote-lds{chip=gfx942},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx942})' | FileCheck %s --check-prefix=ATTENTION

// MATMUL-LABEL: gpu.func @matmul
// MATMUL-SAME: tessel.skip_loop_strength_reduction

// ATTENTION-LABEL: gpu.func @attention
// ATTENTION-NOT: tessel.skip_loop_strength_reduction

// With the pass, the loop steps the load's address by the row's bytes.
// CHECK-LABEL: reduced_sum:
// CHECK: [[LOOP:.LBB[0-9_]+]]:
// CHECK-NEXT: global_load_dword
// CHECK-NOT: s_mul_i32
// CHECK-NOT: v_mad_u64_u32
// CHECK: s_cbranch_scc1 [[LOOP]]

// Without it, every iteration multiplies the row index by the row's bytes.
// CHECK-LABEL: unreduced_sum:
// CHECK: [[LOOP:.LBB[0-9_]+]]:
// CHECK-NEXT: v_mad_u64_u32
// CHECK-NEXT: s_mul_i32 s{{[0-9]+}}, s{{[0-9]+}}, 0x180
// CHECK: global_load_dword
// CHECK: s_cbranch_scc1 [[LOOP]]

gpu.module @reduced {
  gpu.func @reduced_sum(%x: memref<?xf32>, %out: memref<64xf32>,
                        %rows: index) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %lane = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c96 = arith.constant 96 : index
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %row = %c0 to %rows step %c1 iter_args(%acc = %zero) -> f32 {
      %start = arith.muli %row, %c96 : index
      %i = arith.addi %start, %lane : index
      %v = memref.load %x[%i] : memref<?xf32>
      %next = arith.addf %acc, %v : f32
      scf.yield %next : f32
    }
    memref.store %sum, %out[%lane] : memref<64xf32>
    gpu.return
  }
}

gpu.module @unreduced {
  gpu.func @unreduced_sum(%x: memref<?xf32>, %out: memref<64xf32>,
                          %rows: index) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>,
                  tessel.skip_loop_strength_reduction} {
    %lane = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c96 = arith.constant 96 : index
    %zero = arith.constant 0.0 : f32
    %sum = scf.for %row = %c0 to %rows step %c1 iter_args(%acc = %zero) -> f32 {
      %start = arith.muli %row, %c96 : index
      %i = arith.addi %start, %lane : index
      %v = memref.load %x[%i] : memref<?xf32>
      %next = arith.addf %acc, %v : f32
      scf.yield %next : f32
    }
    memref.store %sum, %out[%lane] : memref<64xf32>
    gpu.return
  }
}
