// tessel-layout prints which element each (wave, lane, register) holds, the
// inverse, and LDS bank conflicts. The catalogue's layouts are checked
// exhaustively against AMD's calculator in unittests/Target/MmaTest.cpp; here
// the tool's output is checked against the reference formulas row by row and
// against spot values of the calculator's listings (docs/hardware.md §3.7).

// The 32x32x8 accumulator: register 4 of lane 32 holds (12, 0).
// RUN: tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>' --shape 32x32 --format=csv | FileCheck %s --check-prefix=ACC
// ACC: wave,lane,register,dim0,dim1
// ACC: {{^}}0,32,4,12,0{{$}}
// RUN: tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>' --shape 32x32 --format=csv | %python %S/Inputs/check_mfma_layout.py c 32 8 | FileCheck %s --check-prefix=OK
// OK: OK

// Text form: one line per lane, registers in order (CALC: L32 of C/D).
// RUN: tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>' --shape 32x32 | FileCheck %s --check-prefix=TEXT
// TEXT: wave 0 lane 32: (4, 0) (5, 0) (6, 0) (7, 0) (12, 0) (13, 0) (14, 0) (15, 0) (20, 0) (21, 0) (22, 0) (23, 0) (28, 0) (29, 0) (30, 0) (31, 0)

// The transposed accumulator (operands swapped): lane 32 holds columns 4-7,
// 12-15, ... of row 0, every element checked against the swapped formula;
// the hardware formula fails it.
// RUN: tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1], transposed>' --shape 32x32 | FileCheck %s --check-prefix=TRANSPOSED
// TRANSPOSED: wave 0 lane 32: (0, 4) (0, 5) (0, 6) (0, 7) (0, 12) (0, 13) (0, 14) (0, 15) (0, 20) (0, 21) (0, 22) (0, 23) (0, 28) (0, 29) (0, 30) (0, 31)
// RUN: tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1], transposed>' --shape 32x32 --format=csv | %python %S/Inputs/check_mfma_layout.py ct 32 8 | FileCheck %s --check-prefix=OK
// RUN: tessel-layout '#tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1], transposed>' --shape 16x16 --format=csv | %python %S/Inputs/check_mfma_layout.py ct 16 16 | FileCheck %s --check-prefix=OK
// RUN: tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1], transposed>' --shape 32x32 --format=csv | not %python %S/Inputs/check_mfma_layout.py c 32 8

// Operands of v_mfma_f32_16x16x16_f16 with kWidth = 4, A and B.
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 4>' --shape 16x16 --format=csv | FileCheck %s --check-prefix=A16
// A16: wave,lane,register,dim0,dim1
// A16-NEXT: 0,0,0,0,0
// A16: 0,16,0,0,4
// A16-NEXT: 0,16,1,0,5
// A16: 0,47,3,15,11
// A16: 0,63,3,15,15
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 4>' --shape 16x16 --format=csv | %python %S/Inputs/check_mfma_layout.py a 16 16 | FileCheck %s --check-prefix=OK
// RUN: tessel-layout '#tessel.mma_operand<b, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 4>' --shape 16x16 --format=csv | FileCheck %s --check-prefix=B16
// B16: 0,16,0,4,0
// B16: 0,47,0,8,15
// B16: 0,63,3,15,15
// RUN: tessel-layout '#tessel.mma_operand<b, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 4>' --shape 16x16 --format=csv | %python %S/Inputs/check_mfma_layout.py b 16 16 | FileCheck %s --check-prefix=OK

// fp8 16x16x32 A on a 16x32 tile, kWidth = 8 (8 bytes per lane).
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_16x16x32_fp8_fp8", waves = [1, 1]>, kWidth = 8>' --shape 16x32 --format=csv | FileCheck %s --check-prefix=FP8
// FP8: 0,16,0,0,8
// FP8: 0,16,7,0,15
// FP8: 0,63,0,15,24
// FP8: 0,63,7,15,31
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_16x16x32_fp8_fp8", waves = [1, 1]>, kWidth = 8>' --shape 16x32 --format=csv | %python %S/Inputs/check_mfma_layout.py a 16 32 | FileCheck %s --check-prefix=OK
// RUN: tessel-layout '#tessel.mma_operand<b, #tessel.mma<"v_mfma_f32_16x16x32_fp8_fp8", waves = [1, 1]>, kWidth = 8>' --shape 32x16 --format=csv | %python %S/Inputs/check_mfma_layout.py b 16 32 | FileCheck %s --check-prefix=OK

// gfx12 WMMA, wave32, 16-bit operands: Tessel gives each lane 8
// consecutive K (lane 16 holds k = 8..15), so that LDS reads them in one
// 16-byte access. The hardware's own order (CALC rdna4: L16 of A holds
// k = 4..7 and 12..15) differs by a K permutation A and B share, which
// the product's sum over K does not see.
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1], chip = "gfx1201">, kWidth = 8>' --shape 16x16 --format=csv | FileCheck %s --check-prefix=WMMA
// WMMA: 0,16,0,0,8
// WMMA: 0,16,4,0,12
// WMMA: 0,16,7,0,15

