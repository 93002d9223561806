module {
  func.func @attention(%arg0: memref<2x16x4096x64xf16>, %arg1: memref<2x16x4096x64xf16>, %arg2: memref<2x16x4096x64xf16>, %arg3: memref<2x16x4096x64xf16>) {
    tessel.attention ins(%arg0, %arg1, %arg2 : memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>, memref<2x16x4096x64xf16>) outs(%arg3 : memref<2x16x4096x64xf16>)
    return
  }
}
