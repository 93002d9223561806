// Bad input gets a diagnostic with a location and exit code 1, never a crash,
// and never a half-written output file.
//
// RUN: not tesselc %s --chip=gfx9000 2>&1 | FileCheck %s --check-prefix=CHIP
// CHIP: tesselc: error: unknown chip 'gfx9000'; known chips: gfx90a, gfx942, gfx950, gfx1100, gfx1201
//
// RUN: not tesselc %t.does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: tesselc: error: cannot open input file '{{.*}}does-not-exist.mlir'
//
// RUN: not tesselc %s --opt-level=7 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: tesselc: error: --opt-level must be 0, 1, 2 or 3
//
// An output path under a regular file cannot be created, whoever runs it.
// RUN: touch %t.file
// RUN: not tesselc %S/Inputs/two-gpu-modules.mlir --gpu-module=first -o %t.file/out.hsaco 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: tesselc: error: cannot open output file '{{.*}}.file/out.hsaco'
//
// A failed compile leaves no output behind.
// RUN: rm -f %t.out
// RUN: not tesselc %S/Inputs/fp8-on-gfx90a.mlir --chip=gfx90a -o %t.out 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: not test -e %t.out
// FP8: fp8-on-gfx90a.mlir:4:10: error: 'amdgpu.mfma' op no intrinsic matching MFMA size on given chipset
// FP8-NOT: error:
//
// RUN: not tesselc %S/Inputs/malformed.mlir 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:4:{{[0-9]+}}: error: custom op 'gpu.retur' is unknown
//
// RUN: not tesselc %S/Inputs/problem-level.mlir 2>&1 | FileCheck %s --check-prefix=L0
//
// An impossible config is an error before any code exists.
// RUN: tessel-gen matmul -m 64 -n 64 -k 64 -t bf16 --config '#tessel.config<tile = [256, 256, 256], waves = [2, 2], stages = 1>' | not tesselc --chip=gfx942 2>&1 | FileCheck %s --check-prefix=BUDGET
// BUDGET: error: 'tessel.matmul' op the config needs 262144 bytes of LDS, over the 65536 of gfx942
// L0: problem-level.mlir:4:3: error: 'tessel.attention' op the config needs 131072 bytes of LDS, over the 65536 of gfx942
//
// RUN: not tesselc %S/Inputs/no-gpu-module.mlir 2>&1 | FileCheck %s --check-prefix=NOGPU
// NOGPU: tesselc: error: the input has no gpu.module to compile
//
// RUN: not tesselc %S/Inputs/two-gpu-modules.mlir -o %t.two 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: tesselc: error: the input has 2 gpu.modules but a code object holds one: pick it with --gpu-module=NAME
// RUN: tesselc %S/Inputs/two-gpu-modules.mlir --gpu-module=second --emit=report | FileCheck %s --check-prefix=PICK
// PICK: kernel second_kernel
// PICK-NOT: kernel first_kernel
// RUN: not tesselc %S/Inputs/two-gpu-modules.mlir --gpu-module=third 2>&1 | FileCheck %s --check-prefix=NONAME
// NONAME: tesselc: error: the input has no gpu.module named 'third'
//
// More LDS than the chip has is an error before any code object is written.
// RUN: not tesselc %S/Inputs/lds-over-budget.mlir --chip=gfx942 -o %t.lds 2>&1 | FileCheck %s --check-prefix=LDS
// RUN: not test -e %t.lds
// RUN: tesselc %S/Inputs/lds-over-budget.mlir --chip=gfx950 --emit=report | FileCheck %s --check-prefix=LDS950
// LDS: lds-over-budget.mlir:1:1: error: AMDGPU code generation failed
// LDS: note: local memory (98304) exceeds limit (65536) in function 'big_lds'
// LDS950: LDS bytes         98304
