// Every layout attribute parses, prints and parses back.
// RUN: tessel-opt %s --mlir-print-local-scope | FileCheck %s
// RUN: tessel-opt %s | tessel-opt --mlir-print-local-scope | FileCheck %s
// RUN: tessel-opt %s --mlir-print-op-generic | tessel-opt --mlir-print-local-scope | FileCheck %s
// Without local scope, layouts print as aliases (#mma, #blocked, ...).
// RUN: tessel-opt %s | FileCheck %s --check-prefix=ALIAS
// ALIAS-DAG: #blocked = #tessel.blocked<
// ALIAS-DAG: #mma = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2]>
// ALIAS-DAG: #swizzle{{[0-9]*}} = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>
// ALIAS-DAG: #mma_operand = #tessel.mma_operand<a,

// CHECK-LABEL: func.func private @blocked
// CHECK-SAME: layout = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>
func.func private @blocked() attributes {layout = #tessel.blocked<sizePerThread = [1, 8], threadsPerWave = [8, 8], waves = [4, 1], order = [1, 0]>}

// CHECK-LABEL: func.func private @mma
// CHECK-SAME: cdna = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2]>
// CHECK-SAME: legacy = #tessel.mma<"v_mfma_f32_32x32x8bf16_1k", waves = [1, 4], chip = "gfx90a">
// CHECK-SAME: rdna = #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1], chip = "gfx1201", waveSize = 64>
// CHECK-SAME: transposed = #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [2, 1], transposed>
// CHECK-SAME: transposed_chip = #tessel.mma<"v_mfma_f32_32x32x8bf16_1k", waves = [1, 1], chip = "gfx90a", waveSize = 64, transposed>
func.func private @mma() attributes {
  cdna = #tessel.mma<"v_mfma_f32_32x32x8_f16", waves = [2, 2]>,
  legacy = #tessel.mma<"v_mfma_f32_32x32x8bf16_1k", waves = [1, 4], chip = "gfx90a">,
  rdna = #tessel.mma<"v_wmma_f32_16x16x16_f16", waves = [1, 1], chip = "gfx1201", waveSize = 64>,
  transposed = #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [2, 1], transposed>,
  transposed_chip = #tessel.mma<"v_mfma_f32_32x32x8bf16_1k", waves = [1, 1], chip = "gfx90a", waveSize = 64, transposed>}

// CHECK-LABEL: func.func private @mma_operand
// CHECK-SAME: a = #tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 4>
// CHECK-SAME: b = #tessel.mma_operand<b, #tessel.mma<"v_mfma_f32_16x16x32_fp8_fp8", waves = [2, 1]>, kWidth = 16>
// CHECK-SAME: runs = #tessel.mma_operand<b, #tessel.mma<"v_mfma_f32_32x32x16_f16", waves = [1, 2]>, kWidth = 4>
func.func private @mma_operand() attributes {
  a = #tessel.mma_operand<a, #tessel.mma<"v_mfma_f32_16x16x16_f16", waves = [1, 1]>, kWidth = 4>,
  b = #tessel.mma_operand<b, #tessel.mma<"v_mfma_f32_16x16x32_fp8_fp8", waves = [2, 1]>, kWidth = 16>,
  runs = #tessel.mma_operand<b, #tessel.mma<"v_mfma_f32_32x32x16_f16", waves = [1, 2]>, kWidth = 4>}

// CHECK-LABEL: func.func private @swizzle
// CHECK-SAME: folded = #tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 16, fold = true>
// CHECK-SAME: plain = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>
// CHECK-SAME: transposed = #tessel.swizzle<vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]>
// CHECK-SAME: transposed_folded = #tessel.swizzle<vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1], fold = true>
// CHECK-SAME: unfolded = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>
func.func private @swizzle() attributes {
  folded = #tessel.swizzle<vec = 4, perPhase = 1, maxPhase = 16, fold = true>,
  plain = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8>,
  transposed = #tessel.swizzle<vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1]>,
  transposed_folded = #tessel.swizzle<vec = 4, perPhase = 2, maxPhase = 4, order = [0, 1], fold = true>,
  unfolded = #tessel.swizzle<vec = 8, perPhase = 1, maxPhase = 8, fold = false>}

// CHECK-LABEL: func.func private @linear
// CHECK-SAME: distributed = #tessel.linear<register = {{\[\[}}0, 1]], lane = {{\[\[}}1, 0], [2, 0]], wave = {{\[\[}}0, 0]]>
// CHECK-SAME: memory = #tessel.linear<offset = {{\[\[}}0, 1], [1, 1]]>
func.func private @linear() attributes {
  distributed = #tessel.linear<register = [[0, 1]], lane = [[1, 0], [2, 0]], wave = [[0, 0]]>,
  memory = #tessel.linear<offset = [[0, 1], [1, 1]]>}
