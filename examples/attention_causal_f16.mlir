// A problem-level (L0) causal FlashAttention forward with grouped-query
// heads (32 query heads on 8 key/value heads), f16, head dim 128.
//
//   tessel-gen attention -b 2 -h 32 --kv-heads 8 --seq-q 4096 --seq-kv 4096 -d 128 -t f16 --causal --name causal_attention
//   tesselc examples/attention_causal_f16.mlir --chip=gfx942 --emit=perf
module {
  func.func @causal_attention(%arg0: memref<2x32x4096x128xf16>, %arg1: memref<2x8x4096x128xf16>, %arg2: memref<2x8x4096x128xf16>, %arg3: memref<2x32x4096x128xf16>) {
    tessel.attention ins(%arg0, %arg1, %arg2 : memref<2x32x4096x128xf16>, memref<2x8x4096x128xf16>, memref<2x8x4096x128xf16>) outs(%arg3 : memref<2x32x4096x128xf16>) {causal}
    return
  }
}
