// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' --verify-diagnostics | FileCheck %s

// Large bf16: the analytical model's fastest config, with the chip's 32x32
// bf16 instruction. B is stored K x N; with a K tile of 32 it is loaded in
// K runs and kept K-contiguous in LDS (read in K runs, as if stored N x K),
// so stream-K is offered and taken as for the N x K problem below. The
// ranking itself is tested in select-config-model.mlir.
// CHECK-LABEL: func.func @large_bf16
// CHECK: tessel.matmul
// CHECK-SAME: config = #tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 608>
func.func @large_bf16(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16>, %c: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16>) outs(%c : memref<4096x4096xbf16>)
  return
}

// -----

// The same problem with B stored N x K: its 1024 tiles of 128 x 128 would
// fill 304 CUs x 2 slots 1.68 times (the last round 68 % full); stream-K
// shares their 131072 K steps evenly over one workgroup per slot instead.
// CHECK-LABEL: func.func @large_bf16_stream_k
// CHECK: tessel.matmul
// CHECK-SAME: config = #tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16", stream_k = 608>
func.func @large_bf16_stream_k(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16, strided<[1, 4096]>>, %c: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>) outs(%c : memref<4096x4096xbf16>)
  return
}

// -----

// 8192^3: 4096 tiles of 128 x 128 fill the 608 slots 6.7 times (the last
// round 74 % full). Stream-K is predicted only 4 % faster than the best
// plain config, and ranks first all the same: stream-K configs take no
// ranking margin (the ISA-level model puts this one at 97.8 % structural
// efficiency against the plain 2x4-wave config's 91.5 %).
// CHECK-LABEL: func.func @huge_bf16_stream_k
// CHECK: tessel.matmul
// CHECK-SAME: stream_k = 608
func.func @huge_bf16_stream_k(%a: memref<8192x8192xbf16>, %b: memref<8192x8192xbf16, strided<[1, 8192]>>, %c: memref<8192x8192xbf16>) {
  tessel.matmul ins(%a, %b : memref<8192x8192xbf16>, memref<8192x8192xbf16, strided<[1, 8192]>>) outs(%c : memref<8192x8192xbf16>)
  return
}

// -----

// A batch, or sizes known only at run time, never get stream-K (its shares
// of the steps and its workspace are fixed at compile time).
// CHECK-LABEL: func.func @large_bf16_batch
// CHECK: tessel.matmul
// CHECK-NOT: stream_k
// CHECK: return
func.func @large_bf16_batch(%a: memref<1x4096x4096xbf16>, %b: memref<1x4096x4096xbf16, strided<[16777216, 1, 4096]>>, %c: memref<1x4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<1x4096x4096xbf16>, memref<1x4096x4096xbf16, strided<[16777216, 1, 4096]>>) outs(%c : memref<1x4096x4096xbf16>)
  return
}

// -----

// Thin problems get 16x16 instructions and tiles small enough to spread
// the 4096 columns over many CUs; a dynamic K is planned as 4096.
// CHECK-LABEL: func.func @thin_f32
// CHECK: tessel.matmul
// CHECK-SAME: config = #tessel.config<tile = [16, 32, 32], waves = [1, 2], stages = 2, instr = "v_mfma_f32_16x16x4_f32">
func.func @thin_f32(%a: memref<16x?xf32>, %b: memref<?x4096xf32>, %c: memref<16x4096xf32>) {
  tessel.matmul ins(%a, %b : memref<16x?xf32>, memref<?x4096xf32>) outs(%c : memref<16x4096xf32>)
  return
}

// -----

// A given config without an instruction gets one; fp8 needs the chip's
// flavour (gfx942 FNUZ).
// CHECK-LABEL: func.func @fp8_given_tile
// CHECK: tessel.matmul
// CHECK-SAME: config = #tessel.config<tile = [64, 64, 128], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x16_fp8_fp8">
func.func @fp8_given_tile(%a: memref<64x128xf8E4M3FNUZ>, %b: memref<128x64xf8E4M3FNUZ>, %c: memref<64x64xf32>) {
  tessel.matmul ins(%a, %b : memref<64x128xf8E4M3FNUZ>, memref<128x64xf8E4M3FNUZ>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 64, 128], waves = [1, 1], stages = 1>}
  return
}

