// The key loop without the scores ahead rescales lazily where the kernel
// has no masked loop at padded head dim 64, and past padded V head dim 128
// (rescalesUnmaskedKeyLoopLazily):
// each iteration computes its block's S^T, rescales O and l behind an
// unlikely branch on tessel.wave_any only where some query's score grew
// past the kept maximum by more than 8 (log2 units: the scores are compared
// with (m + 8) over the score scale, one limit per query broadcast over the
// block), takes the block's maximum in that branch only, then adds the
// block's weights against the kept maximum.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 64 -t bf16 --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=LAZY
// Past padded V head dim 128 (O takes a lane's 128 registers or more) the
// loop rescales lazily in front of a masked loop too (causal, head dim
// 256; 192, padded to 256, in six chunks of 32 head dims: six products
// sum S^T, six accumulators hold O^T).
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 256 -t bf16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=LAZY
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 192 -t f16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x16_f16">' | tessel-opt --tessel-tile=chip=gfx950 | FileCheck %s --check-prefix=CHUNKS
// A masked loop (causal) at head dim 64, head dim 128, an O of head dim
// 128 beside 192-wide scores, or 8-bit P keep the exact update in every
// block.
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 64 -t bf16 --causal --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=EXACT
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 128 -t bf16 --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=EXACT
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 192 --head-dim-v 128 -t bf16 --causal --config='#tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=EXACT
// RUN: tessel-gen attention -b 1 -h 2 --seq-q 128 --seq-kv 256 -d 64 -t f8E4M3FNUZ --descale --config='#tessel.config<tile = [128, 64], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x16_fp8_fp8">' | tessel-opt --tessel-tile=chip=gfx942 | FileCheck %s --check-prefix=EXACT

// LAZY-LABEL: func.func @attention
// LAZY: scf.for %{{.*}} iter_args(%[[M:[^ ]*]] = %{{[^,]*}}, %[[L:[^ ]*]] = %{{[^,]*}}, %[[O:[^ ]*]] = %{{[^)]*}})
// LAZY: %[[S:.*]] = tessel.dot
// LAZY-NOT: tessel.reduce
// LAZY: %[[SUM:.*]] = arith.addf %[[M]], %{{.*}}
// LAZY: %[[LIMIT:.*]] = arith.mulf %[[SUM]], %{{.*}}
// LAZY-NEXT: %[[LIMITS:.*]] = tessel.broadcast %[[LIMIT]]
// LAZY-NEXT: %[[GROWN:.*]] = arith.cmpf ogt, %[[S]], %[[LIMITS]]
// LAZY-NEXT: %[[ANY:.*]] = tessel.wave_any %[[GROWN]]
// LAZY-NEXT: %[[STATE:.*]]:3 = scf.if %[[ANY]]
// LAZY-NEXT: %[[BMAX:.*]] = tessel.reduce "max" %[[S]] along 0
// LAZY: arith.maxnumf %[[M]]
// LAZY: } else {
// LAZY-NEXT: scf.yield %[[M]], %[[L]], %[[O]]
// LAZY-NEXT: } {tessel.unlikely}
// The weights against the kept maximum; O^T += V^T P^T onto the kept O.
// LAZY: math.exp2
// LAZY: tessel.dot %{{.*}}, %{{.*}}, %[[STATE]]#2
// LAZY: scf.yield %[[STATE]]#0
// LAZY-NOT: tessel.wave_any

// EXACT-LABEL: func.func @attention
// EXACT-NOT: tessel.wave_any
// EXACT: return

// CHUNKS-LABEL: func.func @attention
// CHUNKS: scf.for
// CHUNKS-COUNT-6: tessel.dot {{.*}} : tensor<32x32xf16, #{{[^>]*}}>, tensor<32x128xf16, #{{[^>]*}}> -> tensor<32x128xf32, #mma>
// CHUNKS-NOT: tessel.dot
// CHUNKS: tessel.wave_any
// CHUNKS-NEXT: scf.if
// CHUNKS: } {tessel.unlikely}
// CHUNKS: math.exp2
// CHUNKS-COUNT-6: tessel.dot {{.*}} -> tensor<32x128xf32, #mma>
// CHUNKS-NEXT: scf.yield
