// The problem level (L0) is not lowered by this build.
func.func @gemm(%a: memref<128x64xf16>, %b: memref<64x32xf16>,
                %c: memref<128x32xf16>) {
  tessel.matmul ins(%a, %b : memref<128x64xf16>, memref<64x32xf16>) outs(%c : memref<128x32xf16>)
  return
}
