// RUN: tessel-opt %s --pass-pipeline='builtin.module(func.func(tessel-select-config{chip=gfx942}),tessel-tile{chip=gfx942})' | FileCheck %s

// Paged KV decode: 16-key pages take the 16x16 MFMA and 16-key blocks
// (one page each), split over workgroups; the four heads' one query each
// fill a block of 16 rows. Each key block finds its page
// in the block table (its column clamped to the table, the page to the
// cache), views the page's rows before
// the sequence's end (static strides kept) and reads its K and V^T at the
// block's row in the page; the sequence's length is its context length,
// clamped to its pages.
func.func @paged(%q: memref<2x4x1x64xf16>, %k: memref<?x1x16x64xf16, strided<[1024, 64, 64, 1]>>, %v: memref<?x1x16x64xf16, strided<[1024, 64, 64, 1]>>, %o: memref<2x4x1x64xf16>, %table: memref<2x8xi32>, %lens: memref<2xi32>) {
  tessel.attention ins(%q, %k, %v : memref<2x4x1x64xf16>, memref<?x1x16x64xf16, strided<[1024, 64, 64, 1]>>, memref<?x1x16x64xf16, strided<[1024, 64, 64, 1]>>) outs(%o : memref<2x4x1x64xf16>) paged(%table, %lens : memref<2x8xi32>, memref<2xi32>)
  return
}

// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%{{[^:]*}}: memref<2x4x1x64xf16>, %[[K:[^:]*]]: memref<?x1x16x64xf16, strided<[1024, 64, 64, 1]>>, %[[V:[^:]*]]: {{.*}}, %{{[^:]*}}: {{.*}}, %[[TABLE:[^:]*]]: memref<2x8xi32>, %[[LENS:[^:]*]]: memref<2xi32>
// CHECK-SAME: tessel.config = #tessel.config<tile = [16, 16], waves = [1, 1], stages = 1, instr = "v_mfma_f32_16x16x16_f16", splits = {{[0-9]+}}>
// The group's four heads stacked along the query rows: a view whose sizes
// and strides stay static (the lowering loads Q in 16-byte vectors).
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, 1, 4, 64], strides: [256, 256, 64, 1] : memref<f16> to memref<2x1x4x64xf16, strided<[256, 256, 64, 1]>>
// CHECK: %[[Z:.*]] = tessel.program_id 2
// CHECK: %[[B:.*]] = arith.divui %[[Z]]
// CHECK: %[[LENRAW:.*]] = memref.load %[[LENS]][%[[B]]] : memref<2xi32>
// CHECK: %[[LEN:.*]] = arith.index_cast %[[LENRAW]] : i32 to index
// CHECK: %[[CAP:.*]] = arith.muli %{{.*}}, %c16
// CHECK: %[[LENPOS:.*]] = arith.maxsi %[[LEN]], %{{.*}}
// CHECK: %[[SEQKV:.*]] = arith.minsi %[[CAP]], %[[LENPOS]]
// CHECK: scf.for
// CHECK: scf.for %[[N0:.*]] = %{{.*}} step %c16
// CHECK:   %[[COLUMN:.*]] = arith.divui %[[N0]], %c16
// CHECK:   %[[SLOT:.*]] = arith.minui %[[COLUMN]], %{{.*}}
// CHECK:   %[[PAGERAW:.*]] = memref.load %[[TABLE]][%[[B]], %[[SLOT]]] : memref<2x8xi32>
// CHECK:   %[[PAGE:.*]] = arith.index_cast %[[PAGERAW]] : i32 to index
// CHECK:   %[[PAGES:.*]] = memref.dim %[[K]], %c0
// CHECK:   %[[LAST:.*]] = arith.subi %[[PAGES]], %c1
// CHECK:   %[[PAGEPOS:.*]] = arith.maxsi %[[PAGE]], %{{.*}}
// CHECK:   %[[CLAMPED:.*]] = arith.minsi %[[LAST]], %[[PAGEPOS]]
// CHECK:   %[[ROW:.*]] = arith.remui %[[N0]], %c16
// CHECK:   %[[START:.*]] = arith.subi %[[N0]], %[[ROW]]
// CHECK:   %[[LEFT:.*]] = arith.subi %[[SEQKV]], %[[START]]
// CHECK:   %[[LEFTPOS:.*]] = arith.maxsi %[[LEFT]], %{{.*}}
// CHECK:   %[[VALID:.*]] = arith.minsi %c16{{.*}}, %[[LEFTPOS]]
// CHECK:   %{{.*}}, %[[KOFF:.*]], %{{.*}}:4, %[[KSTRIDES:.*]]:4 = memref.extract_strided_metadata %[[K]]
// CHECK:   %[[SHIFT:.*]] = arith.muli %[[CLAMPED]], %[[KSTRIDES]]#0
// CHECK:   %[[OFF:.*]] = arith.addi %[[KOFF]], %[[SHIFT]]
// CHECK:   %[[KPAGE:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%[[OFF]]], sizes: [1, 1, %[[VALID]], 64], strides: [1024, 64, 64, 1]
// CHECK:   memref.extract_strided_metadata %[[V]]
// CHECK:   %[[VPAGE:.*]] = memref.reinterpret_cast
// CHECK:   %[[VT:.*]] = memref.transpose %[[VPAGE]]
// A paged split's key count is a run-time value: its K stays coalesced,
// through LDS (not in the first product's operand layout).
// CHECK:   tessel.load %[[KPAGE]][%c0{{.*}}, %{{.*}}, %[[ROW]], %c0{{.*}}] {{.*}} -> tensor<16x64xf16, #blocked{{[0-9]*}}>
// CHECK:   tessel.load %[[VT]][%c0{{.*}}, %{{.*}}, %c0{{.*}}, %[[ROW]]]
