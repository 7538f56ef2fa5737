// RUN: linformer-opt %s --linformer-cpu-tile-for-vectors="vector-width=16 unroll=8" --split-input-file --verify-diagnostics

// A token reduction marked linformer.token_bound must stop at the length:
// the kernel before it (E') leaves the tokens past it unwritten. A row
// reduction (tokens innermost) becomes one vector reduction over the whole
// row, with no loop over its tokens to stop: refused by name rather than
// left to read unwritten memory.
#e = affine_map<(b, j, t) -> (b, j, t)>
#o = affine_map<(b, j, t) -> (b, j)>
func.func @row_sum(%len: tensor<2xi32> {linformer.lengths}, %b: index,
    %t: index, %e: tensor<2x8x512xf32>, %init: tensor<1x8xf32>)
    -> tensor<1x8xf32> {
  %es = tensor.extract_slice %e[%b, 0, %t] [1, 8, 256] [1, 1, 1]
      : tensor<2x8x512xf32> to tensor<1x8x256xf32>
  // expected-error @+1 {{reduces over tokens up to each sequence's length (linformer.token_bound), but register tiling left no loop over its tokens to stop there}}
  %r = linalg.generic {indexing_maps = [#e, #o],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%es : tensor<1x8x256xf32>) outs(%init : tensor<1x8xf32>)
      attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  } -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

// One token from a tile that starts anywhere (%t): it may lie past the
// length, and no loop walks it. Only a step known to be real (from the
// sequence's first token, or in a block loop that stops at the length)
// needs no bound.
#e = affine_map<(b, j, t, m) -> (b, j, t)>
#x = affine_map<(b, j, t, m) -> (b, t, m)>
#o = affine_map<(b, j, t, m) -> (b, j, m)>
func.func @one_step_anywhere(%len: tensor<2xi32> {linformer.lengths},
    %b: index, %t: index, %e: tensor<2x8x4xf32>, %x: tensor<2x4x16xf32>,
    %init: tensor<1x8x16xf32>) -> tensor<1x8x16xf32> {
  %es = tensor.extract_slice %e[%b, 0, %t] [1, 8, 1] [1, 1, 1]
      : tensor<2x8x4xf32> to tensor<1x8x1xf32>
  %xs = tensor.extract_slice %x[%b, %t, 0] [1, 1, 16] [1, 1, 1]
      : tensor<2x4x16xf32> to tensor<1x1x16xf32>
  // expected-error @+1 {{reduces over tokens up to each sequence's length (linformer.token_bound), but register tiling left no loop over its tokens to stop there}}
  %r = linalg.generic {indexing_maps = [#e, #x, #o],
                       iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
      ins(%es, %xs : tensor<1x8x1xf32>, tensor<1x1x16xf32>)
      outs(%init : tensor<1x8x16xf32>) attrs = {linformer.token_bound = #linformer.token_bound<token = 2, batch = 0>} {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>
}
