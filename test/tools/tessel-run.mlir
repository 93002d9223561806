// tessel-run on gpu.func kernels: how given arrays are laid out, and bounds
// on launches and on the input text.
//
// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.arange(64, dtype=np.float32).reshape(16, 4)); np.save('%t.y.npy', np.zeros((16, 4), dtype=np.float32))"

// A memref whose leading stride is dynamic (column-major, as a transposed
// operand is) gets the dense strides of its layout's order, [1, 16] here,
// not row-major ones that make its elements overlap.
// RUN: tessel-run %s --kernel copy_transposed --chip gfx942 --arg %t.x.npy --arg %t.y.npy --out-dir %t.copy | FileCheck %s --check-prefix=COPY
// RUN: %python -c "import numpy as np; y = np.load('%t.copy/arg1.npy'); assert (y == np.arange(64).reshape(16, 4)).all(), y; print('copy ok')" | FileCheck %s --check-prefix=COPYOK
// COPY: copy_transposed on emu (gfx942): grid 1x1x1, block 64x1x1
// COPYOK: copy ok

// Grids the dispatch packet cannot hold or the emulator should not start
// are diagnosed, never wrapped around to an empty grid.
// RUN: not tessel-run %s --kernel copy_transposed --chip gfx942 --grid 65536,65536 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=GRID
// GRID: tessel-run: error: --grid 65536,65536: 65536x65536x1 workgroups are more than the 16777216 one emulator launch runs
// RUN: not tessel-run %s --kernel copy_transposed --chip gfx942 --grid 4294967296 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=GRID32
// GRID32: tessel-run: error: --grid 4294967296: dimension 0 has 4294967296 workgroups, over the 4294967295 an AMD dispatch allows
// RUN: not tessel-run %s --kernel copy_transposed --chip gfx942 --block 4294967297 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: tessel-run: error: kernel 'copy_transposed': a workgroup of 4294967297 lanes exceeds the 1024 lanes gfx942 allows
// The device names are the C API's and Python's.
// RUN: not tessel-run %s --kernel copy_transposed --chip gfx942 --device emu 2>&1 | FileCheck %s --check-prefix=DEVICE
// DEVICE: error: unknown device 'emu'; expected emulator or hip
// RUN: not tessel-run %s --kernel copy_transposed --chip gfx942 --block 4294967296,4294967296,2 --arg %t.x.npy --arg %t.y.npy 2>&1 | FileCheck %s --check-prefix=BLOCK64
// BLOCK64: tessel-run: error: kernel 'copy_transposed': a workgroup of 4294967296x4294967296x2 lanes exceeds the 1024 lanes gfx942 allows

// An --out-dir that cannot be created fails before anything runs.
// RUN: touch %t.file
// RUN: not tessel-run %s --kernel copy_transposed --chip gfx942 --arg %t.x.npy --arg %t.y.npy --out-dir %t.file/out 2>&1 | FileCheck %s --check-prefix=OUTDIR
// OUTDIR: tessel-run: error: --out-dir '{{.*}}.file/out': '{{.*}}.file' is not a directory
// OUTDIR-NOT: copy_transposed on emu

// Input past the parser's limits is rejected before parsing.
// RUN: %python -c "print('func.func @f() attributes {a = ' + '[' * 300 + ']' * 300 + '} { return }')" > %t.deep.mlir
// RUN: not tessel-run %t.deep.mlir --kernel f 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: :1:287: error: brackets nest deeper than 256 levels

gpu.module @kernels {
  gpu.func @copy_transposed(%x: memref<?x4xf32, strided<[1, ?]>>,
                            %y: memref<?x4xf32>) kernel
      attributes {known_block_size = array<i32: 64, 1, 1>} {
    %tid = gpu.thread_id x
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %rows = memref.dim %y, %c0 : memref<?x4xf32>
    %i = arith.divui %tid, %c4 : index
    %j = arith.remui %tid, %c4 : index
    %inside = arith.cmpi ult, %i, %rows : index
    scf.if %inside {
      %v = memref.load %x[%i, %j] : memref<?x4xf32, strided<[1, ?]>>
      memref.store %v, %y[%i, %j] : memref<?x4xf32>
    }
    gpu.return
  }
}
