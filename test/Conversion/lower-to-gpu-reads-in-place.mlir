// A K loop marked tessel.reads_in_place (unrolled by two, one set of
// operand registers for both steps) is lowered with each step's schedule
// fixed: the MFMAs K group by K group, the operand with fewer blocks (B's
// two 32-column blocks of the wave's 128x64 share of C) outermost; the 4
// global loads two steps ahead and then the 4 LDS stores after the MFMAs of
// the step's first half, two per MFMA, the barrier behind them; each of the
// next step's 12 LDS reads after the last MFMA that reads the registers it
// fills (B's first block after MFMA 4, A's blocks after MFMAs 5-8, B's
// second block after MFMA 8). A scheduling barrier between MFMAs lets only
// ALU instructions cross (mask 0x406 = 1030): no sched_group_barrier.
//
// RUN: tessel-gen matmul -m 256 -n 256 -k 512 -t f8E4M3FN --transpose-b --config='#tessel.config<tile = [256, 256, 64], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x64_f8f6f4">' | tessel-opt --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}),tessel-tile,func.func(tessel-select-mfma{chip=gfx950},tessel-promote-lds{chip=gfx950},tessel-pipeline,canonicalize,cse),tessel-lower-to-gpu{chip=gfx950})' | FileCheck %s

// CHECK-LABEL: gpu.func @matmul
// CHECK:       scf.for
// CHECK-NOT:   rocdl.sched.group.barrier
// CHECK:       amdgpu.sched_barrier allow = <none>
// CHECK-NOT:   vector.load {{.*}}workgroup
// CHECK:       amdgpu.mfma 32x32x64
// CHECK-COUNT-2: amdgpu.raw_buffer_load %arg0
// CHECK:       rocdl.sched.barrier 1030
// CHECK-NEXT:  amdgpu.mfma 32x32x64
// CHECK-COUNT-2: amdgpu.raw_buffer_load %transpose
// CHECK:       rocdl.sched.barrier 1030
// CHECK-NEXT:  amdgpu.mfma
// CHECK-COUNT-2: vector.store {{.*}} memref<32768xf8E4M3FN, #gpu.address_space<workgroup>>
// CHECK:       rocdl.sched.barrier 1030
// CHECK-NEXT:  amdgpu.mfma
// CHECK-NOT:   vector.load {{.*}}workgroup
// CHECK-COUNT-2: vector.store {{.*}} memref<32768xf8E4M3FN, #gpu.address_space<workgroup>>
// CHECK-NOT:   vector.load {{.*}}workgroup
// CHECK:       gpu.barrier
// CHECK-COUNT-2: vector.load {{.*}} #gpu.address_space<workgroup>>, vector<16xf8E4M3FN>
// CHECK:       rocdl.sched.barrier 1030
// CHECK-NEXT:  amdgpu.mfma
// CHECK-COUNT-2: vector.load {{.*}} #gpu.address_space<workgroup>>, vector<16xf8E4M3FN>
// CHECK:       rocdl.sched.barrier 1030
// CHECK-NEXT:  amdgpu.mfma
// CHECK-COUNT-2: vector.load {{.*}} #gpu.address_space<workgroup>>, vector<16xf8E4M3FN>
// CHECK:       rocdl.sched.barrier 1030
// CHECK-NEXT:  amdgpu.mfma
// CHECK-COUNT-2: vector.load {{.*}} #gpu.address_space<workgroup>>, vector<16xf8E4M3FN>
// CHECK:       rocdl.sched.barrier 1030
// CHECK-NEXT:  amdgpu.mfma
// CHECK-COUNT-4: vector.load {{.*}} #gpu.address_space<workgroup>>, vector<16xf8E4M3FN>
// The second step of the iteration, the same way.
// CHECK:       amdgpu.sched_barrier allow = <none>
// CHECK-NOT:   vector.load {{.*}}workgroup
// CHECK:       amdgpu.mfma
// CHECK-COUNT-2: amdgpu.raw_buffer_load %arg0
// CHECK-COUNT-7: rocdl.sched.barrier 1030
// CHECK:       scf.yield
// CHECK-NOT:   rocdl.sched.group.barrier
// CHECK:       gpu.return
