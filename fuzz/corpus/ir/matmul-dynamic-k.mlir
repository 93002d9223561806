module {
  func.func @matmul(%arg0: memref<16x?xbf16>, %arg1: memref<?x32xbf16, strided<[1, ?]>>, %arg2: memref<16x32xbf16>) {
    tessel.matmul ins(%arg0, %arg1 : memref<16x?xbf16>, memref<?x32xbf16, strided<[1, ?]>>) outs(%arg2 : memref<16x32xbf16>) 
    return
  }
}
