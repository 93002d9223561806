// A per-lane (L2) elementwise kernel: out = gelu(x + bias) in f16, computed in
// f32. math.erf has no AMDGPU instruction: it becomes a call to the ROCm
// device library (__ocml_erf_f32), which tesselc links in because it is
// referenced, then inlines and internalizes.
//
//   tesselc examples/gelu_epilogue_f16.mlir --chip=gfx942 --emit=report
gpu.module @epilogue {
  gpu.func @bias_gelu(%x: memref<?x4096xf16>, %bias: memref<4096xf32>,
                      %out: memref<?x4096xf16>) kernel
      attributes {known_block_size = array<i32: 256, 1, 1>} {
    %row = gpu.block_id x
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c256 = arith.constant 256 : index
    %c4096 = arith.constant 4096 : index
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %rsqrt2 = arith.constant 0.707106769 : f32
    scf.for %col0 = %c0 to %c4096 step %c256 {
      %col = arith.addi %col0, %tid : index
      %v = memref.load %x[%row, %col] : memref<?x4096xf16>
      %b = memref.load %bias[%col] : memref<4096xf32>
      %vf = arith.extf %v : f16 to f32
      %s = arith.addf %vf, %b : f32
      %scaled = arith.mulf %s, %rsqrt2 : f32
      %erf = math.erf %scaled : f32
      %t = arith.addf %erf, %one : f32
      %h = arith.mulf %s, %half : f32
      %g = arith.mulf %h, %t : f32
      %r = arith.truncf %g : f32 to f16
      memref.store %r, %out[%row, %col] : memref<?x4096xf16>
    }
    gpu.return
  }
}
