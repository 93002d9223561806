// math.erf has no AMDGPU instruction: it lowers to a call of the ROCm device
// library, which is linked only because it is referenced, then inlined.
//
// REQUIRES: rocm-device-libs
// RUN: tesselc %s --chip=gfx942 --emit=llvm | FileCheck %s --check-prefix=LLVM
// RUN: tesselc %s --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=ISA
// RUN: tesselc %s --chip=gfx90a --emit=report | FileCheck %s --check-prefix=REPORT
// RUN: tesselc %s --chip=gfx942 --opt-level=0 --emit=report | FileCheck %s --check-prefix=O0
// RUN: not tesselc %s --chip=gfx942 --rocm-device-libs=%t.missing --emit=isa 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: env TESSEL_ROCM_DEVICE_LIBS=%t.missing not tesselc %s --chip=gfx942 --emit=isa 2>&1 | FileCheck %s --check-prefix=MISSING

// The kernel is the only external symbol left; the library code is internal.
// LLVM: define amdgpu_kernel void @erf_kernel
// LLVM-NOT: declare {{.*}}@__ocml
// LLVM-NOT: define {{(dso_local )?}}{{(hidden )?}}{{.*}}@__ocml

// ISA-LABEL: erf_kernel:
// ISA-NOT: s_swappc
// ISA: s_endpgm

// REPORT: kernel erf_kernel
// REPORT: scratch bytes     0

// At -O0 the library calls stay calls, but they are linked in.
// O0: kernel erf_kernel (amdgcn-amd-amdhsa--gfx942)
// O0: occupancy

// MISSING: error: cannot load ROCm device library '{{.*}}missing{{/|\\}}ocml.bc'
// MISSING-SAME: (install rocm-device-libs or set TESSEL_ROCM_DEVICE_LIBS)

gpu.module @lib_calls {
  gpu.func @erf_kernel(%x: memref<256xf32>) kernel
      attributes {known_block_size = array<i32: 256, 1, 1>} {
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<256xf32>
    %e = math.erf %v : f32
    memref.store %e, %x[%tid] : memref<256xf32>
    gpu.return
  }
}

// A module without library calls must not need the libraries at all.
// RUN: tesselc %S/mfma-hsaco.mlir --chip=gfx942 --rocm-device-libs=%t.missing --emit=report | FileCheck %s --check-prefix=NOLIBS
// NOLIBS: kernel mfma_tile
