module {
  func.func @matmul(%arg0: memref<40x20xf16>, %arg1: memref<20x24xf16>, %arg2: memref<40x24xf16>, %arg3: memref<24xf32>) {
    tessel.matmul ins(%arg0, %arg1 : memref<40x20xf16>, memref<20x24xf16>) outs(%arg2 : memref<40x24xf16>) epilogue(%arg3 : memref<24xf32>) {
    ^bb0(%arg4: f32, %arg5: f32):
      %0 = arith.addf %arg4, %arg5 : f32
      %cst = arith.constant 0.000000e+00 : f32
      %1 = arith.maximumf %0, %cst : f32
      %2 = arith.truncf %1 : f32 to f16
      tessel.yield %2 : f16
    }
    return
  }
}
