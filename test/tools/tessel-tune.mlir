// tessel-tune compiles the analytical model's best candidates, ranks them
// with the ISA-level model, writes the winner to a tuning database, and
// tessel-select-config{tuning-db=...} then gives the problem that config.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: tessel-tune %s --chip=gfx942 --top=3 --db=%t/db.json -o %t/tuned.mlir > %t/ranking.txt
// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942 tuning-db=%t/db.json}))' > %t/selected.mlir
// RUN: cat %t/ranking.txt %t/tuned.mlir %t/selected.mlir | FileCheck %s
// RUN: FileCheck %s --input-file=%t/db.json --check-prefix=DB
// RUN: tessel-tune %s --chip=gfx942 --top=2 --format=json | FileCheck %s --check-prefix=JSON
// RUN: tessel-tune %s --chip=gfx1100 --top=2 | FileCheck %s --check-prefix=RDNA
// RUN: tessel-tune %s --chip=gfx942 | FileCheck %s --check-prefix=DEFAULT
// RUN: not tessel-tune %s --top=0 2>&1 | FileCheck %s --check-prefix=TOP
// RUN: tessel-gen matmul -m 64 -n 64 -k 64 -t f16 --dynamic=m | not tessel-tune - 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// RUN: echo 'func.func @f() { return }' | not tessel-tune - 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not tessel-tune %s --db=%S/../Transforms/Inputs/tuning-db-bad.json 2>&1 | FileCheck %s --check-prefix=BADDB

// Three trials, ranked by the ISA-level model; each names its place in the
// analytical ranking.
// CHECK: matmul bf16 x bf16 -> bf16, 512x512x256, batch 1, A k-contiguous, B k-contiguous (predictions):
// CHECK-NEXT: rank analytic analytic ISA model eff. VGPR+AGPR config / binding limit
// CHECK-NEXT: 1 #{{[1-3]}} {{[0-9.]+}} us {{[0-9.]+}} us {{[0-9.]+}}% {{[0-9]+}}+{{[0-9]+}} [[WINNER:#tessel.config<.*>]]; {{.*}}
// CHECK-NEXT: 2 #{{[1-3]}}
// CHECK-NEXT: 3 #{{[1-3]}}
// CHECK-NOT: failed

// Without --top: the analytical top 16.
// DEFAULT: {{^}}  16 #{{[0-9]+}} 
// DEFAULT-NOT: {{^}}  17 #

// The winner is in the tuned module, and select-config reads it back from
// the database.
// CHECK: tessel.matmul {{.*}} {config = [[WINNER]]}
// CHECK: tessel.matmul {{.*}} {config = [[WINNER]]}

// DB: "chip": "gfx942"
// DB: "config": "{{.*}}"
// DB: "predicted_us": {{[0-9.]+}}
// DB: "problem": "matmul bf16 x bf16 -> bf16, 512x512x256, batch 1, A k-contiguous, B k-contiguous"
// DB: "source": "tessel-tune: ISA-level model, best of 3 (analytical rank #{{[1-3]}})"
// DB: "version": 1

// JSON: "prediction": true
// JSON: "problem": "matmul bf16 x bf16 -> bf16, 512x512x256
// JSON: "analytical_rank":
// JSON: "model_us":

// RDNA: 1 #{{[0-9]+}} {{.*}} instr = "v_wmma_f32_16x16x16_bf16">
// TOP: error: --top must be between 1 and 64
// DYNAMIC: error: tessel-tune needs static sizes
// EMPTY: error: the input has no tessel.matmul without a config to tune
// BADDB: error: tuning database '{{.*}}tuning-db-bad.json': entry 0 needs
func.func @small(%a: memref<512x256xbf16>, %b: memref<256x512xbf16, strided<[1, 256]>>, %c: memref<512x512xbf16>) {
  tessel.matmul ins(%a, %b : memref<512x256xbf16>, memref<256x512xbf16, strided<[1, 256]>>) outs(%c : memref<512x512xbf16>)
  return
}
