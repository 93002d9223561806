// A matmul with `direct_copies` on gfx950: promote-lds copies the in-bounds
// K-loop operands straight into LDS (COPIES), and the pipeline keeps two
// slots with no staging registers: copies of steps 0 and 1 before the
// loop, then per step a wait and a barrier, the copies of step k + 2 into
// the slot step k was read from (1 - slot), the reads of step k + 1, the
// product of step k (PIPE). Without the flag the operands keep the
// register path (REGS); with M = 4000, A's tiles are masked and only A
// keeps it (MIXED).

// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x16_bf16", direct_copies>' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 | FileCheck %s --check-prefix=COPIES
// COPIES-LABEL: func.func @matmul
// COPIES: scf.for
// COPIES-NEXT: gpu.barrier
// COPIES-NEXT: tessel.copy_to_local %arg0[{{.*}}], %{{.*}}[%{{.*}}] in_bounds : memref<4096x4096xbf16>, !tessel.lds<1 x[256, 32], bf16
// COPIES-NEXT: tessel.copy_to_local %arg1[{{.*}}], %{{.*}}[%{{.*}}] in_bounds : memref<4096x4096xbf16, strided<[1, 4096]>>, !tessel.lds<1 x[32, 256], bf16
// COPIES-NEXT: tessel.wait_copies
// COPIES-NEXT: gpu.barrier
// COPIES-NOT: tessel.load
// COPIES-NOT: tessel.local_store

// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x16_bf16", direct_copies>' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=PIPE
// PIPE-LABEL: func.func @matmul
// PIPE: tessel.copy_to_local %arg0[{{.*}}], %[[A:.*]][%[[C0:c0[_0-9]*]]] in_bounds
// PIPE: tessel.copy_to_local %arg1[{{.*}}], %[[B:.*]][%[[C0]]] in_bounds
// PIPE: tessel.copy_to_local %arg0[{{.*}}], %[[A]][%[[C1:c1[_0-9]*]]] in_bounds
// PIPE: tessel.copy_to_local %arg1[{{.*}}], %[[B]][%[[C1]]] in_bounds
// PIPE-NEXT: tessel.wait_copies
// PIPE-NEXT: gpu.barrier
// PIPE: scf.for {{.*}} iter_args({{.*}}, %[[SLOT:.*]] = %[[C1]])
// PIPE-NEXT: tessel.wait_copies
// PIPE-NEXT: gpu.barrier
// PIPE-NEXT: %[[FREE:.*]] = arith.subi %[[C1]], %[[SLOT]]
// PIPE: tessel.copy_to_local %arg0[{{.*}}], %[[A]][%[[FREE]]] in_bounds
// PIPE: tessel.copy_to_local %arg1[{{.*}}], %[[B]][%[[FREE]]] in_bounds
// PIPE-NEXT: tessel.local_load %[[A]][%[[SLOT]]]
// PIPE-NEXT: tessel.local_load %[[B]][%[[SLOT]]]
// PIPE-NEXT: tessel.dot
// PIPE: scf.yield {{.*}}, %[[FREE]] :

// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=REGS
// REGS-LABEL: func.func @matmul
// REGS-NOT: tessel.copy_to_local
// REGS: tessel.local_store
// REGS-NOT: tessel.copy_to_local

// RUN: tessel-gen matmul -m 4000 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x16_bf16", direct_copies>' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 | FileCheck %s --check-prefix=MIXED
// MIXED-LABEL: func.func @matmul
// MIXED: scf.for
// MIXED: tessel.load %arg0
// MIXED: tessel.local_store
// MIXED-NEXT: tessel.copy_to_local %arg1
// MIXED-NEXT: tessel.wait_copies
// MIXED-NEXT: gpu.barrier
