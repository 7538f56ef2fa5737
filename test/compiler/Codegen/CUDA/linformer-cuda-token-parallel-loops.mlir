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
