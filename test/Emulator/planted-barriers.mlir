// Barriers that not every lane of the workgroup reaches together are
// undefined behaviour (s_barrier is convergent): each kind is reported with
// kernel, workgroup, wave, lane and the barrier's source location, never as
// an LDS race and never as a hang, and tessel-run exits non-zero.
//
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.arange(128, dtype=np.float32)); np.save('%t.y.npy', np.zeros(128, dtype=np.float32))"

// A barrier in a lane-divergent branch: lanes 0-31 of wave 0 wait, lanes
// 32-63 return.
// RUN: not tessel-run %s --kernel divergent_barrier --chip gfx942 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=DIVERGENT
// DIVERGENT-LABEL: tessel-run: error: kernel 'divergent_barrier', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)):
// DIVERGENT-SAME: divergent barrier: barrier #0 at {{.*}}planted-barriers.mlir:[[@LINE+36]]:7 reached by only part of the wave (lane 32 has returned)

// A barrier that only wave 0 of two reaches; wave 1 returns without it.
// RUN: not tessel-run %s --kernel partial_barrier --chip gfx942 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=PARTIAL
// PARTIAL-LABEL: tessel-run: error: kernel 'partial_barrier', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)):
// PARTIAL-SAME: partial barrier: barrier #1 at {{.*}}planted-barriers.mlir:[[@LINE+44]]:7 reached by only part of the workgroup (wave 1 has returned without reaching it)

// Waves waiting at different barriers: wave 0 in one branch, wave 1 in the
// other. Without the check the two barriers released together and wave 0's
// load of what wave 1 stores after its barrier was reported as an LDS race.
// RUN: not tessel-run %s --kernel mismatched_barriers --chip gfx942 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=MISMATCHED
// MISMATCHED-LABEL: tessel-run: error: kernel 'mismatched_barriers', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)):
// MISMATCHED-SAME: mismatched barriers: wave 0 waits at barrier #2 at {{.*}}planted-barriers.mlir:[[@LINE+52]]:7 while wave 1 waits at barrier #3 at {{.*}}planted-barriers.mlir:[[@LINE+57]]:7
// MISMATCHED-NOT: LDS race

// Lanes 0-31 wait at a barrier while lanes 32-63 of the same wave wait at
// a shuffle (ds_swizzle): a divergent barrier, too.
// RUN: not tessel-run %s --kernel barrier_or_shuffle --chip gfx942 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=COLLECTIVE
// COLLECTIVE-LABEL: tessel-run: error: kernel 'barrier_or_shuffle', workgroup (0, 0, 0), wave 0, lane 0 (thread (0, 0, 0)):
// COLLECTIVE-SAME: divergent barrier: barrier #5 at {{.*}}planted-barriers.mlir:[[@LINE+84]]:7 reached by only part of the wave (lane 32 is at wave collective 'ds_swizzle')

// A barrier every wave reaches, in a branch uniform over the workgroup,
// is fine.
// RUN: tessel-run %s --kernel uniform_barrier --chip gfx942 --arg %t.x.npy --arg %t.y.npy --out-dir %t.ok | FileCheck %s --check-prefix=OK
// RUN: %python -c "import numpy as np; y = np.load('%t.ok/arg1.npy'); assert (y == 127 - np.arange(128)).all(), y; print('values ok')" | FileCheck %s --check-prefix=VALUES
// OK: uniform_barrier on emu (gfx942): grid 1x1x1, block 128x1x1: 128 lanes, 1 barriers
// VALUES: values ok

