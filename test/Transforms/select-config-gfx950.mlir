// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}))' --verify-diagnostics | FileCheck %s

// gfx950 reaches its full f16/bf16 rate only with the double-K
// instructions. The model takes the 8-wave 256x256 tile (two waves per
// SIMD, each one's LDS and VALU work hidden behind the other's MFMAs) with
// 32 elements of K per step, 64 KiB of LDS for its two stages.
// CHECK-LABEL: func.func @large_bf16
// CHECK: tessel.matmul
// CHECK-SAME: config = #tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">
func.func @large_bf16(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16, strided<[1, 4096]>>, %c: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>) outs(%c : memref<4096x4096xbf16>)
  return
}

// -----

// B stored K x N stays N-contiguous in LDS and is read with transposing
// reads (ds_read_b64_tr_b16): twice the reads of B stored N x K, whose
// addresses the lowering shares two by two, so the model takes the same
// tile.
// CHECK-LABEL: func.func @large_bf16_nn
// CHECK: tessel.matmul
// CHECK-SAME: config = #tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">
func.func @large_bf16_nn(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16>, %c: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16>) outs(%c : memref<4096x4096xbf16>)
  return
}

// -----

// A residual (a C-sized epilogue operand) stays live beside the K loop: the
// 256x256 tile, at 256 registers bare, would spill (34 VGPRs measured), so
// the model does not count it as fitting and keeps the 4-wave tile.
// CHECK-LABEL: func.func @large_bf16_residual
// CHECK: tessel.matmul
// CHECK: config = #tessel.config<tile = [128, 128, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">
func.func @large_bf16_residual(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16, strided<[1, 4096]>>, %c: memref<4096x4096xbf16>, %r: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>) outs(%c : memref<4096x4096xbf16>) epilogue(%r : memref<4096x4096xbf16>) {
  ^bb0(%acc: f32, %res: bf16):
    %0 = arith.extf %res : bf16 to f32
    %1 = arith.addf %acc, %0 : f32
    %2 = arith.truncf %1 : f32 to bf16
    tessel.yield %2 : bf16
  }
  return
}

// -----

// xf32 was removed from gfx950.
func.func @xf32(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op instruction v_mfma_f32_32x32x4_xf32 is not available on gfx950}}
  tessel.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 64, 32], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x4_xf32">}
  return
}

// -----

func.func @fnuz_on_gfx950(%a: memref<64x64xf8E4M3FNUZ>, %b: memref<64x64xf8E4M3FNUZ>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op gfx950 multiplies the OCP 8-bit floats (f8E4M3FN, f8E5M2), not the FNUZ ones (f8E4M3FNUZ, f8E5M2FNUZ, gfx942)}}
  tessel.matmul ins(%a, %b : memref<64x64xf8E4M3FNUZ>, memref<64x64xf8E4M3FNUZ>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// The backward on gfx950: the f16 16x16 instruction takes K = 32.
// CHECK-LABEL: func.func @attention_grad_gfx950
// CHECK: tessel.attention_grad
// CHECK-SAME: config = #tessel.config<tile = [64, 32], waves = [4, 1], stages = 1, instr = "v_mfma_f32_16x16x32_f16">
func.func @attention_grad_gfx950(%q: memref<1x4x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>, %o: memref<1x4x?x64xf16>, %do: memref<1x4x?x64xf16>, %lse: memref<1x4x?xf32>, %dq: memref<1x4x?x64xf16>, %dk: memref<1x2x?x64xf16>, %dv: memref<1x2x?x64xf16>) {
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?xf32>) outs(%dq, %dk, %dv : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>) {causal}
  return
}

// -----

