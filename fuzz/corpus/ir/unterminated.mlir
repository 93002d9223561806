func.func @g(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf32>) {
  tessel.matmul ins(%a, %b) outs(%c)
  return