gpu.module @barriers {
  gpu.func @divergent_barrier(%x: memref<128xf32>, %y: memref<128xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %v = memref.load %x[%tid] : memref<128xf32>
    %low = arith.cmpi ult, %tid, %c32 : index
    scf.if %low {
      gpu.barrier
    }
    memref.store %v, %y[%tid] : memref<128xf32>
    gpu.return
  }

  gpu.func @partial_barrier(%x: memref<128xf32>, %y: memref<128xf32>) kernel
      attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c64 = arith.constant 64 : index
    %v = memref.load %x[%tid] : memref<128xf32>
    %wave0 = arith.cmpi ult, %tid, %c64 : index
    scf.if %wave0 {
      gpu.barrier
    }
    memref.store %v, %y[%tid] : memref<128xf32>
    gpu.return
  }

  gpu.func @mismatched_barriers(%x: memref<128xf32>, %y: memref<128xf32>)
      workgroup(%lds: memref<128xf32, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c64 = arith.constant 64 : index
    %v = memref.load %x[%tid] : memref<128xf32>
    %wave0 = arith.cmpi ult, %tid, %c64 : index
    scf.if %wave0 {
      memref.store %v, %lds[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %other = arith.addi %tid, %c64 : index
      %w = memref.load %lds[%other] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %w, %y[%tid] : memref<128xf32>
    } else {
      gpu.barrier
      memref.store %v, %lds[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
    }
    gpu.return
  }

  gpu.func @uniform_barrier(%x: memref<128xf32>, %y: memref<128xf32>)
      workgroup(%lds: memref<128xf32, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %c127 = arith.constant 127 : index
    %bid = gpu.block_id x
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%tid] : memref<128xf32>
    memref.store %v, %lds[%tid] : memref<128xf32, #gpu.address_space<workgroup>>
    %first = arith.cmpi eq, %bid, %c0 : index
    scf.if %first {
      gpu.barrier
    }
    %mirror = arith.subi %c127, %tid : index
    %w = memref.load %lds[%mirror] : memref<128xf32, #gpu.address_space<workgroup>>
    memref.store %w, %y[%tid] : memref<128xf32>
    gpu.return
  }

  gpu.func @barrier_or_shuffle(%x: memref<128xf32>, %y: memref<128xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c32 = arith.constant 32 : index
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %v = memref.load %x[%tid] : memref<128xf32>
    %low = arith.cmpi ult, %tid, %c32 : index
    scf.if %low {
      gpu.barrier
      memref.store %v, %y[%tid] : memref<128xf32>
    } else {
      %s, %ok = gpu.shuffle xor %v, %c1, %c64 : f32
      memref.store %s, %y[%tid] : memref<128xf32>
    }
    gpu.return
  }
}

// The same checks on a wave32 chip: lanes 32-63 are wave 1 there, so a
// branch at lane 32 splits waves, not a wave, and each bug is caught as the
// partial or mismatched barrier it then is.
// RUN: not tessel-run %s --kernel divergent_barrier --chip gfx1100 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=WAVE32-DIVERGENT
// WAVE32-DIVERGENT: error: kernel 'divergent_barrier', {{.*}}: partial barrier: barrier #0 {{.*}} reached by only part of the workgroup (wave 1 has returned without reaching it)
// RUN: not tessel-run %s --kernel partial_barrier --chip gfx1100 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=WAVE32-PARTIAL
// WAVE32-PARTIAL: error: kernel 'partial_barrier', {{.*}}: partial barrier: barrier #1 {{.*}} reached by only part of the workgroup (wave 2 has returned without reaching it)
// RUN: not tessel-run %s --kernel mismatched_barriers --chip gfx1100 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=WAVE32-MISMATCHED
// WAVE32-MISMATCHED: error: kernel 'mismatched_barriers', {{.*}}: mismatched barriers: wave 0 waits at barrier #2 {{.*}} while wave 2 waits at barrier #3
// RUN: not tessel-run %s --kernel barrier_or_shuffle --chip gfx1100 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=WAVE32-COLLECTIVE
// WAVE32-COLLECTIVE: error: kernel 'barrier_or_shuffle', {{.*}}: partial barrier: barrier #5 {{.*}} (wave 1 has returned without reaching it)
// RUN: tessel-run %s --kernel uniform_barrier --chip gfx1100 --arg %t.x.npy --arg %t.y.npy --out-dir %t.ok32 | FileCheck %s --check-prefix=WAVE32-OK
// RUN: %python -c "import numpy as np; y = np.load('%t.ok32/arg1.npy'); assert (y == 127 - np.arange(128)).all(), y; print('values ok')" | FileCheck %s --check-prefix=VALUES
// WAVE32-OK: uniform_barrier on emu (gfx1100): grid 1x1x1, block 128x1x1: 128 lanes, 1 barriers
