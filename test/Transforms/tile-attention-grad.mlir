// RUN: tessel-opt %s --pass-pipeline='builtin.module(tessel-tile)' | FileCheck %s

// The attention backward becomes a plan of two kernels sharing one
// workspace, D = rowsum(dO * O) [batch, heads, seq_q]: @grad__dq (stage 0,
// one workgroup per query block) writes D and dQ; @grad__dkdv (stage 1, one
// workgroup per key block and key/value head) reads D and writes dK and dV.
// Both put their own rows along the products' columns (waves split them)
// and keep P and dS in accumulator registers as the B operand of the next
// product. Causal with dynamic lengths: the loops over the other dimension
// are split into masked and unmasked ranges. Causal blocks differ in
// work, so both kernels run the longest first: the dQ kernel its query
// blocks from the last, the dK/dV kernel its key blocks from the first
// (flat id i: block position i / (heads x batch), head and batch
// i mod (heads x batch)).
func.func @grad(%q: memref<1x4x?x64xf16>, %k: memref<1x2x?x64xf16>, %v: memref<1x2x?x64xf16>,
                %o: memref<1x4x?x64xf16>, %do: memref<1x4x?x64xf16>, %lse: memref<1x4x?xf32>,
                %dq: memref<1x4x?x64xf16>, %dk: memref<1x2x?x64xf16>, %dv: memref<1x2x?x64xf16>) {
  tessel.attention_grad ins(%q, %k, %v, %o, %do, %lse : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?x64xf16>, memref<1x4x?xf32>)
                        outs(%dq, %dk, %dv : memref<1x4x?x64xf16>, memref<1x2x?x64xf16>, memref<1x2x?x64xf16>)
                        {causal, config = #tessel.config<tile = [64, 16], waves = [4, 1], stages = 1, instr = "v_mfma_f32_16x16x16_f16">}
  return
}

// CHECK-DAG: #[[$MMA:mma[0-9]*]] = #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 4]>
// CHECK-DAG: #[[$COLS:linear[0-9]*]] = #tessel.linear<lane = {{\[}}[0, 1], [0, 2], [0, 4], [0, 8], [0, 0], [0, 0]], wave = {{\[}}[0, 16], [0, 32]]>
// CHECK-DAG: #[[$ROWS:linear[0-9]*]] = #tessel.linear<register = {{\[}}[1, 0], [2, 0]], lane = {{\[}}[0, 0], [0, 0], [0, 0], [0, 0], [4, 0], [8, 0]], wave = {{\[}}[0, 0], [0, 0]]>

// CHECK-LABEL: func.func @grad__dq
// CHECK-SAME: %[[Q:[^:]*]]: memref<1x4x?x64xf16>, %[[K:[^:]*]]: memref<1x2x?x64xf16>, %[[V:[^:]*]]: memref<1x2x?x64xf16>, %[[O:[^:]*]]: memref<1x4x?x64xf16>, %[[DO:[^:]*]]: memref<1x4x?x64xf16>, %[[LSE:[^:]*]]: memref<1x4x?xf32>, %[[DQ:[^:]*]]: memref<1x4x?x64xf16>, %{{[^:]*}}: memref<1x2x?x64xf16>, %{{[^:]*}}: memref<1x2x?x64xf16>, %[[D:[^:]*]]: memref<1x4x?xf32>)
// CHECK-SAME: tessel.longest_first
// CHECK-SAME: tessel.plan_of = "grad", tessel.plan_stage = 0 : i64, tessel.tile = array<i64: 64, 16>, tessel.workgroup_size = 256 : i64, tessel.workspace_dims = {{\[}}["batch", "heads", "seq_q"]]
// D from O^T and dO^T in the accumulators' layout, one value per query.
// CHECK: %[[PROD:.*]] = arith.mulf
// CHECK: %[[ROWSUM:.*]] = tessel.reduce "add" %[[PROD]] along 0 : tensor<64x64xf32, #[[$MMA]]> -> tensor<1x64xf32, #[[$COLS]]>
// CHECK: tessel.store %[[ROWSUM]], %{{.*}} : tensor<1x64xf32, #[[$COLS]]>
// CHECK: %[[DTILE:.*]] = tessel.broadcast %[[ROWSUM]] : tensor<1x64xf32, #[[$COLS]]> -> tensor<16x64xf32, #[[$MMA]]>
// Q^T and dO^T loaded once, before the key loops.
// CHECK: %[[QT:.*]] = tessel.load %{{.*}} -> tensor<64x64xf16
// CHECK: %[[DOT:.*]] = tessel.load %{{.*}} -> tensor<64x64xf16
// The masked loop (before the diagonal: empty when causal has no left
// bound), the unmasked one, the masked diagonal and tail.
// CHECK: scf.for
// CHECK: %[[UNMASKED:.*]] = scf.for %[[N0:.*]] = %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<64x64xf32, #[[$MMA]]>)
// CHECK-NOT: tessel.iota
// CHECK:   %[[KB:.*]] = tessel.load %[[K]][%{{.*}}, %{{.*}}, %[[N0]], %{{.*}}]
// CHECK:   %[[VB:.*]] = tessel.load %[[V]][%{{.*}}, %{{.*}}, %[[N0]], %{{.*}}]
// CHECK:   %[[KT:.*]] = tessel.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[N0]]]
// CHECK:   %[[ST:.*]] = tessel.dot %[[KB]], %[[QT]]
// CHECK:   %[[PT:.*]] = math.exp2 %{{.*}} fastmath<afn>
// CHECK:   %[[DPT:.*]] = tessel.dot %[[VB]], %[[DOT]]
// CHECK:   %[[DIFF:.*]] = arith.subf %[[DPT]], %[[DTILE]]
// CHECK:   %[[DST:.*]] = arith.mulf %[[PT]], %[[DIFF]]
// CHECK:   %[[DSLOW:.*]] = arith.truncf %[[DST]] : tensor<16x64xf32, #[[$MMA]]> to tensor<16x64xf16, #[[$MMA]]>
// CHECK:   %[[NEXT:.*]] = tessel.dot %[[KT]], %[[DSLOW]], %[[ACC]]
// CHECK:   scf.yield %[[NEXT]]
// CHECK: %[[LAST:.*]] = scf.for
// CHECK:   tessel.iota
// CHECK:   arith.cmpi sle
// CHECK: %[[SCALED:.*]] = arith.mulf %[[LAST]], %{{.*}} : tensor<64x64xf32, #[[$MMA]]>
// CHECK: %[[DQLOW:.*]] = arith.truncf %[[SCALED]]
// CHECK: %[[DQT:.*]] = memref.transpose %[[DQ]]
// CHECK: tessel.store %[[DQLOW]], %[[DQT]]

// CHECK-LABEL: func.func @grad__dkdv
// CHECK-SAME: %[[Q2:[^:]*]]: memref<1x4x?x64xf16>, %[[K2:[^:]*]]: memref<1x2x?x64xf16>, %[[V2:[^:]*]]: memref<1x2x?x64xf16>, %{{[^:]*}}: memref<1x4x?x64xf16>, %[[DO2:[^:]*]]: memref<1x4x?x64xf16>, %{{[^:]*}}: memref<1x4x?xf32>, %{{[^:]*}}: memref<1x4x?x64xf16>, %[[DK:[^:]*]]: memref<1x2x?x64xf16>, %[[DV:[^:]*]]: memref<1x2x?x64xf16>, %{{[^:]*}}: memref<1x4x?xf32>)
// CHECK-SAME: tessel.grid_over_keys, tessel.longest_first, tessel.plan_of = "grad", tessel.plan_stage = 1 : i64
// CHECK: %[[KBLOCKS:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK: %[[KVHEADS:.*]] = memref.dim %[[K2]], %c1
// CHECK: %[[PER:.*]] = arith.muli %[[KVHEADS]], %{{.*}} : index
// CHECK: %[[X:.*]] = tessel.program_id 0
// CHECK: %[[ID:.*]] = arith.addi %[[X]], %{{.*}} : index
// CHECK: %[[POS:.*]] = arith.divui %[[ID]], %[[PER]] : index
// CHECK: %[[REST:.*]] = arith.remui %[[ID]], %[[PER]] : index
// CHECK: %[[KVH:.*]] = arith.remui %[[REST]], %[[KVHEADS]] : index
// CHECK-NOT: arith.subi %{{.*}}, %[[POS]]
// CHECK: arith.muli %[[POS]], %{{.*}} : index
// K^T and V^T loaded once per key block.
// CHECK: %[[KT2:.*]] = tessel.load %{{.*}}[%{{.*}}, %[[KVH]], %{{.*}}, %{{.*}}] {{.*}} -> tensor<64x64xf16
// CHECK: %[[VT2:.*]] = tessel.load %{{.*}}[%{{.*}}, %[[KVH]], %{{.*}}, %{{.*}}] {{.*}} -> tensor<64x64xf16
// Over the group's query heads, then their query blocks.
// CHECK: %[[HEADS:.*]]:2 = scf.for %[[H:.*]] = %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<64x64xf32, #[[$MMA]]>, tensor<64x64xf32, #[[$MMA]]>)
// CHECK:   scf.for
// CHECK:   scf.for %[[M0:.*]] = %{{.*}} iter_args(%[[DKACC:.*]] = %{{.*}}, %[[DVACC:.*]] = %{{.*}})
// CHECK-NOT: tessel.iota
// CHECK:     %[[QB:.*]] = tessel.load %[[Q2]][%{{.*}}, %[[H]], %[[M0]], %{{.*}}]
// CHECK:     %[[DOB:.*]] = tessel.load %[[DO2]][%{{.*}}, %[[H]], %[[M0]], %{{.*}}]
// CHECK:     %[[DOTB:.*]] = tessel.load %{{.*}}[%{{.*}}, %[[H]], %{{.*}}, %[[M0]]]
// CHECK:     %[[QTB:.*]] = tessel.load %{{.*}}[%{{.*}}, %[[H]], %{{.*}}, %[[M0]]]
// CHECK:     %[[S:.*]] = tessel.dot %[[QB]], %[[KT2]]
// CHECK:     %[[LSEROW:.*]] = tessel.load %{{.*}} -> tensor<16x1xf32, #[[$ROWS]]>
// CHECK:     %[[P:.*]] = math.exp2
// CHECK:     %[[DP:.*]] = tessel.dot %[[DOB]], %[[VT2]]
// CHECK:     %[[DROW:.*]] = tessel.load %{{.*}} -> tensor<16x1xf32, #[[$ROWS]]>
// CHECK:     %[[DS:.*]] = arith.mulf %[[P]]
// CHECK:     %[[PLOW:.*]] = arith.truncf %[[P]]
// CHECK:     %[[DVN:.*]] = tessel.dot %[[DOTB]], %[[PLOW]], %[[DVACC]]
// CHECK:     %[[DSLOW2:.*]] = arith.truncf %[[DS]]
// CHECK:     %[[DKN:.*]] = tessel.dot %[[QTB]], %[[DSLOW2]], %[[DKACC]]
// CHECK:     scf.yield %[[DKN]], %[[DVN]]
// dK is scaled by the softmax scale; dV is not.
// CHECK: %[[DKS:.*]] = arith.mulf %[[HEADS]]#0
// CHECK: %[[DKLOW:.*]] = arith.truncf %[[DKS]]
// CHECK: %[[DKT:.*]] = memref.transpose %[[DK]]
// CHECK: tessel.store %[[DKLOW]], %[[DKT]]
// CHECK: %[[DVLOW:.*]] = arith.truncf %[[HEADS]]#1
// CHECK: %[[DVT:.*]] = memref.transpose %[[DV]]
// CHECK: tessel.store %[[DVLOW]], %[[DVT]]
