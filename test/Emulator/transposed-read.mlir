// gfx950's transposing LDS read (ds_read_b64_tr_b16) on the emulator: each
// lane reads 8 bytes at its own address, checked like any LDS access, and
// then, in each group of 16 lanes, lane j gets as element e element j % 4
// of what lane 4e + j / 4 read.
//
// RUN: tessel-opt %s --tessel-to-rocdl="chip=gfx950" --tessel-lower-to-emulator="chip=gfx950" | FileCheck %s
// CHECK-LABEL: llvm.func @transpose
// CHECK: llvm.call @__tessel_emu_barrier
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT: %[[ALIGN:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT: %[[KIND:.*]] = llvm.mlir.constant(768 : i32) : i32
// CHECK-NEXT: llvm.call @__tessel_emu_check(%{{.*}}, %[[BYTES]], %[[ALIGN]], %[[KIND]]) : (!llvm.ptr, i64, i64, i32) -> ()
// CHECK-NEXT: %[[READ:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<4xf16>
// CHECK: llvm.call @__tessel_emu_ds_read_tr16_b64(%{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr) -> ()
// CHECK-NOT: rocdl.ds.read

// Lane l writes elements 4l..4l+3 and reads them back transposed.
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.arange(256, dtype=np.float16)); np.save('%t.y.npy', np.zeros(256, dtype=np.float16))"
// RUN: tessel-run %s --kernel transpose --chip gfx950 --arg %t.x.npy --arg %t.y.npy --out-dir %t.out | FileCheck %s --check-prefix=EMU
// EMU: transpose on emu (gfx950): grid 1x1x1, block 64x1x1: 64 lanes, 1 barriers, 1 wave collectives
// RUN: %python -c "import numpy as np; y = np.load('%t.out/arg1.npy').reshape(64, 4); l = np.arange(64)[:, None]; e = np.arange(4)[None, :]; want = 4 * (l // 16 * 16 + 4 * e + l %% 16 // 4) + l %% 4; assert (y == want).all(), y; print('transposed ok')" | FileCheck %s --check-prefix=VALUES
// VALUES: transposed ok
gpu.module @kernels {
  gpu.func @transpose(%x: memref<256xf16>, %y: memref<256xf16>)
      workgroup(%lds: memref<256xf16, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %lane = gpu.thread_id x
    %c4 = arith.constant 4 : index
    %offset = arith.muli %lane, %c4 : index
    %v = vector.load %x[%offset] : memref<256xf16>, vector<4xf16>
    vector.store %v, %lds[%offset] : memref<256xf16, #gpu.address_space<workgroup>>, vector<4xf16>
    gpu.barrier
    %t = amdgpu.transpose_load %lds[%offset] : memref<256xf16, #gpu.address_space<workgroup>> -> vector<4xf16>
    vector.store %t, %y[%offset] : memref<256xf16>, vector<4xf16>
    gpu.return
  }
}
