// Scaled 8-bit-float GEMMs (torch._scaled_mm: row-wise A, column-wise B
// scales, bf16 output) at each chip's full fp8 rate, with the configs the
// compiler chooses. gfx942 multiplies FNUZ bytes 16 deep per 32x32
// instruction; gfx950's f8f6f4 instructions multiply OCP bytes 64 deep in 16
// passes (twice the rate of its legacy fp8 and bf16 instructions), a mixed
// fp8 x bf8 product naming B's format in the blgp field.
//
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t fp8 --transpose-b --scale-a row --scale-b column --out-type bf16 | tesselc --chip=gfx942 --emit=isa | FileCheck %s --check-prefix=GFX942
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --transpose-b --scale-a row --scale-b column --out-type bf16 | tesselc --chip=gfx950 --emit=isa | FileCheck %s --check-prefix=GFX950
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --transpose-b --scale-a row --scale-b column --out-type bf16 | tesselc --chip=gfx950 --emit=isa | sed -n '/^.LBB0_1:/,/s_cbranch_vccnz .LBB0_1/p' | FileCheck %s --check-prefix=LOOP950 --implicit-check-not=v_mov_b32 --implicit-check-not=v_xor
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --b-type f8E5M2 --transpose-b | tesselc --chip=gfx950 --emit=isa | FileCheck %s --check-prefix=MIXED
// RUN: tessel-gen matmul -m 4096 -n 4096 -k 4096 -t f8E4M3FN --transpose-b | tesselc --chip=gfx950 --emit=report | FileCheck %s --check-prefix=REPORT

// gfx942 runs it as stream-K (the kernel's loop over tiles around the K
// loop): no bounds masks up to the K loop's last MFMA.
// GFX942-LABEL: matmul:
// GFX942-NOT: scratch_
// GFX942-NOT: v_cndmask
// GFX942: v_mfma_f32_32x32x16_fp8_fp8
// GFX942-NOT: v_cndmask
// GFX942: s_cbranch_vcc{{n?}}z .LBB0_{{[0-9]+}}

// GFX950-LABEL: matmul:
// GFX950-NOT: scratch_
// GFX950: .LBB0_1:
// GFX950-NOT: v_mfma_f32_32x32x16_fp8
// GFX950-NOT: v_cndmask
// GFX950: v_mfma_f32_32x32x64_f8f6f4 v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}], v[{{[0-9]+}}:{{[0-9]+}}]{{$}}
// GFX950-NOT: v_mfma_f32_32x32x16_fp8
// GFX950: s_cbranch_vccnz .LBB0_1
// The scaled accumulator rounds to bf16 in hardware.
// GFX950: v_cvt_pk_bf16_f32

// gfx950's K loop (256x256x64 tiles on 8 waves, 8 MFMAs per wave and step)
// is unrolled by two with its operands read in place: no copies of the
// next step's registers (v_mov_b32) and no per-step swizzle arithmetic
// (v_xor: the slots are constants), 16 MFMAs and two barriers per
// iteration, each step's barrier after its fourth MFMA and its 12 LDS reads
// after the barrier, among the last four.
// LOOP950:       .LBB0_1:
// LOOP950-COUNT-4: v_mfma_f32_32x32x64_f8f6f4
// LOOP950-NOT:   ds_read_b128
// LOOP950:       s_barrier
// LOOP950-COUNT-12: ds_read_b128
// LOOP950-COUNT-4: v_mfma_f32_32x32x64_f8f6f4
// LOOP950-NOT:   ds_read_b128
// LOOP950:       s_barrier
// LOOP950-COUNT-12: ds_read_b128
// LOOP950:       s_cbranch_vccnz .LBB0_1

// B's E5M2 format (bf8) goes with B's registers: to the instruction's first
// operand (cbsz), the accumulator being transposed (operands swapped).
// MIXED: v_mfma_f32_32x32x64_f8f6f4 {{.*}} cbsz:1

// REPORT: scratch bytes     0
// REPORT: VGPR spills       0
// REPORT: SGPR spills       0
