// The tessel-to-rocdl pipeline tesselc runs, reproduced with tessel-opt.
// RUN: tessel-opt %s --tessel-to-rocdl="chip=gfx942" | FileCheck %s
// RUN: tessel-opt %s --tessel-to-rocdl="chip=gfx90a" | FileCheck %s --check-prefix=GFX90A

// CHECK: gpu.module @kernels
// CHECK: llvm.func @mfma(
// CHECK-SAME: rocdl.kernel
// CHECK: rocdl.workitem.id.x
// CHECK: rocdl.mfma.f32.32x32x8bf16.1k
// CHECK-NOT: amdgpu.mfma
// CHECK-NOT: gpu.thread_id
// GFX90A: rocdl.mfma.f32.32x32x8bf16.1k
gpu.module @kernels {
  gpu.func @mfma(%a: memref<64x4xbf16>, %c: memref<64x16xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %va = vector.load %a[%tid, %c0] : memref<64x4xbf16>, vector<4xbf16>
    %vc = vector.load %c[%tid, %c0] : memref<64x16xf32>, vector<16xf32>
    %d = amdgpu.mfma 32x32x8 %va * %va + %vc blgp = none : vector<4xbf16>, vector<4xbf16>, vector<16xf32>
    vector.store %d, %c[%tid, %c0] : memref<64x16xf32>, vector<16xf32>
    gpu.return
  }
}
