// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" --split-input-file --verify-diagnostics | FileCheck %s
// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx950" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=GFX950
// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx90a" --split-input-file --verify-diagnostics | FileCheck %s --check-prefix=GFX90A

// Row reductions of a 32x32 MFMA accumulator tile: each lane holds column
// lane % 32 of rows spread over its 16 registers, so a row's maximum is a
// butterfly over lane bits 0-4 (five xor shuffles per row the lane holds,
// maxnum to combine); the result is one register per row ([32, 1]); the
// broadcast to a wider tile moves registers within the lane; iota gives each
// register's coordinate.
#mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#rows = #tessel.linear<register = [[1, 0], [2, 0], [8, 0], [16, 0]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [4, 0]]>
// CHECK-LABEL: gpu.func @rows
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: arith.maxnumf
// CHECK-COUNT-79: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-16: arith.index_cast {{.*}} : index to i32
// CHECK: gpu.return
func.func @rows(%x: memref<32x32xf32>, %y: memref<32x64xf32>, %z: memref<32x32xi32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<32x32xf32> -> tensor<32x32xf32, #mma>
  %m = tessel.reduce "max" %t along 1 : tensor<32x32xf32, #mma> -> tensor<32x1xf32, #rows>
  %w = tessel.broadcast %m : tensor<32x1xf32, #rows> -> tensor<32x64xf32, #mma>
  tessel.store %w, %y[%c0, %c0] : tensor<32x64xf32, #mma>, memref<32x64xf32>
  %i = tessel.iota 0 : tensor<32x32xi32, #mma>
  tessel.store %i, %z[%c0, %c0] : tensor<32x32xi32, #mma>, memref<32x32xi32>
  return
}

// -----

// A column sum within lanes: the 16 registers fold into one and no value
// crosses lanes (no shuffle, no v_permlane32_swap on gfx950); the plain sum
// of the [2, 32] result after it is the half-waves' one exchange.
#mma2 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#halves = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]>
#columns2 = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
// CHECK-LABEL: gpu.func @columns_within_lanes
// CHECK-COUNT-15: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: {{gpu.shuffle|rocdl.permlane32.swap}}
// CHECK: amdgpu.raw_buffer_store %{{.*}} : f32 -> memref<2x32xf32>
// CHECK: gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: gpu.shuffle
// GFX950-LABEL: gpu.func @columns_within_lanes
// GFX950-NOT: rocdl.permlane32.swap
// GFX950: amdgpu.raw_buffer_store %{{.*}} : f32 -> memref<2x32xf32>
// GFX950: rocdl.permlane32.swap
// GFX950-NOT: rocdl.permlane32.swap
func.func @columns_within_lanes(%x: memref<32x32xf32>, %y: memref<2x32xf32>, %z: memref<1x32xf32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<32x32xf32> -> tensor<32x32xf32, #mma2>
  %p = tessel.reduce "add" %t along 0 within_lanes : tensor<32x32xf32, #mma2> -> tensor<2x32xf32, #halves>
  tessel.store %p, %y[%c0, %c0] : tensor<2x32xf32, #halves>, memref<2x32xf32>
  %l = tessel.reduce "add" %p along 0 : tensor<2x32xf32, #halves> -> tensor<1x32xf32, #columns2>
  tessel.store %l, %z[%c0, %c0] : tensor<1x32xf32, #columns2>, memref<1x32xf32>
  return
}

// -----

// Column reductions of the same tile stay in the lane: its 16 registers
// fold into one (15 adds), then one shuffle joins the two half-waves that
// hold the column's other rows; the [1, 32] result is one register, stored
// once per column (lanes 32-63 hold copies: their row index is sent past
// the end, where the buffer store is dropped; no branch).
#mma1 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#columns = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
// CHECK-LABEL: gpu.func @columns
// CHECK-COUNT-15: arith.addf
// CHECK: gpu.shuffle  xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NOT: gpu.shuffle
// CHECK: arith.addf
// CHECK: %[[BIT:.*]] = arith.andi %{{.*}}, %c32 : index
// CHECK: %[[HOLDER:.*]] = arith.cmpi eq, %[[BIT]], %c0 : index
// CHECK: %[[VALID:.*]] = arith.andi %[[HOLDER]], %{{.*}} : i1
// CHECK: %[[ROW:.*]] = arith.select %[[VALID]], %c0, %c1 : index
// CHECK: %[[ROW32:.*]] = arith.index_cast %[[ROW]] : index to i32
// CHECK-NOT: scf.if
// CHECK: amdgpu.raw_buffer_store %{{.*}} -> %{{.*}}[%[[ROW32]], %{{.*}}] : f32 -> memref<1x32xf32>, i32, i32
// CHECK: gpu.return
// On gfx950 the half-waves swap their values with one v_permlane32_swap of
// two copies: each lane gets its own value in one result and the other
// half's in the other, and adds the two (a shuffle by 32 would lower to the
// same swap, then compare and select to find the other half's value).
// GFX950-LABEL: gpu.func @columns
// GFX950-COUNT-15: arith.addf
// GFX950-NOT: gpu.shuffle
// GFX950: %[[BITS:.*]] = arith.bitcast %[[SUM:.*]] : f32 to i32
// GFX950-NEXT: %[[SWAP:.*]] = rocdl.permlane32.swap %[[BITS]], %[[BITS]], false, false : (i32, i32) -> <(i32, i32)>
// GFX950-NEXT: %[[FIRST:.*]] = llvm.extractvalue %[[SWAP]][0] : !llvm.struct<(i32, i32)>
// GFX950-NEXT: %[[A:.*]] = arith.bitcast %[[FIRST]] : i32 to f32
// GFX950-NEXT: %[[SECOND:.*]] = llvm.extractvalue %[[SWAP]][1] : !llvm.struct<(i32, i32)>
// GFX950-NEXT: %[[B:.*]] = arith.bitcast %[[SECOND]] : i32 to f32
// GFX950-NEXT: arith.addf %[[A]], %[[B]] : f32
// GFX950-NOT: gpu.shuffle
// GFX950: gpu.return
func.func @columns(%x: memref<32x32xf32>, %y: memref<1x32xf32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<32x32xf32> -> tensor<32x32xf32, #mma1>
  %s = tessel.reduce "add" %t along 0 : tensor<32x32xf32, #mma1> -> tensor<1x32xf32, #columns>
  tessel.store %s, %y[%c0, %c0] : tensor<1x32xf32, #columns>, memref<1x32xf32>
  return
}

