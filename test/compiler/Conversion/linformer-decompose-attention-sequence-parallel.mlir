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

// -----

// Pooled windows split at rank boundaries (k 4 over 2 ranks: this rank's 8
// tokens are 2 windows of 4): the rank pools its own windows to its 2
// slots, and the slots are gathered in rank order (the pooled X once, K
// and V sharing it), as are the windows' counts of real tokens, which say
// which of the 4 slots the core may attend to. Neither the pooling nor the
// core stops at this rank's lengths: every slot is gathered and read
// (masked), and another rank's slots may be real.
// CHECK-LABEL: func.func @mean_pool(
// CHECK-NOT: linformer.token_bound
// CHECK: %[[XG:[0-9a-z_]+]] = linformer.all_gather ranks(2) axis(1) ins(%{{.*}} : tensor<1x2x8xf32>) outs(%{{.*}} : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NOT: linformer.token_bound
// CHECK: %[[CG:[0-9a-z_]+]] = linformer.all_gather ranks(2) axis(1) ins(%{{.*}} : tensor<1x2xf32>) outs(%{{.*}} : tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK: %[[FLAGS:[0-9a-z_]+]] = linalg.generic {{.*}} ins(%[[CG]] : tensor<1x4xf32>) outs(%{{.*}} : tensor<1x4xi8>)
// CHECK: linformer.attention_core %{{.*}}, %{{.*}}, %{{.*}} scale({{.*}}) key_mask(%[[FLAGS]]) outs(%{{.*}}) {linformer.root} :
func.func @mean_pool(%x: tensor<1x8x8xf32>, %w: tensor<8x8xf32>,
    %len: tensor<1xi32> {linformer.lengths}) -> tensor<1x8x8xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<mean_pool> sharing<layerwise> lengths(%len)
         {reassociate = true, sequence_parallel = 2 : i64}
         : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>, tensor<1xi32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}

// -----

// In the standard order (max pooling cannot be reassociated), the rank's
// pooled K and V, [1, 2, 2, 4], are gathered along the slots.
// CHECK-LABEL: func.func @max_pool(
// CHECK: %[[KP:[0-9a-z_]+]] = linformer.project<max_pool> %{{.*}} : (tensor<1x2x8x4xf32>) -> tensor<1x2x2x4xf32>
// CHECK: %[[KG:[0-9a-z_]+]] = linformer.all_gather ranks(2) axis(2) ins(%[[KP]] : tensor<1x2x2x4xf32>) outs(%{{.*}} : tensor<1x2x4x4xf32>)
// CHECK: %[[VP:[0-9a-z_]+]] = linformer.project<max_pool> %{{.*}} : (tensor<1x2x8x4xf32>) -> tensor<1x2x2x4xf32>
// CHECK: %[[VG:[0-9a-z_]+]] = linformer.all_gather ranks(2) axis(2) ins(%[[VP]] : tensor<1x2x2x4xf32>) outs(%{{.*}} : tensor<1x2x4x4xf32>)
// CHECK: linformer.attention_core %{{.*}}, %[[KG]], %[[VG]]
func.func @max_pool(%x: tensor<1x8x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x8x8xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<max_pool> sharing<layerwise>
         {sequence_parallel = 2 : i64}
         : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}
