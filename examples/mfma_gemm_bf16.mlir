// A hand-written per-lane (L2) GEMM kernel: C[M, N] = A[M, K] * B[K, N] in
// bf16 with f32 accumulation, B stored N x K (K contiguous). Each 64-lane
// workgroup computes one 32x32 tile of C with v_mfma_f32_32x32x8_bf16,
// loading its operands straight from global memory in the instruction's
// documented lane layout (docs/hardware.md §3.2):
//   A: lane L, element e -> (m, k) = (L % 32, 4 * (L / 32) + e)
//   B: lane L, element e -> (k, n) = (4 * (L / 32) + e, L % 32)
//   C: lane L, element j -> (m, n) = (8 * (j / 4) + 4 * (L / 32) + j % 4, L % 32)
//
//   tesselc examples/mfma_gemm_bf16.mlir --chip=gfx942 --emit=report
gpu.module @gemm {
  gpu.func @gemm_32x32_bf16(%a: memref<1024x1024xbf16>, %bt: memref<1024x1024xbf16>,
                            %c: memref<1024x1024xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c32 = arith.constant 32 : index
    %c1024 = arith.constant 1024 : index
    %lane = gpu.thread_id x
    %tileM = gpu.block_id y
    %tileN = gpu.block_id x
    %row0 = arith.muli %tileM, %c32 : index
    %col0 = arith.muli %tileN, %c32 : index
    %lane32 = arith.remui %lane, %c32 : index
    %half = arith.divui %lane, %c32 : index
    %kLane = arith.muli %half, %c4 : index
    %m = arith.addi %row0, %lane32 : index
    %n = arith.addi %col0, %lane32 : index
    %zero = arith.constant dense<0.0> : vector<16xf32>
    %acc = scf.for %k0 = %c0 to %c1024 step %c8 iter_args(%sum = %zero) -> (vector<16xf32>) {
      %k = arith.addi %k0, %kLane : index
      %va = vector.load %a[%m, %k] : memref<1024x1024xbf16>, vector<4xbf16>
      %vb = vector.load %bt[%n, %k] : memref<1024x1024xbf16>, vector<4xbf16>
      %next = amdgpu.mfma 32x32x8 %va * %vb + %sum blgp = none
        : vector<4xbf16>, vector<4xbf16>, vector<16xf32>
      scf.yield %next : vector<16xf32>
    }
    // Element j of the accumulator holds row 8 * (j / 4) + 4 * half + j % 4.
    %rowLane = arith.addi %row0, %kLane : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    scf.for %j = %c0 to %c16 step %c1 {
      %group = arith.divui %j, %c4 : index
      %inGroup = arith.remui %j, %c4 : index
      %groupRow = arith.muli %group, %c8 : index
      %r0 = arith.addi %rowLane, %groupRow : index
      %r = arith.addi %r0, %inGroup : index
      %value = vector.extract %acc[%j] : f32 from vector<16xf32>
      memref.store %value, %c[%r, %n] : memref<1024x1024xf32>
    }
    gpu.return
  }
}
