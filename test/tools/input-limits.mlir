// Input that would crash or exhaust MLIR's parser is rejected with a
// diagnostic at its location before parsing, by every tool (exit 1).
//
// Nesting deeper than 256 levels (the parser recurses per level).
// RUN: %python -c "print('func.func @f() attributes {a = ' + '[' * 300 + ']' * 300 + '} { return }')" > %t.deep.mlir
// RUN: not tessel-opt %t.deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: not tesselc %t.deep.mlir --chip=gfx942 2>&1 | FileCheck %s --check-prefix=DEEP
// RUN: cat %t.deep.mlir | not tessel-opt - 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: :1:287: error: brackets nest deeper than 256 levels
//
// A dense array of `index` (upstream parser crash).
// RUN: echo 'func.func @f() attributes {a = array<index: 1>} { return }' > %t.array.mlir
// RUN: not tessel-opt %t.array.mlir 2>&1 | FileCheck %s --check-prefix=ARRAY
// RUN: not tesselc %t.array.mlir --chip=gfx942 2>&1 | FileCheck %s --check-prefix=ARRAY
// ARRAY: :1:38: error: a dense array's elements must be integers or floats, not 'index'
//
// What real input uses passes: nesting inside strings and comments does not
// count, nor do `->` arrows, and integer and float arrays are fine.
// RUN: tessel-opt %s | FileCheck %s --check-prefix=OK
// OK-LABEL: func.func @fine
// OK-SAME: array<i32: 1, 2>
// OK-SAME: array<f32: 1.5
func.func @fine() -> () attributes {
    a = array<i32: 1, 2>, b = array<f32: 1.5>,
    s = "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["} {
  return
}
