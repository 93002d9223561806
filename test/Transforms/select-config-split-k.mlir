// tessel-select-config chooses split-K through the performance model.
// A decode GEMM (M = 16) has 128 tiles of 16x32 for 304 CUs: split-K gives
// every CU work, and the model counts the partials' traffic and the last
// split's summing. A dynamic K leaves no workspace to allocate, so no
// split.
// RUN: tessel-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942 explain=1 explain-count=0}))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SPLITK
// SPLITK: remark: chose #tessel.config<{{.*}}, splits = {{[0-9]+}}> of {{[0-9]+}} candidates on gfx942{{.*}}; split-K over {{[0-9]+}} workgroups per tile, the last one sums
// SPLITK: remark: chose #tessel.config<{{[^>]*}}"> of {{[0-9]+}} candidates on gfx942

func.func @decode(%a: memref<16x4096xbf16>, %b: memref<4096x4096xbf16, strided<[1, 4096]>>, %c: memref<16x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<16x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>) outs(%c : memref<16x4096xbf16>)
  return
}

// -----

func.func @decode_dynamic_k(%a: memref<16x?xbf16>, %b: memref<?x4096xbf16>, %c: memref<16x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<16x?xbf16>, memref<?x4096xbf16>) outs(%c : memref<16x4096xbf16>)
  return
}