// -----

func.func @matmul_three_stages(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %c: memref<256x256xbf16>) {
  // expected-error @+1 {{'tessel.matmul' op a matmul's K loop pipelines at most 2 stages (two LDS slots), got stages = 3}}
  tessel.matmul ins(%a, %b : memref<256x256xbf16>, memref<256x256xbf16>) outs(%c : memref<256x256xbf16>) {config = #tessel.config<tile = [128, 128, 32], waves = [2, 2], stages = 3, instr = "v_mfma_f32_32x32x8_bf16">}
  return
}

// -----

func.func @lds_over_budget(%a: memref<1024x1024xbf16>, %b: memref<1024x1024xbf16>, %c: memref<1024x1024xbf16>) {
  // expected-error @+1 {{'tessel.matmul' op the config needs 262144 bytes of LDS, over the 65536 of gfx942}}
  tessel.matmul ins(%a, %b : memref<1024x1024xbf16>, memref<1024x1024xbf16>) outs(%c : memref<1024x1024xbf16>) {config = #tessel.config<tile = [256, 256, 256], waves = [2, 2], stages = 1, instr = "v_mfma_f32_32x32x8_bf16">}
  return
}

// -----

func.func @registers_over_budget(%a: memref<1024x1024xf32>, %b: memref<1024x1024xf32>, %c: memref<1024x1024xf32>) {
  // expected-error @+1 {{'tessel.matmul' op the config needs about 1088 VGPRs per lane (1024 for the accumulator), over the 512 of gfx942}}
  tessel.matmul ins(%a, %b : memref<1024x1024xf32>, memref<1024x1024xf32>) outs(%c : memref<1024x1024xf32>) {config = #tessel.config<tile = [256, 256, 8], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x2_f32">}
  return
}

// -----

func.func @double_k_not_on_chip(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op instruction v_mfma_f32_32x32x16_f16 is not available on gfx942}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 64, 32], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x16_f16">}
  return
}

// -----

func.func @wrong_types(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op instruction v_mfma_f32_32x32x8_bf16 multiplies bf16 by bf16, not 'f16' by 'f16'}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 64, 32], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_bf16">}
  return
}

// -----

func.func @tile_not_multiple(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op tile 64x32 is not a multiple of 32x32 instruction tiles times 1x2 waves}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 32, 32], waves = [1, 2], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

func.func @k_not_multiple(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op tile K 8 is not a multiple of 16 (two steps of v_mfma_f32_32x32x8_f16: one step gives a lane 8 bytes of an operand, less than one 16-byte LDS read)}}
  tessel.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 64, 8], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

// An f32 MFMA step gives a lane one 4-byte element: two steps, still less
// than a 16-byte read.
func.func @k_not_multiple_f32(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op tile K 2 is not a multiple of 4 (two steps of v_mfma_f32_32x32x2_f32: one step gives a lane 4 bytes of an operand, less than one 16-byte LDS read)}}
  tessel.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 64, 2], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x2_f32">}
  return
}

// -----

func.func @ocp_on_gfx942(%a: memref<64x64xf8E4M3FN>, %b: memref<64x64xf8E4M3FN>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op gfx942 multiplies the FNUZ 8-bit floats (f8E4M3FNUZ, f8E5M2FNUZ), not the OCP ones (f8E4M3FN, f8E5M2, gfx950)}}
  tessel.matmul ins(%a, %b : memref<64x64xf8E4M3FN>, memref<64x64xf8E4M3FN>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// Attention: 128-query blocks on four 32-row waves; 32 keys per step in a
// causal kernel past head dim 64 (its masked loop's registers), 64 without
// the mask. A masked kernel prefetches the next key block, and past head
// dim 64 double-buffers K and V in LDS (stages = 3: 32 KiB); its loop over
// whole blocks computes the next block's scores ahead (scores_ahead).
// CHECK-LABEL: func.func @attention_default
// CHECK: tessel.attention
// CHECK-SAME: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>
func.func @attention_default(%q: memref<2x8x1024x128xf16>, %k: memref<2x2x1024x128xf16>, %v: memref<2x2x1024x128xf16>, %o: memref<2x8x1024x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x8x1024x128xf16>, memref<2x2x1024x128xf16>, memref<2x2x1024x128xf16>) outs(%o : memref<2x8x1024x128xf16>) {causal}
  return
}

