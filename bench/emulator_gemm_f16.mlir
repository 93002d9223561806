// A GEMM-sized MFMA kernel for the emulator benchmark and an end-to-end
// check: C[M, N] = A[M, K] * B[K, N] in f16 with f32 accumulation, B stored
// N x K (K contiguous), one wave per 32x32 tile of C, v_mfma_f32_32x32x8_f16
// down K. Each lane loads its operands in the instruction's documented
// layout (docs/hardware.md §3.2) straight from global memory.
gpu.module @bench {
  gpu.func @gemm_f16(%a: memref<?x?xf16>, %bt: memref<?x?xf16>, %c: memref<?x?xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %lane = gpu.thread_id x
    %bx = gpu.block_id x
    %by = gpu.block_id y
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %k = memref.dim %a, %c1 : memref<?x?xf16>
    %row0 = arith.muli %by, %c32 : index
    %col0 = arith.muli %bx, %c32 : index
    %l32 = arith.remui %lane, %c32 : index
    %half = arith.divui %lane, %c32 : index
    %koff = arith.muli %half, %c4 : index
    %arow = arith.addi %row0, %l32 : index
    %bcol = arith.addi %col0, %l32 : index
    %zero = arith.constant dense<0.0> : vector<16xf32>
    %acc = scf.for %k0 = %c0 to %k step %c8 iter_args(%sum = %zero) -> vector<16xf32> {
      %kk = arith.addi %k0, %koff : index
      %va = vector.load %a[%arow, %kk] : memref<?x?xf16>, vector<4xf16>
      %vb = vector.load %bt[%bcol, %kk] : memref<?x?xf16>, vector<4xf16>
      %next = amdgpu.mfma 32x32x8 %va * %vb + %sum blgp = none : vector<4xf16>, vector<4xf16>, vector<16xf32>
      scf.yield %next : vector<16xf32>
    }
    // Accumulator register j of lane L holds row 8*(j/4) + 4*(L/32) + j%4.
    scf.for %j = %c0 to %c16 step %c1 {
      %group = arith.divui %j, %c4 : index
      %within = arith.remui %j, %c4 : index
      %g8 = arith.muli %group, %c8 : index
      %r0 = arith.addi %g8, %koff : index
      %r1 = arith.addi %r0, %within : index
      %row = arith.addi %row0, %r1 : index
      %v = vector.extract %acc[%j] : f32 from vector<16xf32>
      memref.store %v, %c[%row, %bcol] : memref<?x?xf32>
    }
    gpu.return
  }
}
