// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx950}))' --verify-diagnostics | FileCheck %s

// gfx950 reaches its full f16/bf16 rate only with the double-K
// instructions; its 160 KiB of LDS let the model take 64 elements of K per
// step (both operands K-contiguous).
// CHECK-LABEL: func.func @large_bf16
// CHECK: tessel.matmul
// CHECK-SAME: config = #tessel.config<tile = [128, 128, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">
func.func @large_bf16(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16, strided<[1, 4096]>>, %c: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>) outs(%c : memref<4096x4096xbf16>)
  return
}

// -----

// B stored K x N is loaded in K runs and kept K-contiguous in LDS where
// the K tile spans 64 bytes or more: the model then takes the same tile as
// for B stored N x K.
// CHECK-LABEL: func.func @large_bf16_nn
// CHECK: tessel.matmul
// CHECK-SAME: config = #tessel.config<tile = [128, 128, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x16_bf16">
func.func @large_bf16_nn(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16>, %c: memref<4096x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16>) outs(%c : memref<4096x4096xbf16>)
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
