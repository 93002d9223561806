// RUN: tessel-opt %s | FileCheck %s
// RUN: tessel-opt %s | tessel-opt | FileCheck %s
// RUN: tessel-opt %s --mlir-print-op-generic | tessel-opt | FileCheck %s

// CHECK-LABEL: func.func @matmul_plain
// CHECK-SAME: (%[[A:.*]]: memref<128x64xf16>, %[[B:.*]]: memref<64x32xf16>, %[[C:.*]]: memref<128x32xf16>)
// CHECK: tessel.matmul ins(%[[A]], %[[B]] : memref<128x64xf16>, memref<64x32xf16>) outs(%[[C]] : memref<128x32xf16>)
// CHECK-NOT: epilogue
func.func @matmul_plain(%a: memref<128x64xf16>, %b: memref<64x32xf16>, %c: memref<128x32xf16>) {
  tessel.matmul ins(%a, %b : memref<128x64xf16>, memref<64x32xf16>) outs(%c : memref<128x32xf16>)
  return
}

// Transposed B (stored N x K) and dynamic M, with a config.
// CHECK-LABEL: func.func @matmul_transposed_dynamic
// CHECK: tessel.matmul ins(%{{.*}}, %{{.*}} : memref<?x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>) outs(%{{.*}} : memref<?x4096xbf16>)
// CHECK-SAME: {config = #tessel.config<tile = [256, 128, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">}
func.func @matmul_transposed_dynamic(%a: memref<?x4096xbf16>, %b: memref<4096x4096xbf16, strided<[1, 4096]>>, %c: memref<?x4096xbf16>) {
  tessel.matmul ins(%a, %b : memref<?x4096xbf16>, memref<4096x4096xbf16, strided<[1, 4096]>>) outs(%c : memref<?x4096xbf16>)
    {config = #tessel.config<tile = [256, 128, 64], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_bf16">}
  return
}

// Config without an instruction.
// CHECK-LABEL: func.func @matmul_config_no_instr
// CHECK: config = #tessel.config<tile = [64, 64, 32], waves = [1, 1], stages = 1>
func.func @matmul_config_no_instr(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>) {
  tessel.matmul ins(%a, %b : memref<64x32xf32>, memref<32x64xf32>) outs(%c : memref<64x64xf32>)
    {config = #tessel.config<tile = [64, 64, 32], waves = [1, 1], stages = 1>}
  return
}

// Batched, A column-major, bias along N fused with a cast.
// CHECK-LABEL: func.func @matmul_batched_bias
// CHECK: tessel.matmul ins(%{{.*}}, %{{.*}} : memref<8x?x?xbf16, strided<[?, 1, ?]>>, memref<8x?x256xbf16>) outs(%{{.*}} : memref<8x?x256xbf16>) epilogue(%[[BIAS:.*]] : memref<256xf32>) {
// CHECK-NEXT: ^bb0(%[[ACC:.*]]: f32, %[[BI:.*]]: f32):
// CHECK-NEXT:   %[[SUM:.*]] = arith.addf %[[ACC]], %[[BI]] : f32
// CHECK-NEXT:   %[[OUT:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT:   tessel.yield %[[OUT]] : bf16
// CHECK-NEXT: }
func.func @matmul_batched_bias(%a: memref<8x?x?xbf16, strided<[?, 1, ?]>>, %b: memref<8x?x256xbf16>,
                               %c: memref<8x?x256xbf16>, %bias: memref<256xf32>) {
  tessel.matmul ins(%a, %b : memref<8x?x?xbf16, strided<[?, 1, ?]>>, memref<8x?x256xbf16>) outs(%c : memref<8x?x256xbf16>)
    epilogue(%bias : memref<256xf32>) {
  ^bb0(%acc: f32, %bi: f32):
    %s = arith.addf %acc, %bi : f32
    %r = arith.truncf %s : f32 to bf16
    tessel.yield %r : bf16
  }
  return
}

// An epilogue without extra operands (activation only), a bias along M, a
// residual and a scalar.
// CHECK-LABEL: func.func @matmul_epilogues
// CHECK: epilogue {
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK: epilogue(%{{.*}}, %{{.*}}, %{{.*}} : memref<64x1xf32>, memref<64x32xf16>, f32) {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f16, %{{.*}}: f32):
func.func @matmul_epilogues(%a: memref<64x16xf16>, %b: memref<16x32xf16>, %c: memref<64x32xf16>,
                            %rowBias: memref<64x1xf32>, %residual: memref<64x32xf16>, %alpha: f32) {
  tessel.matmul ins(%a, %b : memref<64x16xf16>, memref<16x32xf16>) outs(%c : memref<64x32xf16>) epilogue {
  ^bb0(%acc: f32):
    %zero = arith.constant 0.0 : f32
    %relu = arith.maximumf %acc, %zero : f32
    %r = arith.truncf %relu : f32 to f16
    tessel.yield %r : f16
  }
  tessel.matmul ins(%a, %b : memref<64x16xf16>, memref<16x32xf16>) outs(%c : memref<64x32xf16>)
    epilogue(%rowBias, %residual, %alpha : memref<64x1xf32>, memref<64x32xf16>, f32) {
  ^bb0(%acc: f32, %bias: f32, %res: f16, %s: f32):
    %scaled = arith.mulf %acc, %s : f32
    %biased = arith.addf %scaled, %bias : f32
    %resf = arith.extf %res : f16 to f32
    %sum = arith.addf %biased, %resf : f32
    %r = arith.truncf %sum : f32 to f16
    tessel.yield %r : f16
  }
  return
}

// i8 accumulates in i32; an f32 epilogue may write an i32 C from f32 inputs.
// CHECK-LABEL: func.func @matmul_int
// CHECK: tessel.matmul ins(%{{.*}}, %{{.*}} : memref<?x?xi8>, memref<?x?xi8>) outs(%{{.*}} : memref<?x?xi32>)
// CHECK: ^bb0(%{{.*}}: f32):
// CHECK: arith.fptosi
func.func @matmul_int(%a: memref<?x?xi8>, %b: memref<?x?xi8>, %c: memref<?x?xi32>,
                      %af: memref<32x32xf32>, %bf: memref<32x32xf32>, %ci: memref<32x32xi32>) {
  tessel.matmul ins(%a, %b : memref<?x?xi8>, memref<?x?xi8>) outs(%c : memref<?x?xi32>)
  tessel.matmul ins(%af, %bf : memref<32x32xf32>, memref<32x32xf32>) outs(%ci : memref<32x32xi32>) epilogue {
  ^bb0(%acc: f32):
    %r = arith.fptosi %acc : f32 to i32
    tessel.yield %r : i32
  }
  return
}

// 8-bit floats: FNUZ (gfx942) with a mixed fp8 x bf8 pair, and OCP (gfx950).
// CHECK-LABEL: func.func @matmul_fp8
// CHECK: memref<64x64xf8E4M3FNUZ>, memref<64x64xf8E5M2FNUZ>
// CHECK: memref<64x64xf8E4M3FN>, memref<64x64xf8E5M2>
func.func @matmul_fp8(%a: memref<64x64xf8E4M3FNUZ>, %b: memref<64x64xf8E5M2FNUZ>,
                      %a2: memref<64x64xf8E4M3FN>, %b2: memref<64x64xf8E5M2>, %c: memref<64x64xf32>) {
  tessel.matmul ins(%a, %b : memref<64x64xf8E4M3FNUZ>, memref<64x64xf8E5M2FNUZ>) outs(%c : memref<64x64xf32>)
  tessel.matmul ins(%a2, %b2 : memref<64x64xf8E4M3FN>, memref<64x64xf8E5M2>) outs(%c : memref<64x64xf32>)
  return
}

// CHECK-LABEL: func.func @attention_gqa
// CHECK: tessel.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x32x?x128xf16>, memref<2x8x?x128xf16>, memref<2x8x?x128xf16>) outs(%{{.*}} : memref<2x32x?x128xf16>) {causal, scale = 8.838830e-02 : f32}
func.func @attention_gqa(%q: memref<2x32x?x128xf16>, %k: memref<2x8x?x128xf16>, %v: memref<2x8x?x128xf16>,
                         %o: memref<2x32x?x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x32x?x128xf16>, memref<2x8x?x128xf16>, memref<2x8x?x128xf16>)
                   outs(%o : memref<2x32x?x128xf16>) {scale = 0.0883883 : f32, causal}
  return
}

// CHECK-LABEL: func.func @attention_lse_config
// CHECK: outs(%{{.*}} : memref<1x4x77x64xbf16>) lse(%{{.*}} : memref<1x4x77xf32>) {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 1>}
func.func @attention_lse_config(%q: memref<1x4x77x64xbf16>, %k: memref<1x1x300x64xbf16>, %v: memref<1x1x300x64xbf16>,
                                %o: memref<1x4x77x64xbf16>, %lse: memref<1x4x77xf32>) {
  tessel.attention ins(%q, %k, %v : memref<1x4x77x64xbf16>, memref<1x1x300x64xbf16>, memref<1x1x300x64xbf16>)
                   outs(%o : memref<1x4x77x64xbf16>) lse(%lse : memref<1x4x77xf32>)
                   {config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 1>}
  return
}

// Local attention with sinks: the window and the sinks operand round-trip.
// CHECK-LABEL: func.func @attention_window_sinks
// CHECK: outs(%{{.*}} : memref<1x4x77x64xf16>) lse(%{{.*}} : memref<1x4x77xf32>) sinks(%{{.*}} : memref<4xf32>) {causal, window = array<i64: 128, 0>}
func.func @attention_window_sinks(%q: memref<1x4x77x64xf16>, %k: memref<1x1x300x64xf16>, %v: memref<1x1x300x64xf16>,
                                  %o: memref<1x4x77x64xf16>, %lse: memref<1x4x77xf32>, %s: memref<4xf32>) {
  tessel.attention ins(%q, %k, %v : memref<1x4x77x64xf16>, memref<1x1x300x64xf16>, memref<1x1x300x64xf16>)
                   outs(%o : memref<1x4x77x64xf16>) lse(%lse : memref<1x4x77xf32>) sinks(%s : memref<4xf32>)
                   {causal, window = array<i64: 128, 0>}
  return
}

// 8-bit attention with per-tensor descales (FlashAttention-3's
// descale_q/k/v) round-trips.
// CHECK-LABEL: func.func @attention_fp8_descale
// CHECK: outs(%{{.*}} : memref<1x2x64x128xbf16>) descale(%{{.*}}, %{{.*}}, %{{.*}} : memref<1xf32>, memref<1xf32>, memref<1xf32>) {causal}
func.func @attention_fp8_descale(%q: memref<1x2x64x128xf8E4M3FNUZ>, %k: memref<1x2x?x128xf8E4M3FNUZ>, %v: memref<1x2x?x128xf8E4M3FNUZ>,
                                 %o: memref<1x2x64x128xbf16>, %dq: memref<1xf32>, %dk: memref<1xf32>, %dv: memref<1xf32>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x64x128xf8E4M3FNUZ>, memref<1x2x?x128xf8E4M3FNUZ>, memref<1x2x?x128xf8E4M3FNUZ>)
                   outs(%o : memref<1x2x64x128xbf16>) descale(%dq, %dk, %dv : memref<1xf32>, memref<1xf32>, memref<1xf32>) {causal}
  return
}

