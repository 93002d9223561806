// tessel-pipeline pipelines an attention key loop whose loads are masked
// along a padded head dim (not in_bounds): the masks keep every access in
// the arrays wherever a prefetched block lands. Its LDS buffers take two
// slots (stages = 3). Head dim 80 (three chunks of 32, the last partly
// past the head dim) and 112 causal (padded to 128 whole).
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 80 -t f16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=CHUNKS
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 112 -t bf16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=WHOLE
// Head dim 200 (seven chunks, 112 accumulator registers a lane): pipelined
// without masks; with the causal mask's loops beside it the loop keeps its
// own loads (its prefetched tiles spilled), one slot each.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 200 -t bf16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=WIDE
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 200 -t bf16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 --tessel-select-mfma=chip=gfx942 --tessel-promote-lds=chip=gfx942 --tessel-pipeline | FileCheck %s --check-prefix=WIDE-MASKED

// CHUNKS-LABEL: func.func @attention
// CHUNKS-COUNT-6: tessel.local_alloc {{.*}} : !tessel.lds<2 x[32, 32], f16
// CHUNKS-NOT: !tessel.lds<1 x
// CHUNKS: scf.for
// CHUNKS: tessel.load %arg1{{.*}} : memref<1x2x256x80xf16> -> tensor<32x32xf16
// CHUNKS: return

// WHOLE-LABEL: func.func @attention
// WHOLE-COUNT-2: tessel.local_alloc {{.*}} : !tessel.lds<2 x[
// WHOLE-NOT: !tessel.lds<1 x
// WHOLE: return

// WIDE-LABEL: func.func @attention
// WIDE-COUNT-14: tessel.local_alloc {{.*}} : !tessel.lds<2 x[32, 32], bf16
// WIDE-NOT: !tessel.lds<1 x
// WIDE: return

// WIDE-MASKED-LABEL: func.func @attention
// WIDE-MASKED-NOT: !tessel.lds<2 x
// WIDE-MASKED: tessel.local_alloc {{.*}} : !tessel.lds<1 x[32, 32], bf16
// WIDE-MASKED-NOT: !tessel.lds<2 x
// WIDE-MASKED: return
