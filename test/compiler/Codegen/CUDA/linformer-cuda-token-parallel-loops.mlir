// RUN: linformer-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(linformer-cuda-token-parallel-loops))' | FileCheck %s

// An elementwise op over tokens (linformer.token_loops: batch loop 0,
// token loop 1) becomes its scf.parallel, which keeps the mark for
// linformer-cuda-tile-parallel-loops' length rule; an unmarked op is left
// to convert-linalg-to-parallel-loops.
// CHECK-LABEL: func.func @residual(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c2, %c128, %c64)
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x128x64xf32>
// CHECK: } {linformer.token_loops = array<i64: 0, 1>}
// CHECK: linalg.generic
// CHECK-NOT: linformer.token_loops
#id = affine_map<(b, n, d) -> (b, n, d)>
func.func @residual(%x: memref<2x128x64xf32>, %y: memref<2x128x64xf32>,
                    %out: memref<2x128x64xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %y : memref<2x128x64xf32>, memref<2x128x64xf32>)
      outs(%out : memref<2x128x64xf32>) attrs = {linformer.token_loops = array<i64: 0, 1>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<2x128x64xf32>) outs(%out : memref<2x128x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

// A token loop after a reduction is not among the outer parallel loops:
// the op is left alone (no rule).
// CHECK-LABEL: func.func @after_reduction(
// CHECK: linalg.generic
// CHECK-SAME: linformer.token_loops = array<i64: 0, 2>
#in = affine_map<(b, r, n) -> (b, r, n)>
#o = affine_map<(b, r, n) -> (b, n)>
func.func @after_reduction(%x: memref<2x4x128xf32>, %out: memref<2x128xf32>) {
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

// A window sum whose tokens stop at the lengths (linformer.token_bound:
// token = window * 16 + r, loops (b, j, c, r) with r innermost): its loops,
// with r's trip count min(16, max(0, lengths[b] - 16 j)), so the windows
// past a sequence's length read nothing.
// CHECK-LABEL: func.func @window_bound(
// CHECK-SAME: %[[LEN:[^:]*]]: memref<2xi32> {linformer.lengths}
// CHECK: scf.parallel (%[[B:.*]], %[[J:.*]], %{{.*}}) = ({{.*}}) to (%c2, %c32, %c128)
// CHECK: %[[L:.*]] = memref.load %[[LEN]][%[[B]]] : memref<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[FIRST:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK: %[[REST:.*]] = arith.subi %[[LI]], %[[FIRST]] : index
// CHECK: %[[POS:.*]] = arith.maxsi %[[REST]], %{{.*}} : index
// CHECK: %[[UB:.*]] = arith.minsi %{{.*}}, %[[POS]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB]] step
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
#win = affine_map<(b, j, c, r) -> (b, j, r, c)>
#flag = affine_map<(b, j, c, r) -> (b, j, r)>
#sum = affine_map<(b, j, c, r) -> (b, j, c)>
func.func @window_bound(%x: memref<2x32x16x128xf32>, %valid: memref<2x32x16xi8>,
                        %len: memref<2xi32> {linformer.lengths},
                        %out: memref<2x32x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0_i8 = arith.constant 0 : i8
  linalg.generic {indexing_maps = [#win, #flag, #sum],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %valid : memref<2x32x16x128xf32>, memref<2x32x16xi8>)
      outs(%out : memref<2x32x128xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0, part = 1, per_part = 16, masked = true>} {
  ^bb0(%a: f32, %f: i8, %o: f32):
    %real = arith.cmpi ne, %f, %c0_i8 : i8
    %v = arith.select %real, %a, %zero : f32
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Without parts (E X off the tensor cores: E' is zero past the length),
// the token loop stops at min(n, lengths[b]). Without a linformer.lengths
// argument the bound cannot be read: the op is left to
// convert-linalg-to-parallel-loops.
// CHECK-LABEL: func.func @sequence_bound(
// CHECK-SAME: %[[LEN:[^:]*]]: memref<2xi32> {linformer.lengths}
// CHECK: scf.parallel (%[[B:.*]], %{{.*}}, %{{.*}}) =
// CHECK: %[[L:.*]] = memref.load %[[LEN]][%[[B]]] : memref<2xi32>
// CHECK: %[[LI:.*]] = arith.index_cast %[[L]] : i32 to index
// CHECK: %[[UB:.*]] = arith.minsi %{{.*}}, %[[LI]] : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[UB]] step
// CHECK-LABEL: func.func @no_lengths(
// CHECK: linalg.generic
#e = affine_map<(b, j, c, t) -> (b, j, t)>
#xs = affine_map<(b, j, c, t) -> (b, t, c)>
#ex = affine_map<(b, j, c, t) -> (b, j, c)>
func.func @sequence_bound(%e: memref<2x8x64xf32>, %x: memref<2x64x32xf32>,
                          %len: memref<2xi32> {linformer.lengths},
                          %out: memref<2x8x32xf32>) {
  linalg.generic {indexing_maps = [#e, #xs, #ex],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<2x8x64xf32>, memref<2x64x32xf32>)
      outs(%out : memref<2x8x32xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
func.func @no_lengths(%e: memref<2x8x64xf32>, %x: memref<2x64x32xf32>,
                      %out: memref<2x8x32xf32>) {
  linalg.generic {indexing_maps = [#e, #xs, #ex],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %x : memref<2x8x64xf32>, memref<2x64x32xf32>)
      outs(%out : memref<2x8x32xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 3, batch = 0>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
