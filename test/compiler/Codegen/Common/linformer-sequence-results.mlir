// RUN: linformer-opt %s --split-input-file --linformer-sequence-results | FileCheck %s

// E X with k = n and d_model columns ([b, k, d] = [b, n, d]: not tokens,
// one E for K and V) and the output share one tensor.empty, as CSE leaves
// them. The output holds tokens (from the sequence input through the ops):
// its result is marked linformer.sequence and its destination becomes a
// buffer of its own, so that bufferization cannot write E X into the
// caller's (packed) output buffer. E X keeps the shared empty.
// CHECK-LABEL: func.func @shared_empty(
// CHECK-SAME: -> (tensor<1x8x4xf32> {linformer.sequence})
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x8x4xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} outs(%[[EMPTY]] : tensor<1x8x4xf32>)
// CHECK: %[[EX:.*]] = linalg.generic {{.*}} outs(%[[ZERO]] : tensor<1x8x4xf32>)
// CHECK: %[[OWN:.*]] = bufferization.alloc_tensor() : tensor<1x8x4xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} outs(%[[OWN]] : tensor<1x8x4xf32>)
// CHECK: return %[[Y]]
#e = affine_map<(b, j, t, m) -> (j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
#id = affine_map<(b, t, m) -> (b, t, m)>
func.func @shared_empty(%x: tensor<1x8x4xf32> {linformer.sequence},
    %len: tensor<1xi32> {linformer.lengths}, %w: tensor<8x8xf32>)
    -> tensor<1x8x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8x4xf32>
  %zero = linalg.fill ins(%c0 : f32) outs(%empty : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %ex = linalg.generic {indexing_maps = [#e, #x, #o],
      iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%w, %x : tensor<8x8xf32>, tensor<1x8x4xf32>) outs(%zero : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %ex : tensor<1x8x4xf32>, tensor<1x8x4xf32>) outs(%empty : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// The output's tensor.empty used by the output alone is made a buffer of
// its own too: the passes after this one make tensor.empty ops of their
// own (a bf16 E X rounded in its own kernel, [b, k, d] = [b, n, d]), which
// CSE would merge with it.
// CHECK-LABEL: func.func @own_empty(
// CHECK-SAME: -> (tensor<1x8x4xf32> {linformer.sequence})
// CHECK-NOT: tensor.empty
// CHECK: %[[OWN:.*]] = bufferization.alloc_tensor() : tensor<1x8x4xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} outs(%[[OWN]] : tensor<1x8x4xf32>)
// CHECK: return %[[Y]]
#id = affine_map<(b, t, m) -> (b, t, m)>
func.func @own_empty(%x: tensor<1x8x4xf32> {linformer.sequence},
    %len: tensor<1xi32> {linformer.lengths}, %w: tensor<1x8x4xf32>)
    -> tensor<1x8x4xf32> {
  %empty = tensor.empty() : tensor<1x8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %w : tensor<1x8x4xf32>, tensor<1x8x4xf32>) outs(%empty : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// A destination chain through a zero fill that another op also writes
// into: the chain gets a fill of its own, of its own buffer; the other
// writer keeps the shared fill (its result, a weight's, holds no tokens and
// is not marked).
// CHECK-LABEL: func.func @shared_fill(
// CHECK-SAME: -> (tensor<1x8x4xf32> {linformer.sequence}, tensor<1x8x4xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<1x8x4xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} outs(%[[EMPTY]] :
// CHECK: %[[OTHER:.*]] = linalg.generic {{.*}} outs(%[[ZERO]] :
// CHECK: %[[OWN:.*]] = bufferization.alloc_tensor() : tensor<1x8x4xf32>
// CHECK: %[[OWNZERO:.*]] = linalg.fill {{.*}} outs(%[[OWN]] :
// CHECK: linalg.generic {{.*}} outs(%[[OWNZERO]] :
#id = affine_map<(b, t, m) -> (b, t, m)>
func.func @shared_fill(%x: tensor<1x8x4xf32> {linformer.sequence},
    %len: tensor<1xi32> {linformer.lengths}, %w: tensor<1x8x4xf32>)
    -> (tensor<1x8x4xf32>, tensor<1x8x4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x8x4xf32>
  %zero = linalg.fill ins(%c0 : f32) outs(%empty : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %other = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<1x8x4xf32>) outs(%zero : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x8x4xf32>) outs(%zero : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4xf32>
  return %y, %other : tensor<1x8x4xf32>, tensor<1x8x4xf32>
}

// -----

// Without a lengths argument no buffer is bound packed or short: the
// result is marked (the runtime reads which outputs are sequences) but
// keeps its destination. A result that holds no tokens (a weight's copy,
// reduced over the tokens, ...) is not marked.
// CHECK-LABEL: func.func @no_lengths(
// CHECK-SAME: -> (tensor<1x8x4xf32> {linformer.sequence}) {
// CHECK-NOT: alloc_tensor
// CHECK-LABEL: func.func @no_tokens(
// CHECK-SAME: -> tensor<1x8x4xf32> {
// CHECK-NOT: alloc_tensor
#id = affine_map<(b, t, m) -> (b, t, m)>
func.func @no_lengths(%x: tensor<1x8x4xf32> {linformer.sequence},
    %w: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  %empty = tensor.empty() : tensor<1x8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %w : tensor<1x8x4xf32>, tensor<1x8x4xf32>) outs(%empty : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x8x4xf32>
  %z = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y : tensor<1x8x4xf32>) outs(%empty : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<1x8x4xf32>
  return %z : tensor<1x8x4xf32>
}
func.func @no_tokens(%x: tensor<1x8x4xf32> {linformer.sequence},
    %len: tensor<1xi32> {linformer.lengths}, %w: tensor<1x8x4xf32>)
    -> tensor<1x8x4xf32> {
  %empty = tensor.empty() : tensor<1x8x4xf32>
  %y = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<1x8x4xf32>) outs(%empty : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<1x8x4xf32>
  %z = linalg.generic {indexing_maps = [#id, #id],
      iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x8x4xf32>) outs(%empty : tensor<1x8x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}
