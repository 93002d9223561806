gpu.module @unsupported {
  gpu.func @k(%x: memref<64xi32>) kernel {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<64xi32>
    %p = rocdl.permlanex16 %v, %v, %v, %v, 0, 0 : i32, i32
    memref.store %p, %x[%tid] : memref<64xi32>
    gpu.return
  }
}
