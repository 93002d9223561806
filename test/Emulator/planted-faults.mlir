// Faults of emulated code -- integer divisions LLVM leaves undefined and
// accesses below the alignment they assume -- are errors naming the kernel,
// workgroup, wave, lane and where, never a signal that kills the host
// process (the host traps on both divisions and may on misaligned vector
// moves), and tessel-run exits non-zero.
//
// RUN: %python -c "import numpy as np; x = np.arange(64, dtype=np.int32) * 7 - 200; d = np.arange(64, dtype=np.int32) %% 5 + 1; np.save('%t.x.npy', x); np.save('%t.d.npy', d); z = d.copy(); z[5] = 0; np.save('%t.zero.npy', z); m = x.copy(); m[9] = -2**31; n = d.copy(); n[9] = -1; np.save('%t.min.npy', m); np.save('%t.minus1.npy', n); np.save('%t.y.npy', np.zeros(64, dtype=np.int32))"
// RUN: %python -c "import numpy as np; w = np.arange(64, dtype=np.int64) - 3; w[17] = -2**63; np.save('%t.w.npy', w); u = np.full(64, -1, dtype=np.int64); np.save('%t.u.npy', u); b = np.arange(64, dtype=np.int8) %% 3; np.save('%t.b.npy', b); np.save('%t.f.npy', np.arange(256, dtype=np.float32)); np.save('%t.g.npy', np.zeros(256, dtype=np.float32))"

// Divisions that cannot fault give the right quotients (C semantics:
// rounded towards zero).
// RUN: tessel-run %s --kernel divide --chip gfx942 --arg %t.x.npy --arg %t.d.npy --arg %t.y.npy --out-dir %t.ok | FileCheck %s --check-prefix=OK
// RUN: %python -c "import numpy as np; x = np.load('%t.x.npy'); d = np.load('%t.d.npy'); y = np.load('%t.ok/arg2.npy'); q = np.trunc(x / d).astype(np.int32); assert (y == q).all(), (y, q); print('quotients ok')" | FileCheck %s --check-prefix=VALUES
// OK: divide on emu (gfx942): grid 1x1x1, block 64x1x1: 64 lanes
// VALUES: quotients ok

// Lane 5 divides by zero.
// RUN: not tessel-run %s --kernel divide --chip gfx942 --arg %t.x.npy --arg %t.zero.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: tessel-run: error: kernel 'divide', workgroup (0, 0, 0), wave 0, lane 5 (thread (5, 0, 0)): integer division by zero in an i32 sdiv at {{.*}}planted-faults.mlir:[[@LINE+35]]:10

// Lane 9 divides -2^31 by -1: the quotient 2^31 does not fit.
// RUN: not tessel-run %s --kernel divide --chip gfx942 --arg %t.min.npy --arg %t.minus1.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: tessel-run: error: kernel 'divide', workgroup (0, 0, 0), wave 0, lane 9 (thread (9, 0, 0)): integer division overflow in an i32 sdiv at {{.*}}planted-faults.mlir:[[@LINE+31]]:10: -2147483648 / -1 does not fit in i32

// The remainder overflows too (LLVM leaves srem of -2^63 by -1 undefined).
// RUN: not tessel-run %s --kernel remainder64 --chip gfx942 --arg %t.w.npy --arg %t.u.npy 2>&1 | FileCheck %s --check-prefix=REM64
// REM64: tessel-run: error: kernel 'remainder64', workgroup (0, 0, 0), wave 0, lane 17 (thread (17, 0, 0)): integer division overflow in an i64 srem at {{.*}}planted-faults.mlir:[[@LINE+37]]:10: -9223372036854775808 / -1 does not fit in i64

// An unsigned 8-bit remainder by zero: lane 0's divisor is 0.
// RUN: not tessel-run %s --kernel remainder8 --chip gfx942 --arg %t.b.npy 2>&1 | FileCheck %s --check-prefix=REM8
// REM8: tessel-run: error: kernel 'remainder8', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)): integer division by zero in an i8 urem at {{.*}}planted-faults.mlir:[[@LINE+43]]:10