// -----

// A sum of f16 values widened to f32 (attention's row sums of P): on gfx90a
// v_dot2_f32_f16 adds a pair of neighbouring registers to an f32 sum, in
// two chains (8 instructions for the 16 registers, then one add), before
// the shuffle across the half-waves. gfx942 and gfx950 do not issue a dot
// product beside the wave's own matrix instructions (docs/hardware.md
// §7e): outside a ping-pong loop's phases the sum adds the widened values.
#mma3 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#columns3 = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
// GFX90A-LABEL: gpu.func @sum_of_halves
// GFX90A: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : vector<2xf16>
// GFX90A: %[[PAIR0:.*]] = vector.shuffle %[[H:.*]], %[[H]] [0, 1] : vector<16xf16>, vector<16xf16>
// GFX90A: %[[A0:.*]] = llvm.call_intrinsic "llvm.amdgcn.fdot2"(%[[PAIR0]], %[[ONES]], %[[ZERO:.*]], %[[FALSE:.*]]) : (vector<2xf16>, vector<2xf16>, f32, i1) -> f32
// GFX90A: %[[PAIR1:.*]] = vector.shuffle %[[H]], %[[H]] [2, 3]
// GFX90A: %[[B0:.*]] = llvm.call_intrinsic "llvm.amdgcn.fdot2"(%[[PAIR1]], %[[ONES]], %[[ZERO]], %[[FALSE]])
// GFX90A: %[[PAIR2:.*]] = vector.shuffle %[[H]], %[[H]] [4, 5]
// GFX90A: llvm.call_intrinsic "llvm.amdgcn.fdot2"(%[[PAIR2]], %[[ONES]], %[[A0]], %[[FALSE]])
// GFX90A: %[[PAIR3:.*]] = vector.shuffle %[[H]], %[[H]] [6, 7]
// GFX90A: llvm.call_intrinsic "llvm.amdgcn.fdot2"(%[[PAIR3]], %[[ONES]], %[[B0]], %[[FALSE]])
// GFX90A-COUNT-4: llvm.call_intrinsic "llvm.amdgcn.fdot2"
// GFX90A-NOT: llvm.call_intrinsic
// GFX90A: %[[SUM:.*]] = arith.addf
// GFX90A: gpu.shuffle  xor %[[SUM]], %{{.*}}, %{{.*}} : f32
// GFX90A: gpu.return
// CHECK-LABEL: gpu.func @sum_of_halves
// CHECK-NOT: fdot2
// CHECK: arith.extf %{{.*}} : vector<16xf16> to vector<16xf32>
// CHECK-COUNT-15: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: fdot2
// CHECK: gpu.shuffle  xor
// CHECK: gpu.return
func.func @sum_of_halves(%x: memref<32x32xf16>, %y: memref<1x32xf32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<32x32xf16> -> tensor<32x32xf16, #mma3>
  %w = arith.extf %t : tensor<32x32xf16, #mma3> to tensor<32x32xf32, #mma3>
  %s = tessel.reduce "add" %w along 0 : tensor<32x32xf32, #mma3> -> tensor<1x32xf32, #columns3>
  tessel.store %s, %y[%c0, %c0] : tensor<1x32xf32, #columns3>, memref<1x32xf32>
  return
}

// -----

