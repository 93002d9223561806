// tessel-select-config ranks candidate configs with the analytical form of
// the performance model; `explain` says why the winner won, and a tuning
// database (tessel-tune) overrides the model for the problems it holds.
//
// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942 explain=1 explain-count=2}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942 tuning-db=%S/Inputs/tuning-db.json explain=1}))' 2>&1 | FileCheck %s --check-prefix=DB
// RUN: not tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942 tuning-db=%S/Inputs/tuning-db-bad.json}))' 2>&1 | FileCheck %s --check-prefix=BAD-ENTRY
// RUN: not tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942 tuning-db=%S/Inputs/tuning-db-not-config.json}))' 2>&1 | FileCheck %s --check-prefix=NOT-CONFIG
// RUN: not tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942 tuning-db=%t.missing.json}))' 2>&1 | FileCheck %s --check-prefix=MISSING

// A 1024^3 GEMM has 64 tiles of 128x128 for 304 CUs: the model picks small
// tiles that give every SIMD waves, and says what binds the winner and how
// far behind the runners-up are.
// EXPLAIN: remark: chose #tessel.config<{{.*}}> of {{[0-9]+}} candidates on gfx942: predicted {{[0-9.]+}} us, {{[0-9.]+}}% of peak; K step of {{[0-9]+}} clocks bound by {{[A-Za-z /0-9]+}} ({{[0-9]}} wave(s) per SIMD on 4 of 4 SIMDs, matrix pipe busy {{[0-9]+}}%); 512 workgroup(s) in 1 round(s)
// EXPLAIN: note: runner-up #tessel.config<{{.*}}>: {{[0-9.]+}} us ({{1\.[0-9]+}}x)
// EXPLAIN: note: runner-up #tessel.config<{{.*}}>: {{[0-9.]+}} us ({{1\.[0-9]+}}x)
// EXPLAIN-NOT: runner-up

// DB: remark: chose #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16"> from the tuning database '{{.*}}tuning-db.json' (hand-written for this test)
// DB: tessel.matmul {{.*}} {config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">}

// BAD-ENTRY: error: tuning database '{{.*}}tuning-db-bad.json': entry 0 needs "chip", "problem" and "config" strings
// NOT-CONFIG: error: 'tessel.matmul' op tuning database '{{.*}}' holds '#tessel.blocked<{{.*}}>' for this problem, which is not a #tessel.config
// MISSING: error: tuning database '{{.*}}missing.json': No such file or directory
func.func @small(%a: memref<1024x1024xbf16>, %b: memref<1024x1024xbf16, strided<[1, 1024]>>, %c: memref<1024x1024xbf16>) {
  tessel.matmul ins(%a, %b : memref<1024x1024xbf16>, memref<1024x1024xbf16, strided<[1, 1024]>>) outs(%c : memref<1024x1024xbf16>)
  return
}

