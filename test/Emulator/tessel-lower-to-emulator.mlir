// RUN: tessel-opt %s --split-input-file --tessel-to-rocdl="chip=gfx942" --tessel-lower-to-emulator="chip=gfx942" --verify-diagnostics | FileCheck %s

// The gpu.module becomes a host module of the same name; ids, LDS, barriers
// and MFMAs become runtime calls; every global and LDS access is checked,
// with its alignment. Barriers pass their index in the module's site table.
// CHECK-LABEL: module @kernels attributes {tessel.emu.chip = "gfx942"
// CHECK-SAME: tessel.emu.sites = ["{{.*}}tessel-lower-to-emulator.mlir:[[@LINE+33]]:5"]
// CHECK-NOT: gpu.module
// CHECK: llvm.func @__tessel_emu_
// CHECK-LABEL: llvm.func @tile(
// CHECK-SAME: tessel.emu.kernel
// CHECK-SAME: tessel.emu.lds_bytes = 512 : i64
// CHECK-NOT: rocdl.
// CHECK: %[[BASE:.*]] = llvm.call @__tessel_emu_lds(%{{.*}}) : (i64) -> !llvm.ptr
// CHECK: llvm.addrspacecast %[[BASE]] : !llvm.ptr to !llvm.ptr<3>
// CHECK: %[[ID:.*]] = llvm.call @__tessel_emu_workitem_id(%{{.*}}) : (i32) -> i32
// An 8-byte load of f16 elements assumes 2-byte alignment (the check's
// third operand); the fourth is the access kind (read, address space 0).
// CHECK: %[[BYTES:.*]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT: %[[ALIGN:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-NEXT: %[[KIND:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.call @__tessel_emu_check(%{{.*}}, %[[BYTES]], %[[ALIGN]], %[[KIND]]) : (!llvm.ptr, i64, i64, i32) -> ()
// CHECK-NEXT: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> vector<4xf16>
// A store to LDS: write bit, address space 3.
// CHECK: %[[STORE_KIND:.*]] = llvm.mlir.constant(769 : i32) : i32
// CHECK-NEXT: llvm.call @__tessel_emu_check({{.*}}, %[[STORE_KIND]]) : (!llvm.ptr, i64, i64, i32) -> ()
// CHECK-NEXT: llvm.store %{{.*}}, %{{.*}} : vector<4xf16>, !llvm.ptr<3>
// CHECK: %[[SITE:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.call @__tessel_emu_barrier(%[[SITE]]) : (i32) -> ()
// CHECK: llvm.call @__tessel_emu_mma(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> ()
// CHECK-NOT: rocdl.
gpu.module @kernels {
  gpu.func @tile(%a: memref<64x4xf16>, %c: memref<64x16xf32>)
      workgroup(%lds: memref<64x4xf16, #gpu.address_space<workgroup>>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %lane = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %va = vector.load %a[%lane, %c0] : memref<64x4xf16>, vector<4xf16>
    vector.store %va, %lds[%lane, %c0] : memref<64x4xf16, #gpu.address_space<workgroup>>, vector<4xf16>
    gpu.barrier
    %vl = vector.load %lds[%lane, %c0] : memref<64x4xf16, #gpu.address_space<workgroup>>, vector<4xf16>
    %vc = vector.load %c[%lane, %c0] : memref<64x16xf32>, vector<16xf32>
    %r = amdgpu.mfma 32x32x8 %vl * %vl + %vc blgp = none : vector<4xf16>, vector<4xf16>, vector<16xf32>
    vector.store %r, %c[%lane, %c0] : memref<64x16xf32>, vector<16xf32>
    gpu.return
  }
}

// -----

// Ops the emulator does not model are errors naming them.
gpu.module @unsupported {
  gpu.func @k(%x: memref<64xi32>) kernel {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<64xi32>
    // expected-error @+1 {{'rocdl.permlanex16' is not supported by the emulator}}
    %p = rocdl.permlanex16 %v, %v, %v, %v, 0, 0 : i32, i32
    memref.store %p, %x[%tid] : memref<64xi32>
    gpu.return
  }
}

// -----

// llvm.amdgcn.fdot2 (v_dot2_f32_f16, attention's row sums) becomes host
// arithmetic: a.x * b.x + a.y * b.y + c in f64, rounded to f32 once. Any
// other AMDGPU intrinsic called by name is an error, not a call the host
// cannot make.
// CHECK-LABEL: llvm.func @dot2(
// CHECK-NOT: llvm.call_intrinsic
// CHECK: %[[C:.*]] = llvm.fpext %{{.*}} : f32 to f64
// CHECK: %[[AX:.*]] = llvm.fpext %{{.*}} : f16 to f64
// CHECK: %[[BX:.*]] = llvm.fpext %{{.*}} : f16 to f64
// CHECK: %[[PX:.*]] = llvm.fmul %[[AX]], %[[BX]] : f64
// CHECK: %[[SX:.*]] = llvm.fadd %[[PX]], %[[C]] : f64
// CHECK: %[[AY:.*]] = llvm.fpext %{{.*}} : f16 to f64
// CHECK: %[[BY:.*]] = llvm.fpext %{{.*}} : f16 to f64
// CHECK: %[[PY:.*]] = llvm.fmul %[[AY]], %[[BY]] : f64
// CHECK: %[[SY:.*]] = llvm.fadd %[[PY]], %[[SX]] : f64
// CHECK: llvm.fptrunc %[[SY]] : f64 to f32
gpu.module @intrinsics {
  gpu.func @dot2(%x: memref<64xvector<2xf16>>, %y: memref<64xf32>) kernel {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<64xvector<2xf16>>
    %c = memref.load %y[%tid] : memref<64xf32>
    %false = arith.constant false
    %d = llvm.call_intrinsic "llvm.amdgcn.fdot2"(%v, %v, %c, %false) : (vector<2xf16>, vector<2xf16>, f32, i1) -> f32
    memref.store %d, %y[%tid] : memref<64xf32>
    gpu.return
  }
}

// -----

gpu.module @unknown_intrinsic {
  gpu.func @k(%x: memref<64xf32>) kernel {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<64xf32>
    // expected-error @+1 {{'llvm.call_intrinsic' op the emulator does not implement llvm.amdgcn.rsq}}
    %r = llvm.call_intrinsic "llvm.amdgcn.rsq"(%v) : (f32) -> f32
    memref.store %r, %x[%tid] : memref<64xf32>
    gpu.return
  }
}
