// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-tensor-core-contractions))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-tensor-core-contractions{precision=emulate}))' | FileCheck %s --check-prefix=EMU
// RUN: not linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-tensor-core-contractions{precision=fp8}))' 2>&1 | FileCheck %s --check-prefix=BAD

// A head-split projection [b, h, n, dh] += X[b, n, c] * W[c, h, dh]
// (reductions innermost, as linformer-cuda-prepare-loops leaves them):
// m = n (16 rows a tile), n = dh (8 columns), k = c (steps of 4); the
// batch folds into the row tiles (2 * 32 / 16 = 4), the head (an n
// dimension: it indexes W and Y, not X) into the column tiles
// (4 * 16 / 8 = 8); 32 lanes.
// CHECK-LABEL: func.func @projection
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel (%[[ROW:.*]], %[[COL:.*]], %[[LANE:.*]]) = (%c0, %c0, %c0) to (%c4, %c8, %c32)
// CHECK: %[[G:.*]] = arith.divui %[[LANE]], %c4{{.*}}
// CHECK: %[[T:.*]] = arith.remui %[[LANE]], %c4
// The accumulator fragment starts as C (the bias the fill wrote).
// CHECK-COUNT-4: memref.load %arg2
// CHECK: scf.for %[[K:.*]] = %c0{{.*}} to %c64 step %c4{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (vector<2x2xf32>)
// CHECK: %[[KT:.*]] = arith.addi %[[K]], %[[T]]
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %[[KT]]] : memref<2x32x64xf32>
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}, %[[KT]]] : memref<2x32x64xf32>
// CHECK: memref.load %arg1[%[[KT]], %{{.*}}, %{{.*}}] : memref<64x4x16xf32>
// CHECK: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %[[ACC]]) {mmaShape = [16, 8, 4], tf32Enabled} : (vector<2x1xf32>, vector<1x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: scf.yield
// CHECK-COUNT-4: memref.store %{{.*}}, %arg2
// CHECK: {linformer.tensor_core}
// EMU-LABEL: func.func @projection
// EMU-NOT: nvgpu.mma.sync
// EMU: scf.parallel
// EMU: scf.for {{.*}} step %c4{{.*}} iter_args
// EMU-COUNT-16: arith.mulf
// EMU: {linformer.tensor_core}
#x = affine_map<(b, h, n, d, c) -> (b, n, c)>
#w = affine_map<(b, h, n, d, c) -> (c, h, d)>
#y = affine_map<(b, h, n, d, c) -> (b, h, n, d)>
func.func @projection(%x: memref<2x32x64xf32>, %w: memref<64x4x16xf32>,
                      %y: memref<2x4x32x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x32x64xf32>, memref<64x4x16xf32>) outs(%y : memref<2x4x32x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The output projection reduces over heads and head dims: the head loop is
// sequential around the stepped dh loop.
// CHECK-LABEL: func.func @two_reductions
// CHECK: scf.parallel {{.*}} to (%c4, %c4{{.*}}, %c32)
// CHECK: scf.for {{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args
// CHECK: scf.for {{.*}} = %c0{{.*}} to %c8{{.*}} step %c4{{.*}} iter_args
// CHECK: nvgpu.mma.sync
#a = affine_map<(b, n, d, h, e) -> (b, h, n, e)>
#o = affine_map<(b, n, d, h, e) -> (h, e, d)>
#r = affine_map<(b, n, d, h, e) -> (b, n, d)>
func.func @two_reductions(%v: memref<2x4x32x8xf32>, %wo: memref<4x8x32xf32>,
                          %y: memref<2x32x32xf32>) {
  linalg.generic {indexing_maps = [#a, #o, #r],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%v, %wo : memref<2x4x32x8xf32>, memref<4x8x32xf32>) outs(%y : memref<2x32x32xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Sizes that do not divide into 16 x 8 x 4 tiles, and ops that are not
// contractions, stay as they are (the plain path takes them).
// CHECK-LABEL: func.func @not_divisible
// CHECK: linalg.generic
// CHECK-NOT: nvgpu.mma.sync
func.func @not_divisible(%a: memref<20x12xf32>, %b: memref<12x8xf32>, %c: memref<20x8xf32>) {
  linalg.matmul ins(%a, %b : memref<20x12xf32>, memref<12x8xf32>) outs(%c : memref<20x8xf32>)
  %d = memref.alloc() : memref<20x8xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<20x12xf32>, memref<12x8xf32>) outs(%d : memref<20x8xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// BAD: error: precision 'fp8' is not one this pass has (tf32: f32 data, TF32 products, f32 accumulation; emulate: the same tiles in f32 scalars, for the CPU)
