// Blocks too large for gfx942's LDS: an error before any code exists.
func.func @fa(%q: memref<1x2x64x256xf16>, %k: memref<1x2x64x256xf16>,
              %v: memref<1x2x64x256xf16>, %o: memref<1x2x64x256xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x64x256xf16>, memref<1x2x64x256xf16>, memref<1x2x64x256xf16>) outs(%o : memref<1x2x64x256xf16>) {config = #tessel.config<tile = [64, 128], waves = [2, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}
