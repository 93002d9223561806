// Attention is not lowered by this build yet.
func.func @fa(%q: memref<1x2x64x64xf16>, %k: memref<1x2x64x64xf16>,
              %v: memref<1x2x64x64xf16>, %o: memref<1x2x64x64xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x64x64xf16>, memref<1x2x64x64xf16>, memref<1x2x64x64xf16>) outs(%o : memref<1x2x64x64xf16>)
  return
}
