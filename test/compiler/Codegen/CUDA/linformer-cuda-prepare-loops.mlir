// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-prepare-loops))' | FileCheck %s
// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-prepare-loops,convert-linalg-to-parallel-loops))' | FileCheck %s --check-prefix=LOOPS

// A head-split projection [b, h, n, k-reduction, dh]: the reduction moves
// innermost, so every parallel dimension is in one scf.parallel (all get
// threads) and the reduction is the sequential loop inside it.
// CHECK-LABEL: func.func @projection
// CHECK: linalg.generic {indexing_maps = [#[[$X:.+]], #[[$W:.+]], #[[$Y:.+]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// LOOPS-LABEL: func.func @projection
// LOOPS: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0, %c0) to (%c2, %c4, %c8, %c16)
// LOOPS-NEXT: scf.for %{{.*}} = %c0 to %c64
// LOOPS-NOT: scf.parallel
// LOOPS: return
#x = affine_map<(b, h, n, c, d) -> (b, n, c)>
#w = affine_map<(b, h, n, c, d) -> (c, h, d)>
#y = affine_map<(b, h, n, c, d) -> (b, h, n, d)>
func.func @projection(%x: memref<2x8x64xf32>, %w: memref<64x4x16xf32>,
                      %y: memref<2x4x8x16xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : memref<2x8x64xf32>, memref<64x4x16xf32>) outs(%y : memref<2x4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A copy that bufferization left becomes a linalg.copy (a kernel), not a
// memref.copy the host would run on device memory.
// CHECK-LABEL: func.func @copy
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<4x32xf32>) outs(%{{.*}} : memref<4x32xf32>)
// LOOPS-LABEL: func.func @copy
// LOOPS: scf.parallel
func.func @copy(%a: memref<4x32xf32>, %b: memref<4x32xf32>) {
  memref.copy %a, %b : memref<4x32xf32> to memref<4x32xf32>
  return
}

// -----

// Reductions already innermost are left alone.
// CHECK-LABEL: func.func @rowsum
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @rowsum(%a: memref<4x32xf32>, %s: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x32xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Token loops (linformer.token_loops, loop numbers) follow their loops
// through the interchange: the token loop 2 becomes loop 1.
// CHECK-LABEL: func.func @token_loops_follow(
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: linformer.token_loops = array<i64: 0, 1>
#in = affine_map<(b, r, n) -> (b, r, n)>
#o = affine_map<(b, r, n) -> (b, n)>
func.func @token_loops_follow(%x: memref<2x4x128xf32>, %out: memref<2x128xf32>) {
  linalg.generic {indexing_maps = [#in, #o],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<2x4x128xf32>) outs(%out : memref<2x128xf32>) attrs = {linformer.token_loops = array<i64: 0, 2>} {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// So do a token bound's loops (linformer.token_bound of E X: token loop 2,
// batch loop 0): the token loop moves innermost, to 3.
// CHECK-LABEL: func.func @token_bound_follows(
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: linformer.token_bound = #linformer.token_bound<token = 3, batch = 0>
#e = affine_map<(b, i, t, j) -> (b, i, t)>
#x = affine_map<(b, i, t, j) -> (b, t, j)>
#o = affine_map<(b, i, t, j) -> (b, i, j)>
func.func @token_bound_follows(%e: memref<2x8x64xf32>, %x: memref<2x64x16xf32>,
                               %y: memref<2x8x16xf32>) {
  linalg.generic {indexing_maps = [#e, #x, #o],
                  iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%e, %x : memref<2x8x64xf32>, memref<2x64x16xf32>)
      outs(%y : memref<2x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
