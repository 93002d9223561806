// tessel-gen prints verified L0 IR; what it prints parses back.
//
// RUN: tessel-gen matmul -m 333 -n 257 -k 190 -t bf16 --transpose-b | FileCheck %s --check-prefix=TB
// TB-LABEL: func.func @matmul
// TB-SAME: (%[[A:.*]]: memref<333x190xbf16>, %[[B:.*]]: memref<190x257xbf16, strided<[1, 190]>>, %[[C:.*]]: memref<333x257xbf16>)
// TB: tessel.matmul ins(%[[A]], %[[B]] : memref<333x190xbf16>, memref<190x257xbf16, strided<[1, 190]>>) outs(%[[C]] : memref<333x257xbf16>)
// TB-NOT: epilogue
//
// RUN: tessel-gen matmul -m 64 -n 128 -k 32 -t f16 --transpose-a --batch 4 --dynamic m,k | FileCheck %s --check-prefix=TA
// TA: memref<4x?x?xf16, strided<[?, 1, ?]>>, memref<4x?x128xf16>) outs(%{{.*}} : memref<4x?x128xf16>)
//
// C stored column-major (M contiguous), batched: the batch stride covers a
// whole M x N matrix.
// RUN: tessel-gen matmul -m 64 -n 48 -k 32 -t bf16 --transpose-c --batch 2 | FileCheck %s --check-prefix=TC
// TC: outs(%{{.*}} : memref<2x64x48xbf16, strided<[3072, 1, 64]>>)
//
// RUN: tessel-gen matmul -m 16 -n 4096 -k 4096 -t bf16 --bias n --activation silu --name proj | FileCheck %s --check-prefix=SILU
// SILU-LABEL: func.func @proj
// SILU: epilogue(%[[BIAS:.*]] : memref<4096xf32>) {
// SILU-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[BI:.*]]: f32):
// SILU-NEXT: %[[SUM:.*]] = arith.addf %[[ACC]], %[[BI]] : f32
// SILU-NEXT: %[[NEG:.*]] = arith.negf %[[SUM]] : f32
// SILU-NEXT: %[[EXP:.*]] = math.exp %[[NEG]] : f32
// SILU: %[[DEN:.*]] = arith.addf %[[EXP]], %{{.*}} : f32
// SILU-NEXT: %[[SILU:.*]] = arith.divf %[[SUM]], %[[DEN]] : f32
// SILU-NEXT: %[[OUT:.*]] = arith.truncf %[[SILU]] : f32 to bf16
// SILU-NEXT: tessel.yield %[[OUT]] : bf16
//
// RUN: tessel-gen matmul -m 64 -n 64 -k 64 -t i8 --bias m --residual --activation relu --alpha | FileCheck %s --check-prefix=INT
// INT: outs(%{{.*}} : memref<64x64xi32>) epilogue(%{{.*}}, %{{.*}}, %{{.*}} : f32, memref<64x1xf32>, memref<64x64xi32>)
// INT-NEXT: ^bb0(%[[ACC:.*]]: i32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: i32):
// INT-NEXT: arith.sitofp %[[ACC]] : i32 to f32
// INT: arith.maximumf
// INT: arith.fptosi
//
// RUN: tessel-gen matmul -t fp8 --b-type bf8 -m 32 -n 32 -k 64 | FileCheck %s --check-prefix=FP8
// FP8: memref<32x64xf8E4M3FNUZ>, memref<64x32xf8E5M2FNUZ>) outs(%{{.*}} : memref<32x32xf32>)
//
// Scaled GEMM (torch._scaled_mm): alpha, then scale_a, scale_b, bias, in
// that order, all applied to the f32 accumulator before the conversion.
// RUN: tessel-gen matmul -t fp8 -m 32 -n 48 -k 64 --alpha --scale-a row --scale-b column --bias n --out-type bf16 | FileCheck %s --check-prefix=SCALED
// SCALED: epilogue(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32, memref<32x1xf32>, memref<48xf32>, memref<48xf32>)
// SCALED-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[ALPHA:.*]]: f32, %[[SA:.*]]: f32, %[[SB:.*]]: f32, %[[BIAS:.*]]: f32):
// SCALED-NEXT: %[[X0:.*]] = arith.mulf %[[ACC]], %[[ALPHA]]
// SCALED-NEXT: %[[X1:.*]] = arith.mulf %[[X0]], %[[SA]]
// SCALED-NEXT: %[[X2:.*]] = arith.mulf %[[X1]], %[[SB]]
// SCALED-NEXT: %[[X3:.*]] = arith.addf %[[X2]], %[[BIAS]]
// SCALED-NEXT: arith.truncf %[[X3]] : f32 to bf16
// RUN: tessel-gen matmul -t fp8 -m 32 -n 48 -k 64 --scale-a tensor --scale-b tensor | FileCheck %s --check-prefix=TENSOR
// TENSOR: epilogue(%{{.*}}, %{{.*}} : memref<1xf32>, memref<1xf32>)
// RUN: not tessel-gen matmul --dynamic m,seq-q 2>&1 | FileCheck %s --check-prefix=BADDYN
// BADDYN: error: --dynamic: unknown size 'seq-q' (expected m, n, k, batch)
//
// RUN: tessel-gen attention -b 2 -h 32 --kv-heads 8 --seq-q 1024 --seq-kv 1024 -d 128 --causal -t f16 | FileCheck %s --check-prefix=ATTN
// ATTN-LABEL: func.func @attention
// ATTN: tessel.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x32x1024x128xf16>, memref<2x8x1024x128xf16>, memref<2x8x1024x128xf16>) outs(%{{.*}} : memref<2x32x1024x128xf16>) {causal}
//
// RUN: tessel-gen attention -b 1 -h 4 --kv-heads 1 --seq-q 77 --seq-kv 300 -d 64 -t bf16 --lse --scale 0.125 --dynamic seq-q,seq-kv | FileCheck %s --check-prefix=DYN
// DYN: memref<1x4x?x64xbf16>, memref<1x1x?x64xbf16>, memref<1x1x?x64xbf16>) outs(%{{.*}} : memref<1x4x?x64xbf16>) lse(%{{.*}} : memref<1x4x?xf32>) {scale = 1.250000e-01 : f32}
//
// Everything tessel-gen prints is valid IR.
// Local attention, sinks (the last argument, one f32 per query head) and a
// values' head dim different from the scores'.
// RUN: tessel-gen attention -b 1 -h 4 --kv-heads 2 --seq-q 77 --seq-kv 300 -d 192 --head-dim-v 128 --window 64,0 --sinks -t f16 | FileCheck %s --check-prefix=WIN
// WIN-LABEL: func.func @attention(%{{.*}}: memref<1x4x77x192xf16>, %{{.*}}: memref<1x2x300x192xf16>, %{{.*}}: memref<1x2x300x128xf16>, %{{.*}}: memref<1x4x77x128xf16>, %{{.*}}: memref<4xf32>)
// WIN: tessel.attention {{.*}} outs(%{{.*}} : memref<1x4x77x128xf16>) sinks(%{{.*}} : memref<4xf32>) {window = array<i64: 64, 0>}
// RUN: not tessel-gen attention --window 5 2>&1 | FileCheck %s --check-prefix=BADWIN
// BADWIN: tessel-gen: error: --window takes two bounds, left,right (-1: unbounded), got 1
// RUN: tessel-gen matmul -m 7 -n 9 -k 5 -t f32 --residual --activation gelu --batch 3 | tessel-opt | FileCheck %s --check-prefix=GELU
// GELU: math.erf
// RUN: tessel-gen attention -h 8 --kv-heads 2 -d 256 --causal --lse | tessel-opt --verify-roundtrip > /dev/null
//
// Bad flags are errors, not crashes.
// RUN: not tessel-gen matmul -t f64 2>&1 | FileCheck %s --check-prefix=BADTYPE
// BADTYPE: tessel-gen: error: unknown element type 'f64'
// RUN: not tessel-gen matmul --bias k 2>&1 | FileCheck %s --check-prefix=BADBIAS
// BADBIAS: tessel-gen: error: --bias must be none, m or n, got 'k'
// RUN: not tessel-gen matmul --activation tanh 2>&1 | FileCheck %s --check-prefix=BADACT
// BADACT: tessel-gen: error: unknown activation 'tanh'
// RUN: not tessel-gen matmul -m 0 2>&1 | FileCheck %s --check-prefix=BADSIZE
// BADSIZE: tessel-gen: error: -m, -n and -k must be positive
// RUN: not tessel-gen attention -h 6 --kv-heads 4 2>&1 | FileCheck %s --check-prefix=BADGQA
// BADGQA: tessel-gen: error: 'tessel.attention' op query heads (6) must be a multiple of key/value heads (4)
// RUN: not tessel-gen 2>&1 | FileCheck %s --check-prefix=NOCMD
// NOCMD: tessel-gen: error: expected a problem: tessel-gen matmul ... or tessel-gen attention ...
//
// An explicit --scale is kept even when it is 0, and then rejected by the
// verifier rather than silently replaced by 1/sqrt(d).
// RUN: not tessel-gen attention -b 1 -h 2 --seq-q 64 --seq-kv 64 -d 64 --scale 0 2>&1 | FileCheck %s --check-prefix=SCALE0
// SCALE0: tessel-gen: error: 'tessel.attention' op scale must be a positive finite number, got 0
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 64 --seq-kv 64 -d 64 --scale 0.5 | FileCheck %s --check-prefix=SCALE
// SCALE: scale = 5.000000e-01 : f32
//
// Sizes past 32-bit indices are rejected up front.
// RUN: not tessel-gen matmul -m 4294967296 -n 64 -k 64 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: tessel-gen: error: -m, -n and -k must be positive and at most 2147483647
// RUN: not tessel-gen matmul -m 64 -n 64 -k 64 --batch -3 2>&1 | FileCheck %s --check-prefix=NEGBATCH
// NEGBATCH: tessel-gen: error: --batch must be 0 (not batched) to 2147483647
//
// A write that fails (a full device) is a diagnostic, not LLVM's fatal error.
// The --config attribute text has the IR parser's nesting limit.
// RUN: not tessel-gen matmul -m 64 -n 64 -k 64 --config "$(%python -c "print('#tessel.config<tile = ' + '['*300 + ']'*300 + '>')")" 2>&1 | FileCheck %s --check-prefix=DEEPCONFIG
// DEEPCONFIG: error: --config: brackets nest deeper than 256 levels
// RUN: not tessel-gen matmul -m 64 -n 64 -k 64 -o /dev/full 2>&1 | FileCheck %s --check-prefix=FULL
// FULL: tessel-gen: error: cannot write '/dev/full': No space left on device
// FULL-NOT: LLVM ERROR
// RUN: not tessel-opt %s -o /dev/full 2>&1 | FileCheck %s --check-prefix=OPTFULL
// OPTFULL: tessel-opt: error: cannot write '/dev/full'
//
// Options belong to their subcommand: --batch is matmul's (attention's is
// -b), and the top level lists no LLVM options.
// RUN: not tessel-gen attention --batch 3 2>&1 | FileCheck %s --check-prefix=ATTNBATCH
// ATTNBATCH: Unknown command line argument '--batch'
// RUN: tessel-gen --help | FileCheck %s --check-prefix=TOPHELP
// TOPHELP: SUBCOMMANDS:
// TOPHELP-NOT: --aarch64
// TOPHELP-NOT: --amdgpu
// RUN: tessel-gen matmul --help | FileCheck %s --check-prefix=MMHELP
// MMHELP: -m <long> {{.*}}(default 1024)
// MMHELP-NOT: --seq-q