// The L1 global tile accesses, with and without the in-bounds claim.
#blk = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [1, 1], order = [1, 0]>
// CHECK-LABEL: func.func @global_tiles
// CHECK: %[[T:.*]] = tessel.load %{{.*}}[%{{.*}}, %{{.*}}] in_bounds : memref<64x64xf16> -> tensor<8x64xf16, #{{.*}}>
// CHECK: tessel.store %[[T]], %{{.*}}[%{{.*}}, %{{.*}}] : tensor<8x64xf16, #{{.*}}>, memref<?x64xf16>
// CHECK: tessel.store %[[T]], %{{.*}}[%{{.*}}, %{{.*}}] in_bounds : tensor<8x64xf16, #{{.*}}>, memref<?x64xf16>
func.func @global_tiles(%a: memref<64x64xf16>, %c: memref<?x64xf16>, %i: index) {
  %t = tessel.load %a[%i, %i] in_bounds : memref<64x64xf16> -> tensor<8x64xf16, #blk>
  tessel.store %t, %c[%i, %i] : tensor<8x64xf16, #blk>, memref<?x64xf16>
  // A dynamic size: the promise is the producer's.
  tessel.store %t, %c[%i, %i] in_bounds : tensor<8x64xf16, #blk>, memref<?x64xf16>
  return
}

