gpu.module @lds {
  gpu.func @big_lds(%x: memref<256xf32>)
      workgroup(%buf: memref<24576xf32, #gpu.address_space<workgroup>>)
      kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<256xf32>
    %c24000 = arith.constant 24000 : index
    %i = arith.addi %tid, %c24000 : index
    memref.store %v, %buf[%i] : memref<24576xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %w = memref.load %buf[%tid] : memref<24576xf32, #gpu.address_space<workgroup>>
    memref.store %w, %x[%tid] : memref<256xf32>
    gpu.return
  }
}
