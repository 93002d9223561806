// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(tessel-tile)' | FileCheck %s

// V^T ([head dims, keys]) is loaded with a run of head dims and a run of
// keys per lane, so that its LDS copy keeps the keys contiguous. The key
// run is the 4 keys the second product reads per lane, also for gfx950's
// v_mfma_f32_32x32x16_f16 (8 per lane), and the four waves cover the key
// block exactly once: 16-byte loads (8 head dims) for 64-key blocks, 8-byte
// ones for 32-key blocks at head dim 128.

// CHECK-DAG: #[[$V64:blocked[0-9]*]] = #tessel.blocked<sizePerThread = [8, 4], threadsPerWave = [16, 4], waves = [1, 4], order = [0, 1]>
// CHECK-LABEL: func.func @keys_64
// CHECK: tessel.load {{.*}} -> tensor<128x64xf16, #[[$V64]]>
func.func @keys_64(%q: memref<1x1x128x128xf16>, %k: memref<1x1x128x128xf16>, %v: memref<1x1x128x128xf16>, %o: memref<1x1x128x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x1x128x128xf16>, memref<1x1x128x128xf16>, memref<1x1x128x128xf16>) outs(%o : memref<1x1x128x128xf16>) {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x16_f16">}
  return
}

// -----

// CHECK-DAG: #[[$V32:blocked[0-9]*]] = #tessel.blocked<sizePerThread = [4, 4], threadsPerWave = [32, 2], waves = [1, 4], order = [0, 1]>
// CHECK-LABEL: func.func @keys_32
// CHECK: tessel.load {{.*}} -> tensor<128x32xf16, #[[$V32]]>
func.func @keys_32(%q: memref<1x1x128x128xf16>, %k: memref<1x1x128x128xf16>, %v: memref<1x1x128x128xf16>, %o: memref<1x1x128x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x1x128x128xf16>, memref<1x1x128x128xf16>, memref<1x1x128x128xf16>) outs(%o : memref<1x1x128x128xf16>) {causal, config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}