// -----

// Without the mask, at a sequence that is not whole blocks of 256 queries
// (no ping-pong form): 64-key blocks, one workgroup per query block where
// the query blocks fill the chip's rounds (4 x 32 x 31 = 3968 blocks in 7
// rounds of 304 CUs x 2: 93 %; attention-stream-k.mlir has the other
// cases). Their two LDS slots would take 64 KiB, a whole CU's: one slot.
// CHECK-LABEL: func.func @attention_default_full
// CHECK: tessel.attention
// CHECK-SAME: config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">
func.func @attention_default_full(%q: memref<4x32x3968x128xf16>, %k: memref<4x8x3968x128xf16>, %v: memref<4x8x3968x128xf16>, %o: memref<4x32x3968x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<4x32x3968x128xf16>, memref<4x8x3968x128xf16>, memref<4x8x3968x128xf16>) outs(%o : memref<4x32x3968x128xf16>)
  return
}

// -----

// In whole blocks of 256 queries, head dim 128 takes the ping-pong form
// (chooseAttentionPingPong): 8 waves, 32-key blocks, three LDS slots (4 x
// 32 x 16 = 2048 blocks in 7 rounds of 304 CUs: 96 %, one workgroup per
// block).
// CHECK-LABEL: func.func @attention_default_ping_pong
// CHECK: tessel.attention
// CHECK-SAME: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>
func.func @attention_default_ping_pong(%q: memref<4x32x4096x128xf16>, %k: memref<4x8x4096x128xf16>, %v: memref<4x8x4096x128xf16>, %o: memref<4x32x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<4x32x4096x128xf16>, memref<4x8x4096x128xf16>, memref<4x8x4096x128xf16>) outs(%o : memref<4x32x4096x128xf16>)
  return
}

// -----

// bf16 on gfx942 rounds P in software (again not whole blocks of 256
// queries): 32-key blocks, which past head dim
// 64 double-buffer K and V and compute the next block's S^T ahead, the
// loop unrolled by two (chooseAttentionUnroll: the VALU binds, and the
// unrolled loop does not copy the next S^T into the carried registers).
// CHECK-LABEL: func.func @attention_default_bf16
// CHECK: tessel.attention
// CHECK-SAME: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", scores_ahead, unrolled>
func.func @attention_default_bf16(%q: memref<4x32x3968x128xbf16>, %k: memref<4x8x3968x128xbf16>, %v: memref<4x8x3968x128xbf16>, %o: memref<4x32x3968x128xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<4x32x3968x128xbf16>, memref<4x8x3968x128xbf16>, memref<4x8x3968x128xbf16>) outs(%o : memref<4x32x3968x128xbf16>)
  return
}

// -----

// Head dim 64 with a mask: 64-key blocks and the next one prefetched; an
// f16 causal kernel takes the ping-pong form on gfx942 as bf16 does (eight
// waves of 32 queries, 256-query blocks, the grid's 512 blocks shared by
// the 304 CUs: stream-K), where it took four waves with the key loop
// unrolled until the two-slot ping-pong loop's stores moved between its
// products; a local (windowed) one keeps four waves and does not compute
// ahead (its masked loops on both sides of the main one would take 262
// VGPRs: one wave per SIMD).
// CHECK-LABEL: func.func @attention_d64_causal
// CHECK: config = #tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", stream_k = 304, scores_ahead, ping_pong>
// CHECK-LABEL: func.func @attention_d64_window
// CHECK: config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16">, window
func.func @attention_d64_causal(%q: memref<2x16x4096x64xf16>, %k: memref<2x16x4096x64xf16>, %v: memref<2x16x4096x64xf16>, %o: memref<2x16x4096x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>) outs(%o : memref<2x16x4096x64xf16>) {causal}
  return
}
func.func @attention_d64_window(%q: memref<2x16x4096x64xf16>, %k: memref<2x16x4096x64xf16>, %v: memref<2x16x4096x64xf16>, %o: memref<2x16x4096x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>) outs(%o : memref<2x16x4096x64xf16>) {window = array<i64: 256, 0>}
  return
}

