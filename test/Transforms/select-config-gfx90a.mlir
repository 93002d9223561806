// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx90a}))' | FileCheck %s
// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx90a}))' | tesselc --chip=gfx90a --emit=report - | FileCheck %s --check-prefix=SPILLS

// On gfx90a a head-dim-64 kernel with a left window edge (masked loops on
// both sides of the main one) takes 32-key blocks: with 64 keys it spills
// 30 SGPRs. A causal kernel (no left edge) keeps 64. Neither spills.
// CHECK-LABEL: func.func @attention_d64_window
// CHECK: config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", scores_ahead>, window
// CHECK-LABEL: func.func @attention_d64_causal
// CHECK: config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16"
// SPILLS: kernel attention_d64_window
// SPILLS: VGPR spills 0
// SPILLS-NEXT: SGPR spills 0
// SPILLS: kernel attention_d64_causal
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
