// RUN: linformer-opt %s --split-input-file --verify-diagnostics

// Sequence parallelism in plain words: what an all-reduce sums, and which
// layers may split their sequence over ranks.

func.func @result_type(%x: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{on a tensor has one result of its type 'tensor<8xf32>'}}
  %s = linformer.all_reduce ranks(2) outs(%x) : tensor<8xf32> -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @no_result(%x: tensor<8xf32>) {
  // expected-error @+1 {{on a tensor has one result of its type 'tensor<8xf32>'}}
  linformer.all_reduce ranks(2) outs(%x) : tensor<8xf32>
  return
}

// -----

func.func @buffer_result(%x: memref<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{on a buffer sums it in place and has no result}}
  %s = linformer.all_reduce ranks(2) outs(%x) : memref<8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

func.func @one_rank(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{attribute 'ranks' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 2}}
  %s = linformer.all_reduce ranks(1) outs(%x) : tensor<8xf32> -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// A rank's share of the sequence may be shorter than k; the whole sequence
// may not.
func.func @k_whole(%x: tensor<1x8x8xf32>, %w: tensor<8x8xf32>,
    %e: tensor<32x8xf32>) -> tensor<1x8x8xf32> {
  // expected-error @+1 {{projected length k = 32 exceeds the whole sequence's n * sequence_parallel = 8 * 2 tokens}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(32)
         projection<learned> e(%e) sharing<key_value> {sequence_parallel = 2 : i64}
         : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>, tensor<32x8xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}

// -----

func.func @pooled(%x: tensor<1x8x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x8x8xf32> {
  // expected-error @+1 {{has sequence_parallel = 2, which needs a 'learned' projection (the ranks' partial sums over their tokens add up to E K); 'mean_pool' windows are not split across ranks}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<mean_pool> sharing<layerwise> {sequence_parallel = 2 : i64}
         : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}

// -----

// expected-error @+1 {{argument 0: 'linformer.sequence_split' must be the number of ranks (an integer >= 2), not 1 : i64}}
func.func @split_arg(%x: tensor<8xf32> {linformer.sequence_split = 1 : i64}) {
  return
}