// -----

func.func @attention_ping_pong_four_waves(%q: memref<1x1x256x64xf16>, %k: memref<1x1x256x64xf16>, %v: memref<1x1x256x64xf16>, %o: memref<1x1x256x64xf16>) {
  // expected-error @+1 {{'tessel.attention' op ping_pong pairs wave i with wave i + 2 on one SIMD: it takes a CDNA chip and a multiple of 8 waves, got 4 on gfx942}}
  tessel.attention ins(%q, %k, %v : memref<1x1x256x64xf16>, memref<1x1x256x64xf16>, memref<1x1x256x64xf16>) outs(%o : memref<1x1x256x64xf16>) {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>}
  return
}

// -----

func.func @attention_ping_pong_fp8(%q: memref<1x1x256x64xf8E4M3FNUZ>, %k: memref<1x1x256x64xf8E4M3FNUZ>, %v: memref<1x1x256x64xf8E4M3FNUZ>, %o: memref<1x1x256x64xbf16>, %dq: memref<1xf32>, %dk: memref<1xf32>, %dv: memref<1xf32>) {
  // expected-error @+1 {{'tessel.attention' op ping_pong takes f16 or bf16 inputs (its softmax phase rescales lazily), got 'f8E4M3FNUZ'}}
  tessel.attention ins(%q, %k, %v : memref<1x1x256x64xf8E4M3FNUZ>, memref<1x1x256x64xf8E4M3FNUZ>, memref<1x1x256x64xf8E4M3FNUZ>) outs(%o : memref<1x1x256x64xbf16>) descale(%dq, %dk, %dv : memref<1xf32>, memref<1xf32>, memref<1xf32>) {config = #tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x16_fp8_fp8", scores_ahead, ping_pong>}
  return
}

// -----

func.func @attention_waves_along_keys(%q: memref<1x1x64x64xf16>, %k: memref<1x1x64x64xf16>, %v: memref<1x1x64x64xf16>, %o: memref<1x1x64x64xf16>) {
  // expected-error @+1 {{'tessel.attention' op attention splits query rows over waves: waves must be [n, 1], got [1, 2]}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x64xf16>, memref<1x1x64x64xf16>, memref<1x1x64x64xf16>) outs(%o : memref<1x1x64x64xf16>) {config = #tessel.config<tile = [64, 64], waves = [1, 2], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

func.func @attention_blocks_over_lds(%q: memref<1x1x64x256xbf16>, %k: memref<1x1x64x256xbf16>, %v: memref<1x1x64x256xbf16>, %o: memref<1x1x64x256xbf16>) {
  // expected-error @+1 {{'tessel.attention' op the config needs 131072 bytes of LDS, over the 65536 of gfx942}}
  tessel.attention ins(%q, %k, %v : memref<1x1x64x256xbf16>, memref<1x1x64x256xbf16>, memref<1x1x64x256xbf16>) outs(%o : memref<1x1x64x256xbf16>) {config = #tessel.config<tile = [32, 128], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_bf16">}
  return
}

// -----

// stages = 3 double-buffers K and V^T: two slots of each, 64 KiB here.
func.func @attention_double_buffer_over_lds(%q: memref<1x1x128x128xf16>, %k: memref<1x1x128x128xf16>, %v: memref<1x1x128x128xf16>, %o: memref<1x1x128x128xf16>) {
  // expected-error @+1 {{'tessel.attention' op the config needs 131072 bytes of LDS, over the 65536 of gfx942}}
  tessel.attention ins(%q, %k, %v : memref<1x1x128x128xf16>, memref<1x1x128x128xf16>, memref<1x1x128x128xf16>) outs(%o : memref<1x1x128x128xf16>) {config = #tessel.config<tile = [128, 128], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

// Head dimension 256 gets 32-key blocks, double-buffered in LDS (two
// slots of K and V^T, 64 KiB: one workgroup per CU, which its registers
// allow anyway); 64 queries take two waves.
// CHECK-LABEL: func.func @attention_head_dim_256
// CHECK: tessel.attention
// CHECK-SAME: config = #tessel.config<tile = [64, 32], waves = [2, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16">
func.func @attention_head_dim_256(%q: memref<1x1x64x256xbf16>, %k: memref<1x1x64x256xbf16>, %v: memref<1x1x64x256xbf16>, %o: memref<1x1x64x256xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x1x64x256xbf16>, memref<1x1x64x256xbf16>, memref<1x1x64x256xbf16>) outs(%o : memref<1x1x64x256xbf16>)
  return
}

// -----

// Head dimension 192 computes as 256 and loads its last chunk with masks,
// which the double buffer leaves alone: the next block in registers only.
// CHECK-LABEL: func.func @attention_head_dim_192
// CHECK: tessel.attention
// CHECK-SAME: config = #tessel.config<tile = [64, 32], waves = [2, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">
func.func @attention_head_dim_192(%q: memref<1x1x64x192xbf16>, %k: memref<1x1x64x192xbf16>, %v: memref<1x1x64x192xbf16>, %o: memref<1x1x64x192xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x1x64x192xbf16>, memref<1x1x64x192xbf16>, memref<1x1x64x192xbf16>) outs(%o : memref<1x1x64x192xbf16>)
  return
}

// -----

// Decode: one query of four query heads sharing a key/value head, 1000
// keys. The four heads stack in one block of 16 rows, the 16x16
// instructions' (a one-wave workgroup: 32-key blocks; a 32-row block would
// compute twice the rows); two such workgroups would leave the chip's
// memory latency uncovered, so the decode model splits the keys 32 ways
// (a block each; the 32 partials merge in two levels, groups of 8 then
// the 4 groups, so the split after the last block walks 12 partials; the
// ISA-level model: 4.73 us against 5.55 at 16 splits, 6.56 at 8).
// CHECK-LABEL: func.func @attention_decode
// CHECK: tessel.attention
// CHECK-SAME: config = #tessel.config<tile = [16, 32], waves = [1, 1], stages = 1, instr = "v_mfma_f32_16x16x16_bf16", splits = 32>
func.func @attention_decode(%q: memref<2x4x1x128xbf16>, %k: memref<2x1x1000x128xbf16>, %v: memref<2x1x1000x128xbf16>, %o: memref<2x4x1x128xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x4x1x128xbf16>, memref<2x1x1000x128xbf16>, memref<2x1x1000x128xbf16>) outs(%o : memref<2x4x1x128xbf16>) {causal}
  return
}

// -----

// A decode batch of 64 x 8 key/value heads already puts 512 workgroups on
// the chip, close to enough in flight to reach the HBM floor: the decode
// model splits at most in two (the ISA-level model: 230.4 us whole, 230.9
// in two). 4096 keys give 64 splits a 64-key block each: 64-key blocks.
// CHECK-LABEL: func.func @attention_decode_large_batch
// CHECK: tessel.attention
// CHECK-SAME: config = #tessel.config<tile = [16, 64], waves = [1, 1], stages = 1, instr = "v_mfma_f32_16x16x16_bf16"{{(, splits = 2)?}}>
func.func @attention_decode_large_batch(%q: memref<64x32x1x128xbf16>, %k: memref<64x8x4096x128xbf16>, %v: memref<64x8x4096x128xbf16>, %o: memref<64x32x1x128xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<64x32x1x128xbf16>, memref<64x8x4096x128xbf16>, memref<64x8x4096x128xbf16>) outs(%o : memref<64x32x1x128xbf16>)
  return
}

// -----

// The attention backward: 16 owned rows per wave on the 16x16 instruction,
// four waves and 32-row steps (two waves and 16-row steps past head dim
// 128).
// CHECK-LABEL: func.func @attention_grad_default
// CHECK: tessel.attention_grad
// CHECK-SAME: config = #tessel.config<tile = [64, 32], waves = [4, 1], stages = 1, instr = "v_mfma_f32_16x16x16_f16">
func.func @attention_grad_default(%q: memref<1x4x?x128xf16>, %k: memref<1x2x?x128xf16>, %v: memref<1x2x?x128xf16>, %o: memref<1x4x?x128xf16>, %do: memref<1x4x?x128xf16>, %lse: memref<1x4x?xf32>, %dq: memref<1x4x?x128xf16>, %dk: memref<1x2x?x128xf16>, %dv: memref<1x2x?x128xf16>) {
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x?x128xf16>, memref<1x2x?x128xf16>, memref<1x2x?x128xf16>, memref<1x4x?x128xf16>, memref<1x4x?x128xf16>, memref<1x4x?xf32>) outs(%dq, %dk, %dv : memref<1x4x?x128xf16>, memref<1x2x?x128xf16>, memref<1x2x?x128xf16>) {causal}
  return
}

