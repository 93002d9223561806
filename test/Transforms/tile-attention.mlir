// RUN: tessel-opt %s --pass-pipeline='builtin.module(tessel-tile)' | FileCheck %s

// Causal grouped-query attention with dynamic lengths and the logsumexp, in
// the transposed form S^T = K Q^T, O^T = V^T P^T: one workgroup per (query
// block, head, batch), key/value head h / (Hq / Hkv), waves split the
// queries (the accumulators' columns). Q^T is loaded once; the statistics
// are one value per query ([1, 64] tiles); the scale (with log2 e) is
// applied to the block max and inside one fma per score; exp2 may be the
// hardware's approximation. The key loop is split where masking starts:
// the whole blocks every query of the block sees run without masks, the
// causal diagonal and the sequence tail with them. Later query blocks see
// more keys, so the workgroups run them longest first: flat id i (x
// fastest) takes block X - 1 - i / (heads x batch), head and batch
// i mod (heads x batch).
// CHECK-DAG: #[[$MMA:mma[0-9]*]] = #tessel.mma<"v_mfma_f32_32x32x8_bf16", waves = [1, 2]>
// CHECK-DAG: #[[$STAT:linear[0-9]*]] = #tessel.linear<lane = {{\[}}[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 0]], wave = {{\[}}[0, 32]]>
// The key loops keep l as the sums of the two half-waves (lane bit 5 holds
// keys): one row per half.
// CHECK-DAG: #[[$SUMS:linear[0-9]*]] = #tessel.linear<lane = {{\[}}[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [1, 0]], wave = {{\[}}[0, 32]]>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: memref<1x4x?x64xbf16>, %[[K:.*]]: memref<1x2x?x64xbf16>, %[[V:.*]]: memref<1x2x?x64xbf16>, %[[O:.*]]: memref<1x4x?x64xbf16>, %[[LSE:.*]]: memref<1x4x?xf32>)
// CHECK-SAME: tessel.longest_first
// CHECK-SAME: tessel.tile = array<i64: 64, 64>, tessel.workgroup_size = 128 : i64
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK: %[[HEADS:.*]] = memref.dim %[[Q]], %c1
// CHECK: %[[BATCH:.*]] = memref.dim %[[Q]], %c0
// CHECK: %[[PER:.*]] = arith.muli %[[HEADS]], %[[BATCH]] : index
// CHECK: %[[X:.*]] = tessel.program_id 0
// CHECK: %[[Y:.*]] = tessel.program_id 1
// CHECK: %[[Z:.*]] = tessel.program_id 2
// CHECK: %[[ZH:.*]] = arith.muli %[[HEADS]], %[[Z]] : index
// CHECK: %[[YZ:.*]] = arith.addi %[[Y]], %[[ZH]] : index
// CHECK: %[[XYZ:.*]] = arith.muli %[[BLOCKS]], %[[YZ]] : index
// CHECK: %[[ID:.*]] = arith.addi %[[X]], %[[XYZ]] : index
// CHECK: %[[POS:.*]] = arith.divui %[[ID]], %[[PER]] : index
// CHECK: %[[REST:.*]] = arith.remui %[[ID]], %[[PER]] : index
// CHECK: %[[LAST:.*]] = arith.subi %[[BLOCKS]], %{{.*}} : index
// CHECK: %[[QB:.*]] = arith.subi %[[LAST]], %[[POS]] : index
// CHECK: %[[H:.*]] = arith.remui %[[REST]], %[[HEADS]] : index
// CHECK: %[[B:.*]] = arith.divui %[[REST]], %[[HEADS]] : index
// CHECK: %[[M0:.*]] = arith.muli %[[QB]]
// CHECK: %[[GROUP:.*]] = arith.divui
// CHECK: %[[KVH:.*]] = arith.divui %[[H]], %[[GROUP]] : index
// CHECK: %[[QT:.*]] = memref.transpose %[[Q]] (d0, d1, d2, d3) -> (d0, d1, d3, d2)
// CHECK: %[[TQ:.*]] = tessel.load %[[QT]][%[[B]], %[[H]], %{{.*}}, %[[M0]]]
// CHECK: %[[VT:.*]] = memref.transpose %[[V]] (d0, d1, d2, d3) -> (d0, d1, d3, d2)
// CHECK: %[[END:.*]] = arith.minsi
// CHECK: %[[FIRST:.*]]:3 = scf.for %[[N0:.*]] = %{{.*}} to %[[MASKED:.*]] step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}, %[[ACC:.*]] = %{{.*}}) -> (tensor<1x64xf32, #[[$STAT]]>, tensor<2x64xf32, #[[$SUMS]]>, tensor<64x64xf32, #[[$MMA]]>)
// The whole blocks' K and V^T loads are in bounds; their origin moves with
// the key block while each lane's coordinates stay (tessel.scalar_origin);
// the masked loop's loads below carry neither.
// CHECK:   %[[TK:.*]] = tessel.load %[[K]][%[[B]], %[[KVH]], %[[N0]], %{{.*}}] in_bounds {tessel.scalar_origin}
// CHECK:   %[[TV:.*]] = tessel.load %[[VT]][%[[B]], %[[KVH]], %{{.*}}, %[[N0]]] in_bounds {tessel.scalar_origin}
// CHECK:   %[[S:.*]] = tessel.dot %[[TK]], %[[TQ]]
// CHECK-NOT: tessel.iota
// CHECK:   %[[MAX:.*]] = tessel.reduce "max" %[[S]] along 0 : tensor<64x64xf32, #[[$MMA]]> -> tensor<1x64xf32, #[[$STAT]]>
// scale 1/sqrt(64) * log2(e)
// CHECK:   arith.constant dense<0.180336878>
// CHECK:   arith.maxnumf %[[M]]
// CHECK:   math.fma %[[S]]
// CHECK:   math.exp2 %{{.*}} fastmath<afn> : tensor<64x64xf32, #[[$MMA]]>
// CHECK:   math.exp2 %{{.*}} fastmath<afn> : tensor<1x64xf32, #[[$STAT]]>
// CHECK:   %[[P:.*]] = arith.truncf %{{.*}} to tensor<64x64xbf16, #[[$MMA]]>
// CHECK:   tessel.reduce "add" %{{.*}} along 0 within_lanes : tensor<64x64xf32, #[[$MMA]]> -> tensor<2x64xf32, #[[$SUMS]]>
// CHECK:   %[[ALPHA:.*]] = tessel.broadcast %{{.*}} : tensor<1x64xf32, #[[$STAT]]> -> tensor<64x64xf32, #[[$MMA]]>
// CHECK:   arith.mulf %[[ACC]], %[[ALPHA]]
// CHECK:   tessel.dot %[[TV]], %[[P]]
// The second loop masks keys past the sequence and past each query: each
// query sees the block's keys below a limit (the sequence's end, or the
// query's position), one compare per score.
// CHECK: scf.for %{{.*}} = %[[MASKED]] to %[[END]] step %{{.*}} iter_args(%{{.*}} = %[[FIRST]]#0, %{{.*}} = %[[FIRST]]#1, %{{.*}} = %[[FIRST]]#2)
// CHECK:   tessel.load %[[K]]{{.*}}] : memref<1x2x?x64xbf16>
// CHECK:   tessel.load %[[VT]]{{.*}}] : memref<1x2x64x?xbf16
// CHECK:   tessel.iota 1
// CHECK:   %[[LIMIT:.*]] = arith.minsi
// CHECK:   %[[KEY:.*]] = tessel.iota 0
// CHECK:   %[[VALID:.*]] = arith.cmpi slt, %[[KEY]], %[[LIMIT]]
// CHECK-NOT: arith.cmpi
// CHECK:   arith.select %[[VALID]]
// CHECK:   tessel.reduce "max"
// One reciprocal per query (of the halves' sums added), O^T stored through
// a transposed view.
// CHECK: tessel.reduce "add" %{{.*}} along 0 : tensor<2x64xf32, #[[$SUMS]]> -> tensor<1x64xf32, #[[$STAT]]>
// CHECK: arith.divf %{{.*}} : tensor<1x64xf32, #[[$STAT]]>
// CHECK: %[[OT:.*]] = memref.transpose %[[O]]
// CHECK: tessel.store %{{.*}}, %[[OT]][%[[B]], %[[H]], %{{.*}}, %[[M0]]]
// The logsumexp goes to row 0 of a [B, H, 1, Sq] view.
// CHECK: math.log2
// CHECK: memref.reinterpret_cast {{.*}} strides: [%{{.*}}, %{{.*}}, 0, 1]
// CHECK: tessel.store %{{.*}} : tensor<1x64xf32, #[[$STAT]]>
// CHECK-NOT: tessel.attention
func.func @attention(%arg0: memref<1x4x?x64xbf16>, %arg1: memref<1x2x?x64xbf16>, %arg2: memref<1x2x?x64xbf16>, %arg3: memref<1x4x?x64xbf16>, %arg4: memref<1x4x?xf32>) {
  tessel.attention ins(%arg0, %arg1, %arg2 : memref<1x4x?x64xbf16>, memref<1x2x?x64xbf16>, memref<1x2x?x64xbf16>) outs(%arg3 : memref<1x4x?x64xbf16>) lse(%arg4 : memref<1x4x?xf32>) {causal, config = #tessel.config<tile = [64, 64], waves = [2, 1], stages = 1, instr = "v_mfma_f32_32x32x8_bf16">}
  return
}

// A head dim of 112 computes as 128: the tiles are 128 wide along it,
// loads read zeros past 112 and nothing claims to be in bounds (the
// whole-block loop's loads included), so the stores skip the padding.
// Without a key edge every query block sees all keys: the grid order
// stays.
// CHECK-LABEL: func.func @attention_head_dim_112
// CHECK-NOT: tessel.longest_first
// CHECK: tessel.program_id 0
// CHECK: tessel.load %{{.*}} : memref<1x2x112x256xf16, strided<{{.*}}>> -> tensor<128x64xf16,
// CHECK: scf.for
// CHECK-NOT: in_bounds
// CHECK: tessel.load %{{.*}} : memref<1x2x256x112xf16> -> tensor<64x128xf16,
// CHECK-NOT: in_bounds
// CHECK: tessel.store %{{.*}} : tensor<128x64xf16, #{{.*}}>, memref<1x2x112x256xf16, strided<{{.*}}>>
func.func @attention_head_dim_112(%q: memref<1x2x256x112xf16>, %k: memref<1x2x256x112xf16>, %v: memref<1x2x256x112xf16>, %o: memref<1x2x256x112xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x256x112xf16>, memref<1x2x256x112xf16>, memref<1x2x256x112xf16>) outs(%o : memref<1x2x256x112xf16>) {config = #tessel.config<tile = [64, 64], waves = [2, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// A head dim of 96, which would compute as 128, takes three chunks of 32
// (the instruction's rows, getAttentionHeadDimChunk) instead: Q^T, K and
// V^T in three pieces each, S^T the sum of three products, O^T three
// accumulators, all of them within the 96 head dims (K and V^T in bounds).
// CHECK-LABEL: func.func @attention_head_dim_96
// CHECK-COUNT-3: tessel.load %{{.*}} : memref<1x2x96x256xf16, strided<{{.*}}>> -> tensor<32x64xf16,
// CHECK: scf.for {{.*}} -> (tensor<1x64xf32, #{{[^>]*}}>, tensor<2x64xf32, #{{[^>]*}}>, tensor<32x64xf32, #[[$O:[^>]*]]>, tensor<32x64xf32, #[[$O]]>, tensor<32x64xf32, #[[$O]]>)
// CHECK-COUNT-3: tessel.load %{{.*}} in_bounds {{.*}} : memref<1x2x256x96xf16> -> tensor<64x32xf16,
// CHECK-COUNT-3: tessel.load %{{.*}} in_bounds {{.*}} : memref<1x2x96x256xf16, strided<{{.*}}>> -> tensor<32x64xf16,
// CHECK: %[[S0:.*]] = tessel.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16, {{.*}} -> tensor<64x64xf32
// CHECK-NEXT: %[[S1:.*]] = tessel.dot %{{.*}}, %{{.*}}, %[[S0]] : tensor<64x32xf16
// CHECK-NEXT: tessel.dot %{{.*}}, %{{.*}}, %[[S1]] : tensor<64x32xf16
// CHECK-COUNT-3: tessel.dot %{{.*}} : tensor<32x64xf16, {{.*}}>, tensor<64x64xf16, {{.*}}> -> tensor<32x64xf32
// CHECK-COUNT-3: tessel.store %{{.*}} : tensor<32x64xf16, #{{.*}}>, memref<1x2x96x256xf16, strided<{{.*}}>>
func.func @attention_head_dim_96(%q: memref<1x2x256x96xf16>, %k: memref<1x2x256x96xf16>, %v: memref<1x2x256x96xf16>, %o: memref<1x2x256x96xf16>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x256x96xf16>, memref<1x2x256x96xf16>, memref<1x2x256x96xf16>) outs(%o : memref<1x2x256x96xf16>) {config = #tessel.config<tile = [64, 64], waves = [2, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// Local attention (keys p - 100 .. p + 20 around query position p) with
// sinks: the head's sink logit (times log2 e) starts each row's max and a
// sum of 1 (in the first half-wave's part of it); the keys run from the block holding the first query's first
// key, in three loops: the left edge masked (the key offset compared with
// each query's first and last key), the blocks every query sees without
// masks, then the right edge and tail masked.
// CHECK-LABEL: func.func @attention_window_sinks
// CHECK: %[[SINK:.*]] = tessel.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] in_bounds : memref<2x1x64xf32, strided<[1, 0, 0]>> -> tensor<1x64xf32
// CHECK: %[[M0:.*]] = arith.mulf %[[SINK]], %{{.*}} : tensor<1x64xf32
// CHECK: %[[HALF:.*]] = tessel.iota 0 : tensor<2x64xi32
// CHECK: %[[FIRSTHALF:.*]] = arith.cmpi eq, %[[HALF]], %{{.*}} : tensor<2x64xi32
// CHECK: %[[ONE:.*]] = arith.select %[[FIRSTHALF]], %{{.*}} : tensor<2x64xi1, {{.*}}>, tensor<2x64xf32
// CHECK: %[[L0:.*]] = arith.select %{{.*}}, %{{.*}}, %[[ONE]] : tensor<2x64xi1, {{.*}}>, tensor<2x64xf32
// CHECK: %[[LEFT:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[M0]], %{{.*}} = %[[L0]],
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sge
// CHECK: arith.andi
// CHECK: %[[MID:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %[[LEFT]]#0, %{{.*}} = %[[LEFT]]#1, %{{.*}} = %[[LEFT]]#2)
// CHECK-NOT: arith.cmpi
// CHECK: tessel.reduce "max"
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[MID]]#0, %{{.*}} = %[[MID]]#1, %{{.*}} = %[[MID]]#2)
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sge
func.func @attention_window_sinks(%q: memref<1x2x256x64xf16>, %k: memref<1x2x512x64xf16>, %v: memref<1x2x512x64xf16>, %o: memref<1x2x256x64xf16>, %s: memref<2xf32>) {
  tessel.attention ins(%q, %k, %v : memref<1x2x256x64xf16>, memref<1x2x512x64xf16>, memref<1x2x512x64xf16>) outs(%o : memref<1x2x256x64xf16>) sinks(%s : memref<2xf32>) {window = array<i64: 100, 20>, config = #tessel.config<tile = [64, 64], waves = [2, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}
