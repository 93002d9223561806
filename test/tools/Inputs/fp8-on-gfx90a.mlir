gpu.module @fp8 {
  gpu.func @fp8_mfma(%a: vector<8xf8E4M3FNUZ>, %c: memref<4xf32>) kernel {
    %acc = arith.constant dense<0.0> : vector<4xf32>
    %d = amdgpu.mfma 16x16x32 %a * %a + %acc blgp = none : vector<8xf8E4M3FNUZ>, vector<8xf8E4M3FNUZ>, vector<4xf32>
    %c0 = arith.constant 0 : index
    vector.store %d, %c[%c0] : memref<4xf32>, vector<4xf32>
    gpu.return
  }
}