// A 16-byte vector load that assumes 16-byte alignment, from one element
// past an aligned address.
// RUN: not tessel-run %s --kernel misaligned_load --chip gfx942 --arg %t.f.npy --arg %t.g.npy 2>&1 | FileCheck %s --check-prefix=GLOBAL
// GLOBAL: tessel-run: error: kernel 'misaligned_load', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)): misaligned global load of 16 bytes at address {{0x[0-9a-f]+}} (4 bytes past the start of argument 0, which has 1024 bytes): the access assumes 16-byte alignment

// The same for LDS, whose store to offset 4 assumes 16-byte alignment.
// RUN: not tessel-run %s --kernel misaligned_lds --chip gfx942 --arg %t.f.npy --arg %t.g.npy 2>&1 | FileCheck %s --check-prefix=LDS
// LDS: tessel-run: error: kernel 'misaligned_lds', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)): misaligned LDS store of 16 bytes at offset 4: the access assumes 16-byte alignment

// Aligned, the same accesses are fine.
// RUN: tessel-run %s --kernel aligned --chip gfx942 --arg %t.f.npy --arg %t.g.npy --out-dir %t.aligned | FileCheck %s --check-prefix=ALIGNED
// RUN: %python -c "import numpy as np; g = np.load('%t.aligned/arg1.npy'); assert (g == np.arange(256)).all(), g; print('aligned ok')" | FileCheck %s --check-prefix=ALIGNED-VALUES
// ALIGNED: aligned on emu (gfx942)
// ALIGNED-VALUES: aligned ok

gpu.module @faults {
  gpu.func @divide(%x: memref<64xi32>, %d: memref<64xi32>, %y: memref<64xi32>)
      kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %a = memref.load %x[%tid] : memref<64xi32>
    %b = memref.load %d[%tid] : memref<64xi32>
    %q = arith.divsi %a, %b : i32
    memref.store %q, %y[%tid] : memref<64xi32>
    gpu.return
  }

  gpu.func @remainder64(%w: memref<64xi64>, %u: memref<64xi64>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %a = memref.load %w[%tid] : memref<64xi64>
    %b = memref.load %u[%tid] : memref<64xi64>
    %r = arith.remsi %a, %b : i64
    memref.store %r, %w[%tid] : memref<64xi64>
    gpu.return
  }

  gpu.func @remainder8(%b: memref<64xi8>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c100 = arith.constant 100 : i8
    %v = memref.load %b[%tid] : memref<64xi8>
    %r = arith.remui %c100, %v : i8
    memref.store %r, %b[%tid] : memref<64xi8>
    gpu.return
  }

  gpu.func @misaligned_load(%x: memref<256xf32>, %y: memref<256xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %i = arith.muli %tid, %c4 : index
    %j = arith.addi %i, %c1 : index
    %v = vector.load %x[%j] {alignment = 16} : memref<256xf32>, vector<4xf32>
    vector.store %v, %y[%i] : memref<256xf32>, vector<4xf32>
    gpu.return
  }

  gpu.func @misaligned_lds(%x: memref<256xf32>, %y: memref<256xf32>)
      workgroup(%lds: memref<260xf32, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %i = arith.muli %tid, %c4 : index
    %j = arith.addi %i, %c1 : index
    %v = vector.load %x[%i] {alignment = 16} : memref<256xf32>, vector<4xf32>
    vector.store %v, %lds[%j] {alignment = 16} : memref<260xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    gpu.return
  }

  gpu.func @aligned(%x: memref<256xf32>, %y: memref<256xf32>)
      workgroup(%lds: memref<256xf32, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c4 = arith.constant 4 : index
    %i = arith.muli %tid, %c4 : index
    %v = vector.load %x[%i] {alignment = 16} : memref<256xf32>, vector<4xf32>
    vector.store %v, %lds[%i] {alignment = 16} : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    %w = vector.load %lds[%i] {alignment = 16} : memref<256xf32, #gpu.address_space<workgroup>>, vector<4xf32>
    vector.store %w, %y[%i] {alignment = 16} : memref<256xf32>, vector<4xf32>
    gpu.return
  }
}