// -----

// CHECK-LABEL: func.func @attention_grad_head_dim_256
// CHECK: tessel.attention_grad
// CHECK-SAME: config = #tessel.config<tile = [32, 16], waves = [2, 1], stages = 1, instr = "v_mfma_f32_16x16x16_bf16">
func.func @attention_grad_head_dim_256(%q: memref<1x4x?x256xbf16>, %k: memref<1x2x?x256xbf16>, %v: memref<1x2x?x256xbf16>, %o: memref<1x4x?x256xbf16>, %do: memref<1x4x?x256xbf16>, %lse: memref<1x4x?xf32>, %dq: memref<1x4x?x256xbf16>, %dk: memref<1x2x?x256xbf16>, %dv: memref<1x2x?x256xbf16>) {
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x?x256xbf16>, memref<1x2x?x256xbf16>, memref<1x2x?x256xbf16>, memref<1x4x?x256xbf16>, memref<1x4x?x256xbf16>, memref<1x4x?xf32>) outs(%dq, %dk, %dv : memref<1x4x?x256xbf16>, memref<1x2x?x256xbf16>, memref<1x2x?x256xbf16>)
  return
}

// -----

func.func @attention_grad_tile(%q: memref<1x4x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>, %o: memref<1x4x?x64xf16>, %do: memref<1x4x?x64xf16>, %lse: memref<1x4x?xf32>, %dq: memref<1x4x?x64xf16>, %dk: memref<1x2x?x64xf16>, %dv: memref<1x2x?x64xf16>) {
  // expected-error @+1 {{tile 32x16 and head dims 64/64 must be multiples of the 16x16x16 instruction (the first over 4 waves)}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?xf32>) outs(%dq, %dk, %dv : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>) {config = #tessel.config<tile = [32, 16], waves = [4, 1], stages = 1, instr = "v_mfma_f32_16x16x16_f16">}
  return
}

