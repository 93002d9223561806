// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' | FileCheck %s
// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}))' | FileCheck %s --check-prefix=GFX950
// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx90a}))' | FileCheck %s --check-prefix=GFX90A

// Stream-K attention (chooseAttentionStreamK): where one workgroup per
// query block leaves the last round of the chip's slots (two four-wave
// workgroups per CU) part full, stream_k workgroups, one per slot, share
// all query blocks' key blocks; 32-key blocks past head dim 64 and 64-key
// ones up to it, the next block prefetched (and past head dim 64 K and V
// double-buffered in LDS: stages = 3; without masks on gfx942 also the
// next block's S^T ahead, scores_ahead).

// 2 x 16 x 32 = 1024 query blocks on 304 CUs x 2 = 608 slots: 84 % of two
// rounds. In whole blocks of 256 queries gfx942 takes the ping-pong form
// (chooseAttentionPingPong: 512 blocks of 256 on 304 CUs, 84 %), with
// stream-K over one workgroup per CU. gfx950's 256 CUs take them in two
// full rounds (its kernel takes the scores ahead in 32-key blocks at head
// dim 128 too).
// CHECK-LABEL: func.func @full_d128
// CHECK: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x8_f16", stream_k = 304, scores_ahead, ping_pong>
// GFX950-LABEL: func.func @full_d128
// GFX950: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x16_f16", scores_ahead>
func.func @full_d128(%q: memref<2x16x4096x128xf16>, %k: memref<2x16x4096x128xf16>, %v: memref<2x16x4096x128xf16>, %o: memref<2x16x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>) outs(%o : memref<2x16x4096x128xf16>)
  return
}

// -----

// The four-wave form's stream-K where the sequence is not whole blocks of
// 256 queries: 2 x 16 x 31 = 992 query blocks of 128 on 608 slots (82 %
// of two rounds).
// CHECK-LABEL: func.func @full_d128_four_waves
// CHECK: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608, scores_ahead>
func.func @full_d128_four_waves(%q: memref<2x16x3968x128xf16>, %k: memref<2x16x3968x128xf16>, %v: memref<2x16x3968x128xf16>, %o: memref<2x16x3968x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x3968x128xf16>, memref<2x16x3968x128xf16>, memref<2x16x3968x128xf16>) outs(%o : memref<2x16x3968x128xf16>)
  return
}

// -----

// Causal at head dim 128 (32-key blocks): stream-K, with the next block's
// scores ahead and K and V double-buffered (its merges take lane ids of
// their own, its output accumulator is zeroed by the matrix pipe before
// each query block's key loop: no spills). At head dim 64 the four-wave
// causal kernel would spill SGPRs beside the stream-K loop's scalars: the
// causal problem takes the ping-pong form, whose 512 blocks of 256
// queries, longest first on 304 CUs, leave more than a tenth of the
// slots idle, so its workgroups share the key blocks (its masks' selects
// on the complement keep the SGPRs within bounds: 80, no spills).
// (gfx942 at head dim 128 now takes the ping-pong form there too, in
// stream-K.)
// CHECK-LABEL: func.func @causal_d128
// CHECK: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 304, scores_ahead, ping_pong>
func.func @causal_d128(%q: memref<2x16x4096x128xbf16>, %k: memref<2x16x4096x128xbf16>, %v: memref<2x16x4096x128xbf16>, %o: memref<2x16x4096x128xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x128xbf16>, memref<2x16x4096x128xbf16>, memref<2x16x4096x128xbf16>) outs(%o : memref<2x16x4096x128xbf16>) {causal}
  return
}

// -----

// CHECK-LABEL: func.func @causal_d64
// CHECK: config = #tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 304, scores_ahead, ping_pong>
func.func @causal_d64(%q: memref<2x16x4096x64xbf16>, %k: memref<2x16x4096x64xbf16>, %v: memref<2x16x4096x64xbf16>, %o: memref<2x16x4096x64xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x64xbf16>, memref<2x16x4096x64xbf16>, memref<2x16x4096x64xbf16>) outs(%o : memref<2x16x4096x64xbf16>) {causal}
  return
}

// -----

// Without a mask at head dim 64, the ping-pong form (chooseAttentionPingPong)
// with one workgroup per CU: 512 blocks of 256 queries would leave the
// second round on 304 CUs a sixth full.
// CHECK-LABEL: func.func @full_d64
// CHECK: config = #tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 304, scores_ahead, ping_pong>
func.func @full_d64(%q: memref<2x16x4096x64xbf16>, %k: memref<2x16x4096x64xbf16>, %v: memref<2x16x4096x64xbf16>, %o: memref<2x16x4096x64xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x64xbf16>, memref<2x16x4096x64xbf16>, memref<2x16x4096x64xbf16>) outs(%o : memref<2x16x4096x64xbf16>)
  return
}

// -----

// A small grid (2 x 8 x 8 = 128 query blocks) with enough key blocks for
// every slot (4096 steps, at least 4 per workgroup) takes stream-K too
// (the ping-pong form's, one workgroup per CU).
// CHECK-LABEL: func.func @small_grid
// CHECK: stream_k = 304
func.func @small_grid(%q: memref<2x8x1024x128xf16>, %k: memref<2x2x1024x128xf16>, %v: memref<2x2x1024x128xf16>, %o: memref<2x8x1024x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x8x1024x128xf16>, memref<2x2x1024x128xf16>, memref<2x2x1024x128xf16>) outs(%o : memref<2x8x1024x128xf16>)
  return
}

