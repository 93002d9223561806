// A hand-written gpu.module using amdgpu.mfma, compiled to ISA and to a real
// code object for each CDNA chip; the report is read back from the code
// object's metadata note.
//
// RUN: tesselc %s --chip=gfx90a --emit=isa | FileCheck %s --check-prefixes=ISA,ISA-GFX90A
// RUN: tesselc %s --chip=gfx942 --emit=isa | FileCheck %s --check-prefixes=ISA,ISA-GFX942
// RUN: tesselc %s --chip=gfx950 --emit=isa | FileCheck %s --check-prefixes=ISA,ISA-GFX950
// RUN: tesselc %s --chip=gfx90a --emit=report | FileCheck %s --check-prefixes=REPORT -DCHIP=gfx90a
// RUN: tesselc %s --chip=gfx942 --emit=report | FileCheck %s --check-prefixes=REPORT -DCHIP=gfx942
// RUN: tesselc %s --chip=gfx950 --emit=report | FileCheck %s --check-prefixes=REPORT -DCHIP=gfx950
// RUN: tesselc %s --chip=gfx942 --emit=report --report-format=json | FileCheck %s --check-prefix=JSON
// RUN: tesselc %s --chip=gfx942 -o %t.hsaco && llvm-readobj --file-headers --notes %t.hsaco | FileCheck %s --check-prefix=ELF
// RUN: tesselc %s --chip=gfx942 --emit=llvm | FileCheck %s --check-prefix=LLVM

// ISA-GFX90A: .amdgcn_target "amdgcn-amd-amdhsa--gfx90a
// ISA-GFX942: .amdgcn_target "amdgcn-amd-amdhsa--gfx942
// ISA-GFX950: .amdgcn_target "amdgcn-amd-amdhsa--gfx950
// ISA-LABEL: mfma_tile:
// ISA-GFX90A: v_mfma_f32_32x32x8bf16_1k
// ISA-GFX942: v_mfma_f32_32x32x8_bf16
// ISA-GFX950: v_mfma_f32_32x32x8_bf16
// ISA: v_mfma_f32_16x16x16{{_?}}f16
// ISA-NOT: {{scratch_(load|store)}}
// ISA: .private_segment_fixed_size: 0

// REPORT: kernel mfma_tile (amdgcn-amd-amdhsa--[[CHIP]])
// REPORT-NEXT: wavefront size    64
// REPORT-NEXT: workgroup         64x1x1
// REPORT-NEXT: VGPRs             {{[1-9][0-9]*}}
// REPORT-NEXT: AGPRs             {{[0-9]+}}
// REPORT-NEXT: SGPRs             {{[1-9][0-9]*}}
// REPORT-NEXT: LDS bytes         0
// REPORT-NEXT: scratch bytes     0
// REPORT-NEXT: VGPR spills       0
// REPORT-NEXT: SGPR spills       0
// REPORT-NEXT: kernarg bytes     {{[1-9][0-9]*}}
// REPORT-NEXT: occupancy         8 waves/SIMD of 8, limited by wave slots
// REPORT-NEXT: arguments:
// REPORT-NEXT: offset    0  size  8  global_buffer (generic)

// JSON: "chip": "gfx942"
// JSON: "lds_bytes": 0
// JSON: "name": "mfma_tile"
// JSON: "limited_by": "wave slots"
// JSON: "waves_per_simd": 8
// JSON: "reqd_workgroup_size": [
// JSON-NEXT: 64,
// JSON-NEXT: 1,
// JSON-NEXT: 1
// JSON: "scratch_bytes": 0
// JSON: "target": "amdgcn-amd-amdhsa--gfx942"

// ELF: Machine: EM_AMDGPU
// ELF: EF_AMDGPU_MACH_AMDGCN_GFX942
// ELF: NT_AMDGPU_METADATA
// ELF: .name: mfma_tile

// LLVM: define amdgpu_kernel void @mfma_tile
// LLVM: call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k
// LLVM: call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16

gpu.module @kernels {
  gpu.func @mfma_tile(%a: memref<64x4xbf16>, %b: memref<64x4xbf16>,
                      %h: memref<64x4xf16>, %c: memref<64x16xf32>,
                      %d: memref<64x4xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %lane = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %va = vector.load %a[%lane, %c0] : memref<64x4xbf16>, vector<4xbf16>
    %vb = vector.load %b[%lane, %c0] : memref<64x4xbf16>, vector<4xbf16>
    %vc = vector.load %c[%lane, %c0] : memref<64x16xf32>, vector<16xf32>
    %r = amdgpu.mfma 32x32x8 %va * %vb + %vc blgp = none
      : vector<4xbf16>, vector<4xbf16>, vector<16xf32>
    vector.store %r, %c[%lane, %c0] : memref<64x16xf32>, vector<16xf32>
    %vh = vector.load %h[%lane, %c0] : memref<64x4xf16>, vector<4xf16>
    %vd = vector.load %d[%lane, %c0] : memref<64x4xf32>, vector<4xf32>
    %s = amdgpu.mfma 16x16x16 %vh * %vh + %vd blgp = none
      : vector<4xf16>, vector<4xf16>, vector<4xf32>
    vector.store %s, %d[%lane, %c0] : memref<64x4xf32>, vector<4xf32>
    gpu.return
  }
}
