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

// expected-error @+1 {{argument 0: 'linformer.sequence_split' must be the number of ranks (an integer >= 2), not 1 : i64}}
func.func @split_arg(%x: tensor<8xf32> {linformer.sequence_split = 1 : i64}) {
  return
}

// -----

func.func @gather_shape(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'init' must be [2, 8] with axis 1 2 times as long (one block a rank), but is [2, 8]}}
  %g = linformer.all_gather ranks(2) axis(1) ins(%x : tensor<2x8xf32>) outs(%y : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gather_axis(%x: tensor<2x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{needs static shapes of one rank with axis 2 among their dimensions, not [2, 8] and [4, 8]}}
  %g = linformer.all_gather ranks(2) axis(2) ins(%x : tensor<2x8xf32>) outs(%y : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// -----

func.func @gather_types(%x: tensor<2xf16>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{gathers 'f16' elements into 'f32' ones; both must be one type}}
  %g = linformer.all_gather ranks(2) axis(0) ins(%x : tensor<2xf16>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

func.func @gather_mixed(%x: tensor<2xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{gathers a tensor into a tensor or a buffer into a buffer}}
  linformer.all_gather ranks(2) axis(0) ins(%x : tensor<2xf32>) outs(%y : memref<4xf32>)
  return
}

// -----

// A rank's windows are its own: k must split into whole windows of each
// rank's tokens.
func.func @pooled_k(%x: tensor<1x8x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x8x8xf32> {
  // expected-error @+1 {{has sequence_parallel = 4 and a 'mean_pool' projection to k = 2 slots, which the ranks cannot share: each rank projects its own windows to k / sequence_parallel slots, so 4 must divide k}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(2)
         projection<mean_pool> sharing<layerwise> {sequence_parallel = 4 : i64}
         : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}

// -----

func.func @pooled_window(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{a rank's n = 6 tokens do not divide into its k / sequence_parallel = 4 windows ('max_pool' uses windows of n / k tokens of the whole sequence, and no window may cross a rank)}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(8)
         projection<max_pool> sharing<layerwise> {sequence_parallel = 2 : i64}
         : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>) -> tensor<1x6x8xf32>
  return %y : tensor<1x6x8xf32>
}

// -----

// A convolution's kernel spans a window of the whole sequence: n P / k.
func.func @conv_kernel(%x: tensor<1x8x8xf32>, %w: tensor<8x8xf32>,
    %e: tensor<4x2xf32>) -> tensor<1x8x8xf32> {
  // expected-error @+1 {{operand 'e' must have shape [4, 4] ([head_dim, n / k]: one depthwise kernel shared by all heads)}}
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(2) k(4)
         projection<conv> e(%e) sharing<key_value> {sequence_parallel = 2 : i64}
         : (tensor<1x8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>,
            tensor<8x8xf32>, tensor<4x2xf32>) -> tensor<1x8x8xf32>
  return %y : tensor<1x8x8xf32>
}

// -----

func.func @project_pooled(%k: tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32> {
  // expected-error @+1 {{has sequence_parallel = 2 and projection 'mean_pool': only a learned projection's sum is split over the ranks}}
  %p = linformer.project<mean_pool> %k {sequence_parallel = 2 : i64}
         : (tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  return %p : tensor<1x2x4x4xf32>
}