// Inverse: each element with every lane holding it; gfx11 replicates A.
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1], chip = "gfx1100">, kWidth = 16>' --shape 16x16 --inverse | FileCheck %s --check-prefix=INV
// INV: (0, 0): wave 0 lane 0 register 0; wave 0 lane 16 register 0
// INV: (15, 15): wave 0 lane 15 register 15; wave 0 lane 31 register 15
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1], chip = "gfx1100">, kWidth = 16>' --shape 16x16 --inverse --format=csv | FileCheck %s --check-prefix=INVCSV
// INVCSV: dim0,dim1,wave,lane,register
// INVCSV-NEXT: 0,0,0,0,0
// INVCSV-NEXT: 0,0,0,16,0

// A memory layout prints offsets.
// RUN: tessel-layout '#tessel.swizzle<vec = 2, perPhase = 1, maxPhase = 2>' --shape 2x4 | FileCheck %s --check-prefix=SWZ
// SWZ: offset 0: (0, 0)
// SWZ: offset 4: (1, 2)
// SWZ: offset 6: (1, 0)

// Bank conflicts: the 32x32x8 A operand of a 2x2-wave 128x64 tile read 8
// bytes per lane from a plain row-major tile conflicts; the swizzle the
// chooser picks does not, for the read nor for a 16-byte coalesced write.
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2]>, kWidth = 4>' --shape 128x64 --bank-conflicts --access-bytes 8 --chip gfx942 | FileCheck %s --check-prefix=PLAIN
// PLAIN: LDS read of 8 bytes per lane through #tessel.swizzle<vec = 1, perPhase = 1, maxPhase = 1> on gfx942 (32 banks of 4 bytes)
// PLAIN: bank conflicts: 3840 extra cycles over 64 accesses (16 per wave, 4 waves); worst access 60 extra cycles
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2]>, kWidth = 4>' --shape 128x64 --choose-swizzle --access-bytes 8 --store-bytes 16 | FileCheck %s --check-prefix=CHOSEN
// CHOSEN: #tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 16>
// CHOSEN: write (16 bytes per lane): 0 extra cycles
// CHOSEN: read (8 bytes per lane): 0 extra cycles
// RUN: tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2]>, kWidth = 4>' --shape 128x64 --bank-conflicts --access-bytes 8 --lds '#tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 16>' | FileCheck %s --check-prefix=SWIZZLED
// SWIZZLED: bank conflicts: 0 extra cycles over 64 accesses
// A coalesced 16-byte write of the same tile.
// RUN: tessel-layout '#tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>' --shape 128x64 --bank-conflicts --write --lds '#tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 16>' | FileCheck %s --check-prefix=WRITE
// WRITE: LDS write of 16 bytes per lane
// WRITE: bank conflicts: 0 extra cycles over 16 accesses (4 per wave, 4 waves)

// Errors: a diagnostic and exit code 1.
// RUN: not tessel-layout '#tessel.mma<"v_mfma_f32_64x64x8_f16", waves = [1, 1]>' --shape 64x64 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unknown matrix instruction "v_mfma_f32_64x64x8_f16"
// RUN: not tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1' --shape 32x32 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: error: unbalanced '[' character
// RUN: not tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>' --shape 16x16 2>&1 | FileCheck %s --check-prefix=FIT
// FIT: tessel-layout: error: the accumulator tile 16x16 is not a power-of-two multiple of 32x32
// RUN: not tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>' 2>&1 | FileCheck %s --check-prefix=NOSHAPE
// NOSHAPE: tessel-layout: error: --shape is required
// RUN: not tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>' --shape 32xA 2>&1 | FileCheck %s --check-prefix=BADSHAPE
// BADSHAPE: tessel-layout: error: --shape must be sizes separated by 'x', like 32x8; got '32xA'
// RUN: not tessel-layout 'dense<1> : tensor<2xi32>' --shape 2 2>&1 | FileCheck %s --check-prefix=NOTLAYOUT
// NOTLAYOUT: is not a tessel layout
// RUN: not tessel-layout '#tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>' --shape 64x64 --bank-conflicts 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: tessel-layout: error: bank conflicts are analysed for a register layout
// RUN: not tessel-layout '#tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2]>, kWidth = 4>' --shape 128x64 --bank-conflicts --access-bytes 16 2>&1 | FileCheck %s --check-prefix=SPLIT
// SPLIT: tessel-layout: error: registers 0..7 are not contiguous in LDS: a 16-byte access cannot read them at once
// RUN: not tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>' --shape 32x32 --chip gfx1030 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: tessel-layout: error: unknown chip 'gfx1030'; known chips: gfx90a, gfx942, gfx950, gfx1100, gfx1201
// RUN: not tessel-layout '#tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>' --shape 32x32 --type f64 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: tessel-layout: error: unknown element type 'f64'
// Bounded input: tiles within the dialect's bounds, register layouts checked
// as a tensor encoding would be, attribute text within the parser limits.
// RUN: not tessel-layout '#tessel.swizzle<vec = 1, perPhase = 1, maxPhase = 1>' --shape 65536x65536 2>&1 | FileCheck %s --check-prefix=HUGETILE
// HUGETILE: tessel-layout: error: a tile may hold at most 1048576 elements
// RUN: not tessel-layout '#tessel.blocked<sizePerThread = [1, 1073741824], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>' --shape 64x64 2>&1 | FileCheck %s --check-prefix=HUGELANE
// HUGELANE: tessel-layout: error: sizePerThread[1] = 1073741824 exceeds the tile's size 64 in that dimension
// RUN: not tessel-layout "$(%python -c "print('['*300 + ']'*300)")" --shape 64x64 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: error: brackets nest deeper than 256 levels
