// Intrinsics the chip does not have are a diagnostic at the op before code
// generation, not an abort in the AMDGPU backend ("LLVM ERROR: Cannot
// select"); the same module compiles for a chip that has them.
//
// RUN: not tesselc %s --chip=gfx942 --gpu-module=permute --emit=isa 2>&1 | FileCheck %s --check-prefix=PERMUTE
// RUN: tesselc %s --chip=gfx1100 --gpu-module=permute --emit=isa | FileCheck %s --check-prefix=RDNA
// RUN: not tesselc %s --chip=gfx942 --gpu-module=doubled_k --emit=isa 2>&1 | FileCheck %s --check-prefix=DOUBLED-K
// RUN: tesselc %s --chip=gfx950 --gpu-module=doubled_k --emit=isa | FileCheck %s --check-prefix=GFX950
// RUN: not tesselc %s --chip=gfx90a --gpu-module=fp8 --emit=isa 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: not tesselc %s --chip=gfx1100 --gpu-module=fp8 --emit=isa 2>&1 | FileCheck %s --check-prefix=MFMA-ON-RDNA
// RUN: not tesselc %s --chip=gfx942 --gpu-module=swap --emit=isa 2>&1 | FileCheck %s --check-prefix=SWAP

// PERMUTE: chip-intrinsics.mlir:[[# @LINE + 5]]:10: error: 'rocdl.permlanex16' is not available on gfx942 (CDNA3): it exists on RDNA chips (gfx10 and later) only
// PERMUTE-NOT: LLVM ERROR
// RDNA: v_permlanex16_b32
gpu.module @permute {
  gpu.func @k(%v: i32, %out: !llvm.ptr<1>) kernel {
    %p = rocdl.permlanex16 %v, %v, %v, %v, 0, 0 : i32, i32
    llvm.store %p, %out : i32, !llvm.ptr<1>
    gpu.return
  }
}

// DOUBLED-K: error: 'rocdl.mfma.f32.32x32x16.bf16' is not available on gfx942 (CDNA3): the instruction exists on gfx950 only
// GFX950: v_mfma_f32_32x32x16_bf16
gpu.module @doubled_k {
  gpu.func @k(%a: vector<8xbf16>, %c: vector<16xf32>, %out: !llvm.ptr<1>) kernel {
    %z = llvm.mlir.constant(0 : i32) : i32
    %d = rocdl.mfma.f32.32x32x16.bf16 %a, %a, %c, %z, %z, %z : (vector<8xbf16>, vector<8xbf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
    llvm.store %d, %out : vector<16xf32>, !llvm.ptr<1>
    gpu.return
  }
}

// FP8: error: 'rocdl.mfma.f32.16x16x32.fp8.fp8' is not available on gfx90a (CDNA2): the instruction exists on gfx942, gfx950 only
// MFMA-ON-RDNA: error: 'rocdl.mfma.f32.16x16x32.fp8.fp8' is not available on gfx1100 (RDNA3): MFMA instructions exist on CDNA chips only
gpu.module @fp8 {
  gpu.func @k(%a: i64, %c: vector<4xf32>, %out: !llvm.ptr<1>) kernel {
    %z = llvm.mlir.constant(0 : i32) : i32
    %d = rocdl.mfma.f32.16x16x32.fp8.fp8 %a, %a, %c, %z, %z, %z : (i64, i64, vector<4xf32>, i32, i32, i32) -> vector<4xf32>
    llvm.store %d, %out : vector<4xf32>, !llvm.ptr<1>
    gpu.return
  }
}

// SWAP: error: 'rocdl.permlane32.swap' is not available on gfx942 (CDNA3): it exists on gfx950 only
gpu.module @swap {
  gpu.func @k(%v: i32, %out: !llvm.ptr<1>) kernel {
    %p = rocdl.permlane32.swap %v, %v, false, false : (i32, i32) -> !llvm.struct<(i32, i32)>
    %x = llvm.extractvalue %p[0] : !llvm.struct<(i32, i32)>
    llvm.store %x, %out : i32, !llvm.ptr<1>
    gpu.return
  }
}
