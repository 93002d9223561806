gpu.module @first {
  gpu.func @first_kernel(%x: memref<64xf32>) kernel {
    gpu.return
  }
}
gpu.module @second {
  gpu.func @second_kernel(%x: memref<64xf32>) kernel {
    gpu.return
  }
}