// -----

// Too few key blocks to share (causal 2 x 8 x 1024: 576 steps for 608
// workgroups), a sliding window (stream-K takes no window), a query
// sequence that is not a whole number of blocks with a causal mask, and
// dynamic lengths keep one workgroup per query block.
// CHECK-LABEL: func.func @few_steps
// CHECK-NOT: stream_k
func.func @few_steps(%q: memref<2x8x1024x128xf16>, %k: memref<2x2x1024x128xf16>, %v: memref<2x2x1024x128xf16>, %o: memref<2x8x1024x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x8x1024x128xf16>, memref<2x2x1024x128xf16>, memref<2x2x1024x128xf16>) outs(%o : memref<2x8x1024x128xf16>) {causal}
  return
}

// -----

// CHECK-LABEL: func.func @window
// CHECK-NOT: stream_k
func.func @window(%q: memref<2x16x4096x128xf16>, %k: memref<2x16x4096x128xf16>, %v: memref<2x16x4096x128xf16>, %o: memref<2x16x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>) outs(%o : memref<2x16x4096x128xf16>) {window = array<i64: 256, 0>}
  return
}

// -----

// CHECK-LABEL: func.func @causal_ragged
// CHECK-NOT: stream_k
func.func @causal_ragged(%q: memref<2x16x4000x128xf16>, %k: memref<2x16x4000x128xf16>, %v: memref<2x16x4000x128xf16>, %o: memref<2x16x4000x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4000x128xf16>, memref<2x16x4000x128xf16>, memref<2x16x4000x128xf16>) outs(%o : memref<2x16x4000x128xf16>) {causal}
  return
}

// -----

// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: stream_k
func.func @dynamic(%q: memref<2x16x?x128xf16>, %k: memref<2x16x?x128xf16>, %v: memref<2x16x?x128xf16>, %o: memref<2x16x?x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x?x128xf16>, memref<2x16x?x128xf16>, memref<2x16x?x128xf16>) outs(%o : memref<2x16x?x128xf16>)
  return
}

// -----

// Where the merges' workspace traffic costs more than the idle slots
// (causal 2 x 16 x 1024: 256 query blocks on 608 slots, but 80 MB of
// workspace against 7 us of matrix work), one workgroup per query block.
// CHECK-LABEL: func.func @merges_cost_more
// CHECK-NOT: stream_k
// CHECK: return
func.func @merges_cost_more(%q: memref<2x16x1024x128xf16>, %k: memref<2x16x1024x128xf16>, %v: memref<2x16x1024x128xf16>, %o: memref<2x16x1024x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x1024x128xf16>, memref<2x16x1024x128xf16>, memref<2x16x1024x128xf16>) outs(%o : memref<2x16x1024x128xf16>) {causal}
  return
}

// -----

// Keys ending in a partial block (4095 = 127 x 32 + 31): the masked tail
// loop in every stream-K tile would spill, so the problem keeps the
// default config, one workgroup per query block.
// CHECK-LABEL: func.func @key_tail
// CHECK: config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">
// CHECK-NOT: stream_k
// GFX950-LABEL: func.func @key_tail
// GFX950-NOT: stream_k
func.func @key_tail(%q: memref<2x16x4096x128xf16>, %k: memref<2x16x4095x128xf16>, %v: memref<2x16x4095x128xf16>, %o: memref<2x16x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x128xf16>, memref<2x16x4095x128xf16>, memref<2x16x4095x128xf16>) outs(%o : memref<2x16x4096x128xf16>)
  return
}

// -----

// gfx90a, causal at head dim 128: 1 x 4 x 32 = 128 query blocks on 110
// CUs x 2 = 220 slots (58 % of one round): stream-K with the scores ahead,
// as on gfx942 (no spills since the merges take lane ids of their own).
// CHECK-LABEL: func.func @causal_d128_gfx90a
// GFX950-LABEL: func.func @causal_d128_gfx90a
// GFX90A-LABEL: func.func @causal_d128_gfx90a
// GFX90A: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", stream_k = 220, scores_ahead>
func.func @causal_d128_gfx90a(%q: memref<1x4x4096x128xf16>, %k: memref<1x4x4096x128xf16>, %v: memref<1x4x4096x128xf16>, %o: memref<1x4x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x4x4096x128xf16>, memref<1x4x4096x128xf16>, memref<1x4x4096x128xf16>) outs(%o : memref<1x4x4096x128xf16>) {causal}
  return
}

// -----

// gfx950 without masks at head dim 128: 1 x 4 x 16 = 64 blocks of 256
// queries on 256 CUs: the ping-pong form in stream-K, one workgroup per
// CU (the model: 23.5 us against 24.7 us for the four-wave stream-K
// kernel on 512 slots).
// CHECK-LABEL: func.func @full_d128_few_heads
// GFX90A-LABEL: func.func @full_d128_few_heads
// GFX950-LABEL: func.func @full_d128_few_heads
// GFX950: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_f16", stream_k = 256, scores_ahead, ping_pong>
func.func @full_d128_few_heads(%q: memref<1x4x4096x128xf16>, %k: memref<1x4x4096x128xf16>, %v: memref<1x4x4096x128xf16>, %o: memref<1x4x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x4x4096x128xf16>, memref<1x4x4096x128xf16>, memref<1x4x4096x128xf16>) outs(%o : memref<1x4x4096x128xf16>)
  return
}