// Split-K's arrival at a C tile's counter.
// CHECK-LABEL: func.func @split_arrive
// CHECK: %{{.*}} = tessel.split_arrive %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] splits = 8 : memref<2x4x8xi32>
func.func @split_arrive(%counters: memref<2x4x8xi32>, %i: index) -> i1 {
  %last = tessel.split_arrive %counters[%i, %i, %i] splits = 8 : memref<2x4x8xi32>
  return %last : i1
}

// Stream-K's arrival: the number of pieces of the tile is a value.
// CHECK-LABEL: func.func @split_arrive_count
// CHECK: %{{.*}} = tessel.split_arrive %{{.*}}[%{{.*}}, %{{.*}}] count %{{.*}} : memref<4x8xi32>
func.func @split_arrive_count(%counters: memref<4x8xi32>, %i: index, %n: index) -> i1 {
  %last = tessel.split_arrive %counters[%i, %i] count %n : memref<4x8xi32>
  return %last : i1
}

// A stream-K config prints its workgroup count after the instruction; a
// config may name splits without an instruction.
// CHECK-LABEL: func.func @config_stream_k
// CHECK: #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608>
// CHECK: #tessel.config<tile = [16, 32, 64], waves = [1, 2], stages = 2, splits = 4>
func.func @config_stream_k(%a: memref<4096x4096xf16>, %b: memref<4096x4096xf16>, %c: memref<4096x4096xf16>, %d: memref<16x4096xf16>, %e: memref<16x4096xf16>) {
  tessel.matmul ins(%a, %b : memref<4096x4096xf16>, memref<4096x4096xf16>) outs(%c : memref<4096x4096xf16>) {config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608>}
  tessel.matmul ins(%d, %b : memref<16x4096xf16>, memref<4096x4096xf16>) outs(%e : memref<16x4096xf16>) {config = #tessel.config<tile = [16, 32, 64], waves = [1, 2], stages = 2, splits = 4>}
  return
}

// An attention config computing the next key block's scores ahead prints
// the flag last.
// CHECK-LABEL: func.func @config_scores_ahead
// CHECK: #tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608, scores_ahead>
// CHECK: #tessel.config<tile = [128, 32], waves = [4, 1], stages = 1, scores_ahead>
func.func @config_scores_ahead(%q: memref<2x16x4096x128xf16>, %k: memref<2x16x4096x128xf16>, %v: memref<2x16x4096x128xf16>, %o: memref<2x16x4096x128xf16>) {
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>) outs(%o : memref<2x16x4096x128xf16>) {config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 2, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608, scores_ahead>}
  tessel.attention ins(%q, %k, %v : memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>, memref<2x16x4096x128xf16>) outs(%o : memref<2x16x4096x128xf16>) {config = #tessel.config<tile = [128, 32], waves = [4, 1], stages = 1, scores_ahead>}
  return
}

// A column statistic of an MFMA accumulator (one value per column, the
// lanes of the other half-wave holding copies) and its broadcast back.
// CHECK-LABEL: func.func @reduce_and_broadcast
// CHECK: %[[R:.*]] = tessel.reduce "max" %{{.*}} along 0 : tensor<32x32xf32, #mma> -> tensor<1x32xf32, #linear>
// CHECK: tessel.broadcast %[[R]] : tensor<1x32xf32, #linear> -> tensor<64x32xf32, #mma>
#acc = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#column = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
func.func @reduce_and_broadcast(%s: tensor<32x32xf32, #acc>) -> tensor<64x32xf32, #acc> {
  %m = tessel.reduce "max" %s along 0 : tensor<32x32xf32, #acc> -> tensor<1x32xf32, #column>
  %w = tessel.broadcast %m : tensor<1x32xf32, #column> -> tensor<64x32xf32, #acc>
  return %w : tensor<64x32xf32, #acc>
}

// A column sum within lanes: the two half-waves that hold a column's rows
// keep their parts (row 0 of the result in lanes 0-31, row 1 in 32-63); a
// plain reduction of it finishes the sum.
// CHECK-LABEL: func.func @reduce_within_lanes
// CHECK: %[[P:.*]] = tessel.reduce "add" %{{.*}} along 0 within_lanes : tensor<32x32xf32, #mma> -> tensor<2x32xf32, #linear1>
// CHECK: tessel.reduce "add" %[[P]] along 0 : tensor<2x32xf32, #linear1> -> tensor<1x32xf32, #linear>
#acc2 = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
#column2 = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
#halves = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0]]>
func.func @reduce_within_lanes(%s: tensor<32x32xf32, #acc2>) -> tensor<1x32xf32, #column2> {
  %p = tessel.reduce "add" %s along 0 within_lanes : tensor<32x32xf32, #acc2> -> tensor<2x32xf32, #halves>
  %l = tessel.reduce "add" %p along 0 : tensor<2x32xf32, #halves> -> tensor<1x32xf32, #column2>
  return %l : tensor<1x32xf32, #column2>
}

// Whether any element a wave holds is true (attention's lazy rescale asks
// it of a column statistic).
// The barriers of a ping-pong loop: the upper half of the waves one in
// front, a matrix phase and a softmax phase, the lower half one after.
// CHECK-LABEL: func.func @phase_barriers
// CHECK: tessel.phase_barrier half 1
// CHECK-NEXT: tessel.phase_barrier matrix
// CHECK-NEXT: tessel.phase_barrier
// CHECK-NEXT: tessel.phase_barrier half 0
func.func @phase_barriers() attributes {tessel.config = #tessel.config<tile = [256, 32], waves = [8, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", scores_ahead, ping_pong>} {
  tessel.phase_barrier half 1
  tessel.phase_barrier matrix
  tessel.phase_barrier
  tessel.phase_barrier half 0
  return
}

// A four-wave key loop unrolled by two: the flag round-trips after the others.
// CHECK-LABEL: func.func @unrolled_config
// CHECK-SAME: #tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608, scores_ahead, unrolled>
func.func @unrolled_config() attributes {tessel.config = #tessel.config<tile = [128, 64], waves = [4, 1], stages = 3, instr = "v_mfma_f32_32x32x8_f16", stream_k = 608, scores_ahead, unrolled>} {
  return
}

// CHECK-LABEL: func.func @wave_any
// CHECK: tessel.wave_any %{{.*}} : tensor<1x32xi1, #linear>
#column1 = #tessel.linear<lane = [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]]>
func.func @wave_any(%grown: tensor<1x32xi1, #column1>) -> i1 {
  %any = tessel.wave_any %grown : tensor<1x32xi1, #column1>
  return %any : i1
}

// The backward: forward inputs, O, dO and the logsumexp in; dQ, dK, dV out.
// CHECK-LABEL: func.func @attention_grad
// CHECK: tessel.attention_grad ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<2x8x?x128xbf16>, memref<2x2x?x128xbf16>, memref<2x2x?x128xbf16>, memref<2x8x?x128xbf16>, memref<2x8x?x128xbf16>, memref<2x8x?xf32>) outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<2x8x?x128xf32>, memref<2x2x?x128xbf16>, memref<2x2x?x128xbf16>) {causal, window = array<i64: 64, 0>}
func.func @attention_grad(%q: memref<2x8x?x128xbf16>, %k: memref<2x2x?x128xbf16>, %v: memref<2x2x?x128xbf16>,
                          %o: memref<2x8x?x128xbf16>, %do: memref<2x8x?x128xbf16>, %lse: memref<2x8x?xf32>,
                          %dq: memref<2x8x?x128xf32>, %dk: memref<2x2x?x128xbf16>, %dv: memref<2x2x?x128xbf16>) {
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<2x8x?x128xbf16>, memref<2x2x?x128xbf16>, memref<2x2x?x128xbf16>, memref<2x8x?x128xbf16>, memref<2x8x?x128xbf16>, memref<2x8x?xf32>)
                        outs(%dq, %dk, %dv : memref<2x8x?x128xf32>, memref<2x2x?x128xbf16>, memref<2x2x?x128xbf16>) {causal, window = array<i64: 64, 0>}
  return
}