// The same sum in a ping-pong loop (a tessel.phase_barrier in its body),
// whose phases keep it away from the wave's products, takes the dot
// products on gfx942 too.
#mma4 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#columns4 = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
// CHECK-LABEL: gpu.func @sum_of_halves_in_phases
// CHECK: scf.for
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.amdgcn.fdot2"
// CHECK: rocdl.s.barrier
func.func @sum_of_halves_in_phases(%x: memref<32x32xf16>, %y: memref<1x32xf32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : tensor<1x32xf32, #columns4>
  %t = tessel.load %x[%c0, %c0] : memref<32x32xf16> -> tensor<32x32xf16, #mma4>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (tensor<1x32xf32, #columns4>) {
    %w = arith.extf %t : tensor<32x32xf16, #mma4> to tensor<32x32xf32, #mma4>
    %s = tessel.reduce "add" %w along 0 : tensor<32x32xf32, #mma4> -> tensor<1x32xf32, #columns4>
    %a = arith.addf %acc, %s : tensor<1x32xf32, #columns4>
    tessel.phase_barrier matrix
    scf.yield %a : tensor<1x32xf32, #columns4>
  }
  tessel.store %r, %y[%c0, %c0] : tensor<1x32xf32, #columns4>, memref<1x32xf32>
  return
}

// -----

// A reduction across waves is refused: the lowering keeps reductions in a
// wave.
#mma2 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 2]>
#rows2 = #tessel.linear<register = [[1, 0], [2, 0], [8, 0], [16, 0]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [4, 0]], wave = [[0, 0]]>
func.func @across_waves(%x: memref<32x64xf32>) attributes {tessel.workgroup_size = 128 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.load %x[%c0, %c0] : memref<32x64xf32> -> tensor<32x64xf32, #mma2>
  // expected-error @+1 {{'tessel.reduce' op the reduced dimension is split across waves; reductions stay within a wave}}
  %m = tessel.reduce "add" %t along 1 : tensor<32x64xf32, #mma2> -> tensor<32x1xf32, #rows2>
  %w = tessel.broadcast %m : tensor<32x1xf32, #rows2> -> tensor<32x64xf32, #mma2>
  tessel.store %w, %x[%c0, %c0] : tensor<32x64xf32, #mma2>, memref<32x64xf32>
  return
}

// -----

// A bound on an iota (the attention's key masks): the accumulator's row is
// lane part + register constant, so each register compares its constant
// against the bound less the lane part, computed once: no per-element
// coordinate. Other predicates keep the coordinates.
#mma2 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
// CHECK-LABEL: gpu.func @iota_bound
// CHECK: %[[R0:.*]] = arith.subi %arg0, %[[LANE:.*]] : i32
// CHECK-NEXT: arith.cmpi sgt, %[[R0]], %c0_i32 : i32
// CHECK-NEXT: arith.subi %arg0, %[[LANE]] : i32
// CHECK-NEXT: arith.cmpi sgt, %{{.*}}, %c1_i32 : i32
// CHECK-COUNT-14: arith.cmpi sgt, %{{.*}}, %c{{[0-9]+}}_i32 : i32
// CHECK-NOT: arith.cmpi {{.*}} : i32
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK: gpu.return
func.func @iota_bound(%n: i32, %y: memref<32x32xi32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %i = tessel.iota 0 : tensor<32x32xi32, #mma2>
  %bound = tensor.splat %n : tensor<32x32xi32, #mma2>
  %zero = arith.constant dense<0> : tensor<32x32xi32, #mma2>
  %below = arith.cmpi slt, %i, %bound : tensor<32x32xi32, #mma2>
  %a = arith.select %below, %bound, %zero : tensor<32x32xi1, #mma2>, tensor<32x32xi32, #mma2>
  %above = arith.cmpi sgt, %i, %bound : tensor<32x32xi32, #mma2>
  %c = arith.select %above, %a, %zero : tensor<32x32xi1, #mma2>, tensor<32x32xi32, #mma2>
  tessel.store %c, %y[%c0, %c0] : tensor<32x32xi32, #mma2>, memref<32x32xi32>
  return
}

// -----

// Lanes exchange integers and floats: an index tile is rejected with the
// rule (on gfx950 the half-wave swap took its bit width and crashed).
#mma5 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#columns5 = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
func.func @index_columns(%y: memref<1x32xi32>) attributes {tessel.workgroup_size = 64 : i64} {
  %c0 = arith.constant 0 : index
  %t = tessel.iota 0 : tensor<32x32xi32, #mma5>
  %i = arith.index_cast %t : tensor<32x32xi32, #mma5> to tensor<32x32xindex, #mma5>
  // expected-error @+1 {{'tessel.reduce' op reduces 'index' elements; lanes exchange integers and floats only (cast an index tile to i32)}}
  %s = tessel.reduce "max" %i along 0 : tensor<32x32xindex, #mma5> -> tensor<1x32xindex, #columns5>
  %r = arith.index_cast %s : tensor<1x32xindex, #columns5> to tensor<1x32xi32, #columns5>
  tessel.store %r, %y[%c0, %c0] : tensor<1x32xi32, #columns5>, memref<1x32xi32>
  return
}
