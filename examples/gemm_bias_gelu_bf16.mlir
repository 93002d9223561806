// A problem-level (L0) GEMM with a fused epilogue, as tessel-gen writes it:
// C = gelu(A x B + bias) in bf16 (f32 accumulation), B stored N x K.
// tessel-select-config chooses the tiles by the performance model;
// tessel-tile, tessel-select-mfma, tessel-promote-lds and tessel-pipeline
// build the tile program, and tesselc --emit=perf predicts its speed.
//
//   tessel-gen matmul -m 4096 -n 4096 -k 4096 -t bf16 --transpose-b --bias n --activation gelu --name gemm_bias_gelu
//   tesselc examples/gemm_bias_gelu_bf16.mlir --chip=gfx942 --emit=perf
module {
  func.func @gemm_bias_gelu(%arg0: memref<4096x4096xbf16>, %arg1: memref<4096x4096xbf16, strided<[1, 4096]>>, %arg2: memref<4096x4096xbf16>, %arg3: memref<4096xf32>) {
    tessel.matmul ins(%arg0, %arg1 : memref<4096x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>) outs(%arg2 : memref<4096x4096xbf16>) epilogue(%arg3 : memref<4096xf32>) {
    ^bb0(%arg4: f32, %arg5: f32):
      %0 = arith.addf %arg4, %arg5 : f32
      %cst = arith.constant 0.707106769 : f32
      %1 = arith.mulf %0, %cst : f32
      %2 = math.erf %1 : f32
      %cst_0 = arith.constant 1.000000e+00 : f32
      %3 = arith.addf %2, %cst_0 : f32
      %cst_1 = arith.constant 5.000000e-01 : f32
      %4 = arith.mulf %0, %cst_1 : f32
      %5 = arith.mulf %4, %3 : f32
      %6 = arith.truncf %5 : f32 to bf16
      tessel.yield %6 : bf16
    }
    return
  }
}