// -----

func.func @attention_grad_waves(%q: memref<1x4x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>, %o: memref<1x4x?x64xf16>, %do: memref<1x4x?x64xf16>, %lse: memref<1x4x?xf32>, %dq: memref<1x4x?x64xf16>, %dk: memref<1x2x?x64xf16>, %dv: memref<1x2x?x64xf16>) {
  // expected-error @+1 {{the backward splits a workgroup's rows over waves: waves must be [n, 1], got [1, 4]}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?xf32>) outs(%dq, %dk, %dv : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>) {config = #tessel.config<tile = [64, 16], waves = [1, 4], stages = 1, instr = "v_mfma_f32_16x16x16_f16">}
  return
}

// -----

func.func @attention_grad_registers(%q: memref<1x4x?x256xf16>, %k: memref<1x2x?x256xf16>, %v: memref<1x2x?x256xf16>, %o: memref<1x4x?x256xf16>, %do: memref<1x4x?x256xf16>, %lse: memref<1x4x?xf32>, %dq: memref<1x4x?x256xf16>, %dk: memref<1x2x?x256xf16>, %dv: memref<1x2x?x256xf16>) {
  // expected-error @+1 {{head dims 256/256 need about 1536 VGPRs per lane with a 256x64 tile, over the 512 of gfx942}}
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x?x256xf16>, memref<1x2x?x256xf16>, memref<1x2x?x256xf16>, memref<1x4x?x256xf16>, memref<1x4x?x256xf16>, memref<1x4x?xf32>) outs(%dq, %dk, %dv : memref<1x4x?x256xf16>, memref<1x2x?x256xf16>, memref<1x2x?x256xf16>) {config = #tessel.config<tile = [256, 64], waves = [4, 1], stages = 1, instr = "v_mfma_f32_16x16x16_f16">}
  return
}
