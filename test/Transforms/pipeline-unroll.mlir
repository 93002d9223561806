// The pipelined K loop is unrolled by two when both steps' operand
// registers and in-flight tiles fit beside the accumulators in 256
// registers per lane (two waves per SIMD); otherwise it stays rolled and
// copies the next step's registers each iteration.

// 128x256x16 bf16 tiles on 1x4 waves: 128 accumulator registers per lane
// and 36 per step: unrolled, two dots per iteration.
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 256, 16], waves = [1, 4], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=UNROLLED
// UNROLLED-LABEL: func.func @matmul
// UNROLLED:       scf.for
// UNROLLED:       amdgpu.sched_barrier
// UNROLLED:       tessel.dot
// UNROLLED:       amdgpu.sched_barrier
// UNROLLED:       tessel.dot
// UNROLLED:       scf.yield

// Canonicalized, the unrolled loop's slots are constants: each half writes
// and reads its own slot, whose addresses the backend then computes once
// (251 steps: the odd last one, after the loop, writes slot 1 as well).
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4016 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 256, 16], waves = [1, 4], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline --canonicalize | FileCheck %s --check-prefix=SLOTS
// SLOTS-LABEL: func.func @matmul
// SLOTS:       scf.for {{.*}} -> (tensor<128x256xf32, #mma>, {{.*}}, tensor<16x256xbf16, #blocked1>) {
// SLOTS-NOT:   arith.remui
// SLOTS:       tessel.local_store %{{.*}}, %{{.*}}[%c1]
// SLOTS:       tessel.local_load %{{.*}}[%c1]
// SLOTS:       tessel.local_store %{{.*}}, %{{.*}}[%c0]
// SLOTS:       tessel.local_load %{{.*}}[%c0]
// SLOTS:       scf.yield
// SLOTS:       tessel.local_store %{{.*}}, %{{.*}}[%c1]

// 128x128x64 bf16 tiles on 2x2 waves (gfx950): 64 accumulator registers and
// 96 per step would need 304: one dot per iteration.
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 128, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=ROLLED
// ROLLED-LABEL: func.func @matmul
// ROLLED:       scf.for
// ROLLED:       amdgpu.sched_barrier
// ROLLED:       tessel.dot
// ROLLED-NEXT:  arith.subi
// ROLLED-NEXT:  scf.yield
// ROLLED-NOT:   tessel.dot

// Stream-K's K loops have dynamic bounds: unrolled by two, a loop for an
// odd last step follows, unless the loop is marked as always running whole
// pairs of steps (tessel.even_trip_count, stream-K's pieces in units of
// two steps where the steps per tile are even). 1024 tiles of 128 steps
// over 608 workgroups: units of two, no odd-step loop. With K = 4064 (127
// steps per tile) the units are single steps and the odd-step loop stays.
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 608>' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=EVEN
// EVEN-LABEL: func.func @matmul
// EVEN:       scf.for
// EVEN:       scf.for
// EVEN:       tessel.dot
// EVEN:       tessel.dot
// EVEN:       scf.yield
// EVEN-NOT:   tessel.dot
// EVEN:       scf.for
// EVEN-NOT:   tessel.dot
// EVEN:       return
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4064 -t bf16 --transpose-b --config='#tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 608>' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=ODD
// ODD-LABEL: func.func @matmul
// ODD:       scf.for
// ODD:       scf.for
// ODD:       tessel.dot
// ODD:       tessel.dot
// ODD:       scf.yield
// ODD:       scf.for
// ODD:       tessel.dot
// ODD:       scf.yield

// Where two steps' operand registers do not fit, a loop of 8-wave
// workgroups with at most 8 MFMAs per wave and step is unrolled all the
// same, its steps reading their operands into one set of registers
// (tessel.reads_in_place, which tessel-lower-to-gpu implements). 256x256x64
// f8 tiles on 2x4 waves (gfx950): 128 accumulator registers and 64 per step
// (48 operand, 16 tile), two dots of 8 MFMAs per iteration.
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --transpose-b --config='#tessel.config<tile = [256, 256, 64], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x64_f8f6f4">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=IN-PLACE
// IN-PLACE-LABEL: func.func @matmul
// IN-PLACE:       scf.for
// IN-PLACE:       tessel.dot
// IN-PLACE:       tessel.dot
// IN-PLACE:       scf.yield
// IN-PLACE-NEXT:  } {tessel.reads_in_place}

// Not with 16 MFMAs per step (gfx950 bf16 256x256x32 on 2x4 waves, whose
// rolled loop measured faster), nor on 4 waves, nor with a dynamic K, a
// batch or split-K's per-split bounds: rolled, one dot per iteration, no
// mark.
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --config='#tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=NOT-IN-PLACE
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --transpose-b --config='#tessel.config<tile = [128, 128, 128], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x64_f8f6f4">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=NOT-IN-PLACE
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --transpose-b --dynamic k --config='#tessel.config<tile = [256, 256, 64], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x64_f8f6f4">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=NOT-IN-PLACE
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --transpose-b --batch 2 --config='#tessel.config<tile = [256, 256, 64], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x64_f8f6f4">' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=NOT-IN-PLACE
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --transpose-b --config='#tessel.config<tile = [256, 256, 64], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x64_f8f6f4", splits = 2>' | tessel-opt --tessel-tile --tessel-select-mfma=chip=gfx950 --tessel-promote-lds=chip=gfx950 --tessel-pipeline | FileCheck %s --check-prefix=NOT-IN-PLACE
// NOT-IN-PLACE-LABEL: func.func @matmul
// NOT-IN-PLACE:       scf.for
// NOT-IN-PLACE:       tessel.dot
// NOT-IN-PLACE-NOT:   tessel.dot
// NOT-IN-PLACE:       scf.yield
// NOT-IN-PLACE-NOT:   tessel.reads_in_place
// NOT-IN-PLACE:       return
