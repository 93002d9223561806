// RUN: tessel-opt %s --tessel-lower-to-gpu="chip=gfx942" --cse | FileCheck %s

// A bf16 tile of B stored K x N, loaded in runs of four rows per lane (as
// tessel-tile lays out a matmul operand it keeps K-contiguous in LDS). With
// tessel.constant_row_offsets the four rows share one pair of indices (the
// tile origin plus the lane's coordinates) and differ only in a constant
// offset of one row (4096 elements) each (after CSE of their index casts),
// so the backend computes one address per lane instead of multiplying each
// row's index by the stride.
// CHECK-LABEL: gpu.func @k_runs
// CHECK: amdgpu.raw_buffer_load %{{.*}}[%[[ROW:.*]], %[[COL:.*]]] : memref<64x4096xbf16>, i32, i32 -> vector<4xbf16>
// CHECK-NEXT: amdgpu.raw_buffer_load {indexOffset = 4096 : i32} %{{.*}}[%[[ROW]], %[[COL]]]
// CHECK-NEXT: amdgpu.raw_buffer_load {indexOffset = 8192 : i32} %{{.*}}[%[[ROW]], %[[COL]]]
// CHECK-NEXT: amdgpu.raw_buffer_load {indexOffset = 12288 : i32} %{{.*}}[%[[ROW]], %[[COL]]]
// Without the attribute each row gets its own indices.
// CHECK-LABEL: gpu.func @per_row
// CHECK: amdgpu.raw_buffer_load %{{.*}}[%[[R0:.*]], %{{.*}}] : memref<64x4096xbf16>
// CHECK-NOT: indexOffset
// CHECK: amdgpu.raw_buffer_load %{{.*}}[%[[R1:.*]], %{{.*}}] : memref<64x4096xbf16>
// CHECK-NOT: indexOffset
// CHECK: gpu.return
#blocked = #tessel.blocked<sizePerThread = [4, 4], threadsPerWave = [2, 32], waves = [1, 1], order = [1, 0]>
module {
  func.func @k_runs(%b: memref<64x4096xbf16>, %out: memref<8x128xbf16>, %k0: index, %n0: index) attributes {tessel.workgroup_size = 64 : i64, tessel.tile = array<i64: 8, 128>} {
    %t = tessel.load %b[%k0, %n0] in_bounds {tessel.constant_row_offsets} : memref<64x4096xbf16> -> tensor<8x128xbf16, #blocked>
    %c0 = arith.constant 0 : index
    tessel.store %t, %out[%c0, %c0] in_bounds : tensor<8x128xbf16, #blocked>, memref<8x128xbf16>
    return
  }
  func.func @per_row(%b: memref<64x4096xbf16>, %out: memref<8x128xbf16>, %k0: index, %n0: index) attributes {tessel.workgroup_size = 64 : i64, tessel.tile = array<i64: 8, 128>} {
    %t = tessel.load %b[%k0, %n0] in_bounds : memref<64x4096xbf16> -> tensor<8x128xbf16, #blocked>
    %c0 = arith.constant 0 : index
    tessel.store %t, %out[%c0, %c0] in_bounds : tensor<8x128xbf16, #blocked>, memref<8x128xbf16>
    return
  }
}
