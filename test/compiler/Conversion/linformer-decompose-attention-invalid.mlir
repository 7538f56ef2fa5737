// RUN: linformer-opt %s --split-input-file --linformer-decompose-attention --verify-diagnostics

// Code generation needs static shapes: a layer with a dynamic batch is left
// alone by the rewrite, and the pass reports it with the input type.

func.func @dynamic_batch(%x: tensor<?x16x16xf32>, %w: tensor<16x16xf32>)
    -> tensor<?x16x16xf32> {
  // expected-error @+1 {{'linformer.attention' op cannot be decomposed: code generation needs static shapes, but the input is 'tensor<?x16x16xf32>'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<mean_pool> sharing<none>
         : (tensor<?x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<?x16x16xf32>
  return %y : tensor<?x16x16xf32>
}

// -----

// Padding does not change that: lengths follow the dynamic batch.
func.func @dynamic_batch_lengths(%x: tensor<?x16x16xf32>, %w: tensor<16x16xf32>,
    %e: tensor<2x4x16xf32>, %len: tensor<?xi32>) -> tensor<?x16x16xf32> {
  // expected-error @+1 {{cannot be decomposed: code generation needs static shapes, but the input is 'tensor<?x16x16xf32>'}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<learned> e(%e) sharing<kv> lengths(%len)
         : (tensor<?x16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>,
            tensor<16x16xf32>, tensor<16x16xf32>, tensor<2x4x16xf32>,
            tensor<?xi32>) -> tensor<?x16x16xf32>
  return %y : tensor<?x16x16xf32>
}
