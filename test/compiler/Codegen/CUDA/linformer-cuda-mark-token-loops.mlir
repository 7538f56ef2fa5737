// RUN: linformer-opt %s --pass-pipeline='builtin.module(func.func(linformer-cuda-mark-token-loops))' | FileCheck %s

// In a function with a lengths argument, the ops whose results hold the
// sequence argument's tokens are marked with their (batch, token) loops:
// an elementwise op keeps them (loops 0, 1), a projection keeps them where
// its batch and token loops are (here 0 and 1 of (b, n, e, d)), and a
// reduction over the tokens (E X) ends them.
#id = affine_map<(b, n, d) -> (b, n, d)>
#x = affine_map<(b, n, e, d) -> (b, n, d)>
#w = affine_map<(b, n, e, d) -> (d, e)>
#y = affine_map<(b, n, e, d) -> (b, n, e)>
#ex_e = affine_map<(b, j, d, n) -> (j, n)>
#ex_x = affine_map<(b, j, d, n) -> (b, n, d)>
#ex_o = affine_map<(b, j, d, n) -> (b, j, d)>
// CHECK-LABEL: func.func @tokens
func.func @tokens(%x: tensor<2x64x8xf32> {linformer.sequence},
                  %len: tensor<2xi32> {linformer.lengths},
                  %w: tensor<8x16xf32>, %e: tensor<4x64xf32>)
    -> (tensor<2x64x16xf32>, tensor<2x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  // CHECK: linalg.generic
  // CHECK-SAME: linformer.token_loops = array<i64: 0, 1>
  %init = tensor.empty() : tensor<2x64x8xf32>
  %gelu = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x64x8xf32>) outs(%init : tensor<2x64x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x64x8xf32>
  // CHECK: linalg.fill
  // CHECK-NOT: token_loops
  // CHECK: linalg.generic
  // CHECK-SAME: linformer.token_loops = array<i64: 0, 1>
  %yinit = tensor.empty() : tensor<2x64x16xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%yinit : tensor<2x64x16xf32>) -> tensor<2x64x16xf32>
  %y = linalg.generic {indexing_maps = [#x, #w, #y],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%gelu, %w : tensor<2x64x8xf32>, tensor<8x16xf32>)
      outs(%yz : tensor<2x64x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x64x16xf32>
  // CHECK: linalg.generic
  // CHECK-NOT: token_loops
  // CHECK: return
  %einit = tensor.empty() : tensor<2x4x8xf32>
  %ez = linalg.fill ins(%zero : f32) outs(%einit : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %ex = linalg.generic {indexing_maps = [#ex_e, #ex_x, #ex_o],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%e, %gelu : tensor<4x64xf32>, tensor<2x64x8xf32>)
      outs(%ez : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8xf32>
  return %y, %ex : tensor<2x64x16xf32>, tensor<2x4x8xf32>
}

// Without a lengths argument the runtime cannot skip anything: no marks.
// CHECK-LABEL: func.func @no_lengths
// CHECK-NOT: token_loops
func.func @no_lengths(%x: tensor<2x64x8xf32> {linformer.sequence}) -> tensor<2x64x8xf32> {
  %init = tensor.empty() : tensor<2x64x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x64x8xf32>) outs(%init : tensor<2x64x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x64x8xf32>
  return %r : tensor<2x64x8xf32>
}