// One step of a doubled-K instruction already gives a lane 16 bytes (bf16
// 32x32x16) or 32 bytes (f8f6f4 32x32x64) of an operand: a K tile of one
// step is a valid config.
// CHECK-LABEL: func.func @one_step_k_tiles
// CHECK: tile = [256, 128, 16]
// CHECK: tile = [128, 128, 64]
func.func @one_step_k_tiles(%a: memref<256x256xbf16>, %b: memref<256x256xbf16>, %c: memref<256x256xf32>, %a8: memref<256x256xf8E4M3FN>, %b8: memref<256x256xf8E4M3FN>) {
  tessel.matmul ins(%a, %b : memref<256x256xbf16>, memref<256x256xbf16>) outs(%c : memref<256x256xf32>) {config = #tessel.config<tile = [256, 128, 16], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">}
  tessel.matmul ins(%a8, %b8 : memref<256x256xf8E4M3FN>, memref<256x256xf8E4M3FN>) outs(%c : memref<256x256xf32>) {config = #tessel.config<tile = [128, 128, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x64_f8f6f4">}
  return
}

// -----

func.func @k_below_one_step(%a: memref<64x64xf8E4M3FN>, %b: memref<64x64xf8E4M3FN>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op tile K 32 is not a multiple of 64 (one step of v_mfma_f32_32x32x64_f8f6f4)}}
  tessel.matmul ins(%a, %b : memref<64x64xf8E4M3FN>, memref<64x64xf8E4M3FN>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x64_f8f6f4">}
  return
}

// -----

// The 16x16 bf16 instruction gives 8 bytes per step: two steps.
func.func @k_below_two_steps(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) {
  // expected-error @+1 {{'tessel.matmul' op tile K 16 is not a multiple of 32 (two steps of v_mfma_f32_16x16x16_bf16: one step gives a lane 8 bytes of an operand, less than one 16-byte LDS read)}}
  tessel.matmul ins(%a, %b : memref<64x64xbf16>, memref<64x64xbf16>) outs(%c : memref<64x64xf32>) {config = #tessel.config<tile = [64, 64, 16], waves = [2, 2], stages = 2, instr = "v_mfma_f32_16x16x16_bf16">}
  return
}

// -----

// The chooser offers one-step K tiles too: with K = 16 the whole K of a
// bf16 problem is one step of the doubled-K instruction (a two-step tile of
// 32 would load a zero half).
// CHECK-LABEL: func.func @small_k_one_step
// CHECK: config = #tessel.config<tile = [32, 32, 16], waves = [1, 1], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">
func.func @small_k_one_step(%a: memref<4096x16xbf16>, %b: memref<16x4096xbf16, strided<[1, 16]>>, %c: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x16xbf16>, memref<16x4096xbf16, strided<[1, 16]>>) outs(%c : memref<4096x4096xbf16>)
  return
}

// -----

// Attention on gfx950's 16-deep instructions: at head dim 128 (f16 and
// bf16, causal or not) a grid of 256-query blocks with one for every CU
// takes the ping-pong form: 8 waves, 32-key blocks, the next block's scores
// ahead, K and V double-buffered (chooseAttentionPingPong). A smaller grid
// (8 heads: 128 workgroups for 256 CUs) shares the key blocks over one
// ping-pong workgroup per CU (stream-K; the model: 65.0 % against 61.8 %
// for the four-wave stream-K kernel); a padded head dim computed whole
// (96 as 128) takes it too (select-config-padded-ping-pong.mlir).
// CHECK-LABEL: func.func @attention_d128
// CHECK: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_bf16", scores_ahead, ping_pong>
func.func @attention_d128(%q: memref<2x16x4096x128xbf16>, %k: memref<2x16x4096x128xbf16>, %v: memref<2x16x4096x128xbf16>, %o: memref<2x16x4096x128xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x128xbf16>, memref<2x16x4096x128xbf16>, memref<2x16x4096x128xbf16>) outs(%o : memref<2x16x4096x128xbf16>)
  return
}

// CHECK-LABEL: func.func @attention_d96
// CHECK: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_f16", scores_ahead, ping_pong>
func.func @attention_d96(%q: memref<2x16x4096x96xf16>, %k: memref<2x16x4096x96xf16>, %v: memref<2x16x4096x96xf16>, %o: memref<2x16x4096x96xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x96xf16>, memref<2x16x4096x96xf16>, memref<2x16x4096x96xf16>) outs(%o : memref<2x16x4096x96xf16>)
  return
}

// CHECK-LABEL: func.func @attention_d128_causal
// CHECK: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_f16", scores_ahead, ping_pong>
func.func @attention_d128_causal(%q: memref<2x16x4096x128xf16>, %k: memref<2x16x4096x128xf16>, %v: memref<2x16x4096x128xf16>, %o: memref<2x16x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>) outs(%o : memref<2x16x4096x128xf16>) {causal}
  return
}

// CHECK-LABEL: func.func @attention_d128_small_grid
// CHECK: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_f16", stream_k = 256, scores_ahead, ping_pong>
func.func @attention_d128_small_grid(%q: memref<1x8x4096x128xf16>, %k: memref<1x8x4096x128xf16>, %v: memref<1x8x4096x128xf16>, %o: memref<1x8x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x8x4096x128xf16>, memref<1x8x4096x128xf16>, memref<1x8x4096x128xf16>) outs(%o : memref<1x8x4096x128xf16>)
  return
}
