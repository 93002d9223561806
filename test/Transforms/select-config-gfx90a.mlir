// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx90a}))' | FileCheck %s
// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx90a}))' | tesselc --chip=gfx90a --emit=report - | FileCheck %s --check-prefix=SPILLS

// On gfx90a a head-dim-64 kernel with a left window edge (masked loops on
// both sides of the main one) takes 32-key blocks: with 64 keys it spills
// 30 SGPRs. A causal kernel (no left edge) keeps 64, with K and V^T
// double-buffered, the scores ahead and the key loop unrolled by two
// (chooseAttentionUnroll; f16 83.7 -> 90.9 %, bf16 80.4 -> 89.9 % by the
// model). None spills.
// CHECK-LABEL: func.func @attention_d64_window
// CHECK: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>, window
// CHECK-LABEL: func.func @attention_d64_causal
// CHECK: config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, unrolled>
// CHECK-LABEL: func.func @attention_d64_causal_bf16
// CHECK: config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16", scores_ahead, unrolled>
// SPILLS: kernel attention_d64_window
// SPILLS: VGPR spills 0
// SPILLS-NEXT: SGPR spills 0
// SPILLS: kernel attention_d64_causal
// SPILLS: VGPR spills 0
// SPILLS-NEXT: SGPR spills 0
// SPILLS: kernel attention_d64_causal_bf16
// SPILLS: VGPR spills 0
// SPILLS-NEXT: SGPR spills 0
func.func @attention_d64_window(%q: memref<2x16x4096x64xf16>, %k: memref<2x16x4096x64xf16>, %v: memref<2x16x4096x64xf16>, %o: memref<2x16x4096x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>) outs(%o : memref<2x16x4096x64xf16>) {window = array<i64: 1024, 0>}
  return
}
func.func @attention_d64_causal(%q: memref<2x16x4096x64xf16>, %k: memref<2x16x4096x64xf16>, %v: memref<2x16x4096x64xf16>, %o: memref<2x16x4096x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>) outs(%o : memref<2x16x4096x64xf16>) {causal}
  return
}
func.func @attention_d64_causal_bf16(%q: memref<2x16x4096x64xbf16>, %k: memref<2x16x4096x64xbf16>, %v: memref<2x16x4096x64xbf16>, %o: memref<2x16x4096x64xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x64xbf16>, memref<2x16x4096x64xbf16>, memref<2x16x4096x64xbf16>) outs(%o : memref<2x16x4096x64xbf16>) {causal}
  return
}