// Packed sequences: FlashAttention's (total, heads, head_dim) arrays as
// [1, heads, total, head_dim] views, with the cumulative lengths.
// CHECK-LABEL: func.func @attention_varlen
// CHECK: outs(%{{.*}} : memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>) varlen(%{{.*}}, %{{.*}}, %{{.*}} : memref<?xi32>, memref<?xi32>) {causal}
func.func @attention_varlen(%q: memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>, %k: memref<1x2x?x64xf16, strided<[?, 64, 128, 1]>>,
                            %v: memref<1x2x?x64xf16, strided<[?, 64, 128, 1]>>, %o: memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>,
                            %cu_q: memref<?xi32>, %cu_k: memref<?xi32>, %max_q: index) {
  tessel.attention ins(%q, %k, %v : memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>, memref<1x2x?x64xf16, strided<[?, 64, 128, 1]>>, memref<1x2x?x64xf16, strided<[?, 64, 128, 1]>>)
                   outs(%o : memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>) varlen(%cu_q, %cu_k, %max_q : memref<?xi32>, memref<?xi32>) {causal}
  return
}

// A paged KV cache: [pages, kv_heads, page_size, head_dim] views of vLLM's
// [pages, page_size, kv_heads, head_dim] caches, the block table and the
// context lengths.
// CHECK-LABEL: func.func @attention_paged
// CHECK: outs(%{{.*}} : memref<?x8x1x128xbf16>) paged(%{{.*}}, %{{.*}} : memref<?x64xi32>, memref<?xi32>)
func.func @attention_paged(%q: memref<?x8x1x128xbf16>, %k: memref<?x2x16x128xbf16, strided<[4096, 128, 256, 1]>>,
                           %v: memref<?x2x16x128xbf16, strided<[4096, 128, 256, 1]>>, %o: memref<?x8x1x128xbf16>,
                           %table: memref<?x64xi32>, %lens: memref<?xi32>) {
  tessel.attention ins(%q, %k, %v : memref<?x8x1x128xbf16>, memref<?x2x16x128xbf16, strided<[4096, 128, 256, 1]>>, memref<?x2x16x128xbf16, strided<[4096, 128, 256, 1]>>)
                   outs(%o : memref<?x8x1x128xbf16>) paged(%table, %lens : memref<?x64xi32>, memref<?xi32>)
  return
}

