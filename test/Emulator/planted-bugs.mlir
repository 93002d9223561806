// Bugs hardware would hide are reported with kernel, workgroup, wave, lane
// and address, and tessel-run exits non-zero.
//
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.arange(64, dtype=np.float32)); np.save('%t.y.npy', np.zeros(64, dtype=np.float32)); np.save('%t.h.npy', np.ones((64, 4), dtype=np.float16)); np.save('%t.c.npy', np.zeros((64, 16), dtype=np.float32))"

// A missing barrier: lane 1's store to LDS races with lane 0's load of the
// same bytes.
// RUN: not tessel-run %s --kernel missing_barrier --chip gfx942 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: tessel-run: error: kernel 'missing_barrier', workgroup (0, 0, 0), wave 0, lane 1 (thread (1, 0, 0)): LDS race: store of 4 bytes at LDS offset 4 and a load of byte 4 by wave 0, lane 0 with no barrier or wave collective between them

// With the barrier the same kernel is fine.
// RUN: tessel-run %s --kernel with_barrier --chip gfx942 --arg %t.x.npy --arg %t.y.npy --out-dir %t.ok | FileCheck %s --check-prefix=OK
// RUN: %python -c "import numpy as np; y = np.load('%t.ok/arg1.npy'); assert (y == (np.arange(64) + 1) %% 64).all(), y; print('values ok')" | FileCheck %s --check-prefix=VALUES
// OK: with_barrier on emu (gfx942): grid 1x1x1, block 64x1x1: 64 lanes, 1 barriers
// VALUES: values ok

// An out-of-bounds store: lane 63 writes y[64].
// RUN: not tessel-run %s --kernel out_of_bounds --chip gfx942 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=OOB
// OOB: tessel-run: error: kernel 'out_of_bounds', workgroup (0, 0, 0), wave 0, lane 63 (thread (63, 0, 0)): global store of 4 bytes at address {{0x[0-9a-f]+}} (256 bytes past the start of argument 1, which has 256 bytes) is outside every argument buffer

// A store past the LDS allocation.
// RUN: not tessel-run %s --kernel lds_overflow --chip gfx942 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=LDS
// LDS: tessel-run: error: kernel 'lds_overflow', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)): LDS store of 4 bytes at offset 256 is outside the 256-byte LDS allocation

// A divergent MFMA: only lanes 0-31 reach it.
// RUN: not tessel-run %s --kernel divergent_mfma --chip gfx942 --arg %t.h.npy --arg %t.c.npy 2>&1 | FileCheck %s --check-prefix=DIVERGENT
// DIVERGENT: tessel-run: error: kernel 'divergent_mfma', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)): divergent wave collective: 'v_mfma_f32_32x32x8_f16' reached by only part of the wave (lane 32 has returned)

// More LDS than the chip has: 160000 bytes fit gfx950's 160 KiB, not gfx942's 64 KiB.
// RUN: not tessel-run %s --kernel big_lds --chip gfx942 --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=BIGLDS
// BIGLDS: tessel-run: error: kernel 'big_lds': 160000 bytes of LDS exceed the 65536 bytes per workgroup gfx942 allows
// RUN: tessel-run %s --kernel big_lds --chip gfx950 --arg %t.y.npy | FileCheck %s --check-prefix=BIGOK
// BIGOK: big_lds on emu (gfx950)

// More lanes than a workgroup may have.
// RUN: not tessel-run %s --kernel with_barrier --chip gfx942 --block 2048 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=WAVES
// WAVES: tessel-run: error: kernel 'with_barrier': a workgroup of 2048 lanes exceeds the 1024 lanes gfx942 allows

gpu.module @bugs {
  gpu.func @missing_barrier(%x: memref<64xf32>, %y: memref<64xf32>)
      workgroup(%lds: memref<64xf32, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %v = memref.load %x[%tid] : memref<64xf32>
    memref.store %v, %lds[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
    %n = arith.addi %tid, %c1 : index
    %next = arith.remui %n, %c64 : index
    %w = memref.load %lds[%next] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %y[%tid] : memref<64xf32>
    gpu.return
  }

  gpu.func @with_barrier(%x: memref<64xf32>, %y: memref<64xf32>)
      workgroup(%lds: memref<64xf32, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %v = memref.load %x[%tid] : memref<64xf32>
    memref.store %v, %lds[%tid] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %n = arith.addi %tid, %c1 : index
    %next = arith.remui %n, %c64 : index
    %w = memref.load %lds[%next] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %w, %y[%tid] : memref<64xf32>
    gpu.return
  }

  gpu.func @out_of_bounds(%x: memref<64xf32>, %y: memref<64xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c1 = arith.constant 1 : index
    %v = memref.load %x[%tid] : memref<64xf32>
    %n = arith.addi %tid, %c1 : index
    memref.store %v, %y[%n] : memref<64xf32>
    gpu.return
  }

  gpu.func @lds_overflow(%x: memref<64xf32>, %y: memref<64xf32>)
      workgroup(%lds: memref<64xf32, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c64 = arith.constant 64 : index
    %v = memref.load %x[%tid] : memref<64xf32>
    %past = arith.addi %tid, %c64 : index
    memref.store %v, %lds[%past] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.return
  }

  gpu.func @divergent_mfma(%h: memref<64x4xf16>, %c: memref<64x16xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %low = arith.cmpi ult, %tid, %c32 : index
    scf.if %low {
      %va = vector.load %h[%tid, %c0] : memref<64x4xf16>, vector<4xf16>
      %vc = vector.load %c[%tid, %c0] : memref<64x16xf32>, vector<16xf32>
      %r = amdgpu.mfma 32x32x8 %va * %va + %vc blgp = none : vector<4xf16>, vector<4xf16>, vector<16xf32>
      vector.store %r, %c[%tid, %c0] : memref<64x16xf32>, vector<16xf32>
    }
    gpu.return
  }

  gpu.func @big_lds(%y: memref<64xf32>)
      workgroup(%lds: memref<40000xf32, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %v = memref.load %y[%tid] : memref<64xf32>
    memref.store %v, %lds[%tid] : memref<40000xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}
