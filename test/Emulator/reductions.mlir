// Cross-lane and workgroup reductions run on the emulator and give the
// exact sums: a butterfly over the wave with gpu.shuffle (ds_swizzle for
// offsets below 32, ds_bpermute across the halves), a tree over a 256-lane
// workgroup through LDS with barriers, and the DPP, readlane and ballot
// collectives written as ROCDL ops.
//
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.arange(256, dtype=np.float32)); np.save('%t.y.npy', np.zeros(256, dtype=np.float32)); np.save('%t.i.npy', np.arange(64, dtype=np.int32)); np.save('%t.o.npy', np.zeros((64, 4), dtype=np.int32))"

// RUN: tessel-run %s --kernel wave_sum --chip gfx942 --arg %t.x.npy --arg %t.y.npy --out-dir %t.wave | FileCheck %s --check-prefix=WAVE
// WAVE: wave_sum on emu (gfx942): grid 1x1x1, block 64x1x1: 64 lanes, 0 barriers, 6 wave collectives
// RUN: %python -c "import numpy as np; y = np.load('%t.wave/arg1.npy'); assert (y[:64] == 2016).all(), y; print('wave sum', y[0])" | FileCheck %s --check-prefix=WAVESUM
// WAVESUM: wave sum 2016.0

// RUN: tessel-run %s --kernel workgroup_sum --chip gfx942 --grid 1 --block 256 --arg %t.x.npy --arg %t.y.npy --out-dir %t.wg | FileCheck %s --check-prefix=WG
// WG: workgroup_sum on emu (gfx942): grid 1x1x1, block 256x1x1: 256 lanes, 9 barriers
// RUN: %python -c "import numpy as np; y = np.load('%t.wg/arg1.npy'); assert y[0] == 32640, y[0]; print('workgroup sum', y[0])" | FileCheck %s --check-prefix=WGSUM
// WGSUM: workgroup sum 32640.0

// row_shr:1 with bound_ctrl (lane 0 of each row of 16 gets 0), readlane of
// lane 5, readfirstlane, and the ballot of odd lanes.
// RUN: tessel-run %s --kernel lane_ops --chip gfx942 --arg %t.i.npy --arg %t.o.npy --out-dir %t.lanes
// RUN: %python -c "import numpy as np; o = np.load('%t.lanes/arg1.npy'); l = np.arange(64); assert (o[:, 0] == np.where(l %% 16 == 0, 0, l - 1)).all(), o[:, 0]; assert (o[:, 1] == 5).all(); assert (o[:, 2] == 0).all(); assert (o[:, 3] == np.int32(-1431655766)).all(), o[:, 3]; print('lane ops ok')" | FileCheck %s --check-prefix=LANES
// LANES: lane ops ok

gpu.module @reductions {
  gpu.func @wave_sum(%x: memref<256xf32>, %y: memref<256xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<256xf32>
    %c64 = arith.constant 64 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i32
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %c32 = arith.constant 32 : i32
    %s1, %ok1 = gpu.shuffle xor %v, %c1, %c64 : f32
    %a1 = arith.addf %v, %s1 : f32
    %s2, %ok2 = gpu.shuffle xor %a1, %c2, %c64 : f32
    %a2 = arith.addf %a1, %s2 : f32
    %s4, %ok4 = gpu.shuffle xor %a2, %c4, %c64 : f32
    %a4 = arith.addf %a2, %s4 : f32
    %s8, %ok8 = gpu.shuffle xor %a4, %c8, %c64 : f32
    %a8 = arith.addf %a4, %s8 : f32
    %s16, %ok16 = gpu.shuffle xor %a8, %c16, %c64 : f32
    %a16 = arith.addf %a8, %s16 : f32
    %s32, %ok32 = gpu.shuffle xor %a16, %c32, %c64 : f32
    %a32 = arith.addf %a16, %s32 : f32
    memref.store %a32, %y[%tid] : memref<256xf32>
    gpu.return
  }

  gpu.func @workgroup_sum(%x: memref<256xf32>, %y: memref<256xf32>)
      workgroup(%lds: memref<256xf32, #gpu.address_space<workgroup>>) kernel {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %v = memref.load %x[%tid] : memref<256xf32>
    memref.store %v, %lds[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    // Halve the active range 8 times: 128, 64, ..., 1.
    %final = scf.while (%half = %c128) : (index) -> index {
      %go = arith.cmpi ugt, %half, %c0 : index
      scf.condition(%go) %half : index
    } do {
    ^bb0(%h: index):
      %active = arith.cmpi ult, %tid, %h : index
      scf.if %active {
        %other = arith.addi %tid, %h : index
        %a = memref.load %lds[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
        %b = memref.load %lds[%other] : memref<256xf32, #gpu.address_space<workgroup>>
        %s = arith.addf %a, %b : f32
        memref.store %s, %lds[%tid] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %next = arith.shrui %h, %c1 : index
      scf.yield %next : index
    }
    %is0 = arith.cmpi eq, %tid, %c0 : index
    scf.if %is0 {
      %total = memref.load %lds[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
      memref.store %total, %y[%c0] : memref<256xf32>
    }
    gpu.return
  }

  gpu.func @lane_ops(%in: memref<64xi32>, %out: memref<64x4xi32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %v = memref.load %in[%tid] : memref<64xi32>
    %old = arith.constant 1000 : i32
    %shr = rocdl.update.dpp %old, %v with 273, 15, 15, true : i32
    memref.store %shr, %out[%tid, %c0] : memref<64x4xi32>
    %lane5 = arith.constant 5 : i32
    %r5 = rocdl.readlane %v, %lane5 : (i32, i32) -> i32
    memref.store %r5, %out[%tid, %c1] : memref<64x4xi32>
    %first = rocdl.readfirstlane %v : i32
    memref.store %first, %out[%tid, %c2] : memref<64x4xi32>
    %one = arith.constant 1 : i32
    %bit = arith.andi %v, %one : i32
    %odd = arith.cmpi eq, %bit, %one : i32
    %mask = rocdl.ballot %odd : i64
    %low = arith.trunci %mask : i64 to i32
    memref.store %low, %out[%tid, %c3] : memref<64x4xi32>
    gpu.return
  }
}
