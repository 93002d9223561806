// RUN: tessel-opt %s --split-input-file --tessel-tile --verify-diagnostics | FileCheck %s
// RUN: tessel-opt %s --split-input-file --tessel-tile=chip=gfx942 --verify-diagnostics | FileCheck %s --check-prefix=XCD
// RUN: not tessel-opt %s --split-input-file --tessel-tile=chip=gfx9000 2>&1 | FileCheck %s --check-prefix=BADCHIP

// With gfx942's 8 XCDs, the id is first renumbered so that the ids one XCD
// receives (id mod 8) form a contiguous range of its share: the first
// `tall` XCDs get one workgroup more when 8 does not divide the grid.
// XCD-LABEL: func.func @batched
// XCD: %[[XCD:.*]] = arith.remui %{{.*}}, %c8 : index
// XCD-NEXT: %[[LOCAL:.*]] = arith.divui %{{.*}}, %c8 : index
// XCD-NEXT: %[[TALL:.*]] = arith.cmpi ult, %[[XCD]], %{{.*}} : index
// XCD: arith.select %[[TALL]], %{{.*}}, %{{.*}} : index
// BADCHIP: error: unknown chip 'gfx9000'

// A batched f16 matmul with a bias along N and relu: workgroup (x, y, z) =
// (N tile, M tile, batch), a K loop of loads in coalesced layouts into a
// dot whose accumulator is in the instruction's layout, then the epilogue on
// the accumulator tile and the store. The sizes are multiples of the tile,
// so the A, B and C tiles are in bounds (no masks). B is stored K x N and
// the K tile spans 64 bytes: each lane loads it as two rows of four
// elements (a run along K across rows, whose row offsets the lowering adds
// as constants), so that LDS can keep K contiguous.
// CHECK-DAG: #[[$MMA:mma[0-9]*]] = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2], transposed>
// CHECK-DAG: #[[$BLKA:blocked[0-9]*]] = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [16, 4], waves = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[$BLKB:blocked[0-9]*]] = #tessel.blocked<sizePerThread = [2, 4], threadsPerWave = [4, 16], waves = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[A:.*]]: memref<2x64x32xf16>, %[[B:.*]]: memref<2x32x64xf16>, %[[C:.*]]: memref<2x64x64xf16>, %[[BIAS:.*]]: memref<64xf32>)
// CHECK-SAME: tessel.tile = array<i64: 64, 64>, tessel.workgroup_size = 256 : i64
// The workgroups of a batch walk the tiles in groups of 8 tile rows (no
// chip given: one L2, no XCD renumbering): id = x + gridX y, and in the
// group of id / (8 gridX), row 8 group + (id mod 8 gridX) mod rows, column
// (id mod 8 gridX) / rows, where rows is what is left of the group.
// CHECK-DAG: %[[PB:.*]] = tessel.program_id 2
// CHECK-DAG: %[[GX:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK-DAG: %[[PN:.*]] = tessel.program_id 0
// CHECK-DAG: %[[PM:.*]] = tessel.program_id 1
// CHECK: %[[Y:.*]] = arith.muli %[[PM]], %[[GX]] : index
// CHECK: %[[ID:.*]] = arith.addi %[[PN]], %[[Y]] : index
// CHECK-NOT: arith.select
// CHECK: arith.minui %c8
// CHECK-NEXT: %[[ROWS:.*]] = arith.maxui
// CHECK-NEXT: %[[IN:.*]] = arith.remui %[[ID]], %{{.*}} : index
// CHECK-NEXT: %[[R:.*]] = arith.remui %[[IN]], %[[ROWS]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %{{.*}}, %[[R]] : index
// CHECK-NEXT: %[[COL:.*]] = arith.divui %[[IN]], %[[ROWS]] : index
// CHECK: %[[M0:.*]] = arith.muli %[[ROW]], %{{.*}} : index
// CHECK: %[[N0:.*]] = arith.muli %[[COL]], %{{.*}} : index
// CHECK: %[[K:.*]] = memref.dim %[[A]], %{{.*}} : memref<2x64x32xf16>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #[[$MMA]]>
// CHECK: %[[ACC:.*]] = scf.for %[[K0:.*]] = %{{.*}} to %[[K]] step %{{.*}} iter_args(%[[SUM:.*]] = %[[ZERO]])
// CHECK:   %[[TA:.*]] = tessel.load %[[A]][%[[PB]], %[[M0]], %[[K0]]] in_bounds : memref<2x64x32xf16> -> tensor<64x32xf16, #[[$BLKA]]>
// CHECK:   %[[TB:.*]] = tessel.load %[[B]][%[[PB]], %[[K0]], %[[N0]]] in_bounds {tessel.constant_row_offsets} : memref<2x32x64xf16> -> tensor<32x64xf16, #[[$BLKB]]>
// CHECK:   %[[D:.*]] = tessel.dot %[[TA]], %[[TB]], %[[SUM]]
// CHECK:   scf.yield %[[D]]
// The bias is read through a view broadcasting it along batch and M, its
// sizes and strides static (zero strides, a unit one the lowering
// vectorizes along), in bounds like C.
// CHECK: %[[BIAS:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [2, 64, 64], strides: [0, 0, 1]
// CHECK: %[[TBIAS:.*]] = tessel.load %[[BIAS]][%[[PB]], %[[M0]], %[[N0]]] in_bounds : memref<2x64x64xf32, strided<[0, 0, 1], offset: ?>> -> tensor<64x64xf32, #[[$MMA]]>
// CHECK: %[[SUMB:.*]] = arith.addf %[[ACC]], %[[TBIAS]] : tensor<64x64xf32, #[[$MMA]]>
// CHECK: %[[RELU:.*]] = arith.maximumf %[[SUMB]], %{{.*}} : tensor<64x64xf32, #[[$MMA]]>
// CHECK: %[[OUT:.*]] = arith.truncf %[[RELU]] : tensor<64x64xf32, #[[$MMA]]> to tensor<64x64xf16, #[[$MMA]]>
// CHECK: tessel.store %[[OUT]], %[[C]][%[[PB]], %[[M0]], %[[N0]]] in_bounds :
// CHECK-NOT: tessel.matmul
func.func @batched(%arg0: memref<2x64x32xf16>, %arg1: memref<2x32x64xf16>, %arg2: memref<2x64x64xf16>, %arg3: memref<64xf32>) {
  tessel.matmul ins(%arg0, %arg1 : memref<2x64x32xf16>, memref<2x32x64xf16>) outs(%arg2 : memref<2x64x64xf16>) epilogue(%arg3 : memref<64xf32>) {
  ^bb0(%acc: f32, %bias: f32):
    %0 = arith.addf %acc, %bias : f32
    %cst = arith.constant 0.000000e+00 : f32
    %1 = arith.maximumf %0, %cst : f32
    %2 = arith.truncf %1 : f32 to f16
    tessel.yield %2 : f16
  } {config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

// A transposed B (K contiguous) is loaded K-major; i8 accumulates in i32 and
// C = i32 needs no conversion.
// CHECK-DAG: #[[$BT:blocked[0-9]*]] = #tessel.blocked<sizePerThread = [16, 1], threadsPerWave = [4, 16], waves = [1, 1], order = [0, 1]>
// CHECK-DAG: #[[$MMAI:mma[0-9]*]] = #tessel.mma<"v_mfma_i32_32x32x16_i8", waves = [1, 1], transposed>
// CHECK-LABEL: func.func @transposed_i8
// CHECK: tessel.load %{{.*}} : memref<64x32xi8, strided<[1, 64]>> -> tensor<64x32xi8, #[[$BT]]>
// CHECK: tessel.dot {{.*}} -> tensor<32x32xi32, #[[$MMAI]]>
// CHECK-NOT: arith.trunc
// CHECK: tessel.store
func.func @transposed_i8(%a: memref<32x64xi8>, %b: memref<64x32xi8, strided<[1, 64]>>, %c: memref<32x32xi32>) {
  tessel.matmul ins(%a, %b : memref<32x64xi8>, memref<64x32xi8, strided<[1, 64]>>) outs(%c : memref<32x32xi32>) {config = #tessel.config<tile = [32, 32, 64], waves = [1, 1], stages = 1, instr = "v_mfma_i32_32x32x16_i8">}
  return
}

// -----

// A C whose columns are contiguous keeps the hardware accumulator layout
// (a lane's accumulators are consecutive rows: stored along M); a row-major
// C (above) takes the transposed one.
// CHECK-DAG: #[[$MMACOL:mma[0-9]*]] = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [1, 1]>
// CHECK-LABEL: func.func @column_major_c
// CHECK: tessel.dot {{.*}} -> tensor<32x32xf32, #[[$MMACOL]]>
// CHECK: tessel.store {{.*}} : tensor<32x32xf32, #[[$MMACOL]]>, memref<32x32xf32, strided<[1, 32]>>
func.func @column_major_c(%a: memref<32x64xf16>, %b: memref<64x32xf16>, %c: memref<32x32xf32, strided<[1, 32]>>) {
  tessel.matmul ins(%a, %b : memref<32x64xf16>, memref<64x32xf16>) outs(%c : memref<32x32xf32, strided<[1, 32]>>) {config = #tessel.config<tile = [32, 32, 16], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

// Sizes the tile does not divide (M = 100, K = 40) or that are dynamic (N)
// keep their masks: no tile claims to be in bounds.
// CHECK-LABEL: func.func @partial
// CHECK: tessel.load %{{[^ ]*}}[%{{[^]]*}}] : memref<100x40xf16>
// CHECK: tessel.load %{{[^ ]*}}[%{{[^]]*}}] : memref<40x?xf16>
// CHECK: tessel.store %{{[^ ]*}}, %{{[^ ]*}}[%{{[^]]*}}] : tensor
// CHECK-NOT: in_bounds
func.func @partial(%a: memref<100x40xf16>, %b: memref<40x?xf16>, %c: memref<100x?xf16>) {
  tessel.matmul ins(%a, %b : memref<100x40xf16>, memref<40x?xf16>) outs(%c : memref<100x?xf16>) {config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

// Only the dimensions the tile divides matter: M = 128 and K = 64 make A's
// tile in bounds while B (N = 100) and C stay masked.
// CHECK-LABEL: func.func @a_only
// CHECK: tessel.load %{{[^ ]*}}[%{{[^]]*}}] in_bounds : memref<128x64xf16>
// CHECK: tessel.load %{{[^ ]*}}[%{{[^]]*}}] : memref<64x100xf16>
// CHECK: tessel.store %{{[^ ]*}}, %{{[^ ]*}}[%{{[^]]*}}] : tensor
func.func @a_only(%a: memref<128x64xf16>, %b: memref<64x100xf16>, %c: memref<128x100xf16>) {
  tessel.matmul ins(%a, %b : memref<128x64xf16>, memref<64x100xf16>) outs(%c : memref<128x100xf16>) {config = #tessel.config<tile = [64, 64, 32], waves = [2, 2], stages = 2, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

func.func @unconfigured(%a: memref<32x64xf16>, %b: memref<64x32xf16>, %c: memref<32x32xf16>) {
  // expected-error @+1 {{'tessel.matmul' op has no #tessel.config: run tessel-select-config first}}
  tessel.matmul ins(%a, %b : memref<32x64xf16>, memref<64x32xf16>) outs(%c : memref<32x32xf16>)
  return
}

// -----

func.func @not_elementwise(%a: memref<32x64xf16>, %b: memref<64x32xf16>, %c: memref<32x32xf32>, %s: memref<32xf32>) {
  tessel.matmul ins(%a, %b : memref<32x64xf16>, memref<64x32xf16>) outs(%c : memref<32x32xf32>) epilogue(%s : memref<32xf32>) {
  ^bb0(%acc: f32, %x: f32):
    // expected-error @+1 {{'ub.poison' op cannot be applied to a tile: epilogue ops must be elementwise (arith, math)}}
    %0 = ub.poison : f32
    tessel.yield %0 : f32
  } {config = #tessel.config<tile = [32, 32, 16], waves = [1, 1], stages = 1, instr = "v_mfma_f32_32x32x8_f16">}
  return
}

// -----

func.func @attention_unconfigured(%q: memref<1x1x16x64xf16>, %k: memref<1x1x16x64xf16>, %v: memref<1x1x16x64xf16>, %o: memref<1x1x16x64xf16>) {
  // expected-error @+1 {{'tessel.attention' op has no #tessel.config: run tessel-select-config first}}
  tessel.attention ins(%q, %k, %v : memref<1x1x16x64xf16>, memref<1x1x16x64xf16>, memref<1x1x16x64xf16>) outs(%o : memref<1x1x16x64xf16>)
  return
}