// CHECK-LABEL: func @copies_to_lds
// CHECK: tessel.copy_to_local %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}[%{{.*}}] in_bounds : memref<4096x4096xbf16>, !tessel.lds<2 x[256, 32], bf16, #swizzle>
// CHECK: tessel.wait_copies
// CHECK: direct_copies>
#swizzle_copies = #tessel.swizzle<vec = 8, perPhase = 4, maxPhase = 4>
func.func @copies_to_lds(%a: memref<4096x4096xbf16>, %b: memref<4096x4096xbf16>, %c: memref<4096x4096xbf16>, %i: index) {
  %c1 = arith.constant 1 : index
  %buffer = tessel.local_alloc : !tessel.lds<2 x[256, 32], bf16, #swizzle_copies>
  tessel.copy_to_local %a[%i, %i], %buffer[%c1] in_bounds : memref<4096x4096xbf16>, !tessel.lds<2 x[256, 32], bf16, #swizzle_copies>
  tessel.wait_copies
  tessel.matmul ins(%a, %b : memref<4096x4096xbf16>, memref<4096x4096xbf16>) outs(%c : memref<4096x4096xbf16>) {config = #tessel.config<tile = [256, 256, 32], waves = [2, 4], stages = 2, instr = "v_mfma_f32_32x32x16_bf16", direct_copies>}
  return
}
