// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}))' | FileCheck %s
// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}))' | FileCheck %s --check-prefix=GFX942

// gfx950's 16-deep instructions take the ping-pong form for head dims the
// kernel pads and computes whole (chooseAttentionPingPong): 96 and 112
// (padded to 128) without masks, 112 causal (128 whole), 48 causal (64);
// not 96 causal (chunks of 32) nor 48 without masks, where the four-wave
// kernels predict faster. gfx942's 8-deep ones keep four waves.

// CHECK-LABEL: func.func @d96
// CHECK: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_f16", scores_ahead, ping_pong>
// GFX942-LABEL: func.func @d96
// GFX942-NOT: ping_pong
// GFX942: return
func.func @d96(%q: memref<2x16x4096x96xf16>, %k: memref<2x16x4096x96xf16>, %v: memref<2x16x4096x96xf16>, %o: memref<2x16x4096x96xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x96xf16>, memref<2x16x4096x96xf16>, memref<2x16x4096x96xf16>) outs(%o : memref<2x16x4096x96xf16>)
  return
}

// -----

// CHECK-LABEL: func.func @d112_causal
// CHECK: config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 4, instr = "v_mfma_f32_32x32x16_bf16", scores_ahead, ping_pong>
func.func @d112_causal(%q: memref<2x16x4096x112xbf16>, %k: memref<2x16x4096x112xbf16>, %v: memref<2x16x4096x112xbf16>, %o: memref<2x16x4096x112xbf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x112xbf16>, memref<2x16x4096x112xbf16>, memref<2x16x4096x112xbf16>) outs(%o : memref<2x16x4096x112xbf16>) {causal}
  return
}

// -----

// CHECK-LABEL: func.func @d48_causal
// CHECK: config = #tessel.config<tile = [256, 64], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x16_f16", scores_ahead, ping_pong>
func.func @d48_causal(%q: memref<2x16x4096x48xf16>, %k: memref<2x16x4096x48xf16>, %v: memref<2x16x4096x48xf16>, %o: memref<2x16x4096x48xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x48xf16>, memref<2x16x4096x48xf16>, memref<2x16x4096x48xf16>) outs(%o : memref<2x16x4096x48xf16>) {causal}
  return
}

// -----

// CHECK-LABEL: func.func @d96_causal
// CHECK-NOT: ping_pong
// CHECK: return
func.func @d96_causal(%q: memref<2x16x4096x96xf16>, %k: memref<2x16x4096x96xf16>, %v: memref<2x16x4096x96xf16>, %o: memref<2x16x4096x96xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x96xf16>, memref<2x16x4096x96xf16>, memref<2x16x4096x96xf16>) outs(%o : memref<2x16x4096x96xf16>) {causal}
  return
}

// -----

// CHECK-LABEL: func.func @d48
// CHECK-NOT: ping_pong
// CHECK: return
func.func @d48(%q: memref<2x16x4096x48xf16>, %k: memref<2x16x4096x48xf16>, %v: memref<2x16x4096x48xf16>, %o: memref<2x16x4096x48xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x48xf16>, memref<2x16x4096x48xf16>, memref<2x16x4096x48xf16>) outs(%o : memref<2x16x4096x48xf16>)
  return
}
