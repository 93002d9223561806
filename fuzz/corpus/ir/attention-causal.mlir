module {
  func.func @attention(%arg0: memref<1x2x33x64xbf16>, %arg1: memref<1x2x47x64xbf16>, %arg2: memref<1x2x47x64xbf16>, %arg3: memref<1x2x33x64xbf16>) {
    tessel.attention ins(%arg0, %arg1, %arg2 : memref<1x2x33x64xbf16>, memref<1x2x47x64xbf16>, memref<1x2x47x64xbf16>) outs(%arg3 : memref<1x2x33x64xbf16>) {causal}
    return
  }
}
