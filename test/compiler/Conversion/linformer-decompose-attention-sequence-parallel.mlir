// RUN: linformer-opt %s --split-input-file --linformer-decompose-attention | FileCheck %s

// A sequence-parallel layer (sequence_parallel = 2: this rank holds 8 of
// the sequence's 16 tokens, and its 8 columns of E) sums over the ranks
// what is a sum over the tokens, once: reassociated, E X and E's row sums
// (the bias term (E 1) b_k); in the standard order, the projected K and V.
// Everything after them (the core, the output projection) is per token.

// CHECK-LABEL: func.func @reassociated(
// CHECK: %[[EX:[0-9a-z_]+]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<12x8xf32>, tensor<1x8x8xf32>) outs(%{{.*}} : tensor<1x12x8xf32>)
// CHECK: %[[E1:[0-9a-z_]+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<12x8xf32>) outs(%{{.*}} : tensor<1x12xf32>)
// CHECK: %[[EXS:[0-9a-z_]+]] = linformer.all_reduce ranks(2) outs(%[[EX]]) : tensor<1x12x8xf32> -> tensor<1x12x8xf32>
// CHECK: %[[E1S:[0-9a-z_]+]] = linformer.all_reduce ranks(2) outs(%[[E1]]) : tensor<1x12xf32> -> tensor<1x12xf32>
// CHECK-NOT: linformer.all_reduce
// CHECK: linformer.attention_core
func.func @reassociated(%x: tensor<1x8x8xf32>, %w: tensor<8x8xf32>,
    %b: tensor<8xf32>, %e: tensor<12x8xf32>) -> tensor<1x8x8xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) biases(%b, %b, %b, %b)
         heads(2) k(12) projection<learned> e(%e) sharing<key_value>
         {reassociate = true, sequence_parallel = 2 : i64}
         : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>,
            tensor<8xf32>, tensor<12x8xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @standard(
// CHECK: %[[KP:[0-9a-z_]+]] = linformer.project<learned> %{{.*}}, %{{.*}} {sequence_parallel = 2 : i64}
// CHECK: %[[KS:[0-9a-z_]+]] = linformer.all_reduce ranks(2) outs(%[[KP]]) : tensor<1x2x12x4xf32>
// CHECK: %[[VP:[0-9a-z_]+]] = linformer.project<learned> %{{.*}}, %{{.*}} {sequence_parallel = 2 : i64}
// CHECK: %[[VS:[0-9a-z_]+]] = linformer.all_reduce ranks(2) outs(%[[VP]]) : tensor<1x2x12x4xf32>
// CHECK: linformer.attention_core %{{.*}}, %[[KS]], %[[VS]]
func.func @standard(%x: tensor<1x8x8xf32>, %w: tensor<8x8xf32>,
    %e: tensor<12x8xf32>, %f: tensor<12x8xf32>) -> tensor<1x8x8xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w)
         heads(2) k(12) projection<learned> e(%e) f(%f) sharing<headwise>
         {reassociate = false, sequence_parallel = 2 : i64}
         : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>, tensor<12x8xf32>, tensor<12x8xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}
