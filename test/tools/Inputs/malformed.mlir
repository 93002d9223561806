gpu.module @broken {
  gpu.func @k() kernel {
    %c0 = arith.constant 0 : index
    gpu.retur
  }
}
