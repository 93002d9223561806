func.func @z(%q: memref<1x0x16x64xf16>, %k: memref<1x0x16x64xf16>, %v: memref<1x0x16x64xf16>, %o: memref<1x0x16x64xf16>) {
  tessel.attention ins(%q, %k, %v) outs(%o) {scale = 0.125 : f32}
  return
}
