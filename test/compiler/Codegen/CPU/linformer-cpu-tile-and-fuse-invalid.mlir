// RUN: linformer-opt %s --split-input-file --linformer-cpu-tile-and-fuse --verify-diagnostics

// A schedule's tile sizes must give one size per loop of the root.

#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d3, d1, d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
func.func @too_few_tile_sizes(%x: tensor<1x64x16xf32>, %w: tensor<16x2x8xf32>,
    %init: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  // expected-error @+1 {{'linalg.generic' op has 3 tile sizes for 5 loops}}
  %q = linalg.generic {indexing_maps = [#x, #w, #o],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%x, %w : tensor<1x64x16xf32>, tensor<16x2x8xf32>)
      outs(%init : tensor<1x2x64x8xf32>)
      attrs = {linformer.root, linformer.tile_sizes = array<i64: 1, 1, 16>} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x2x64x8xf32>
  return %q : tensor<1x2x64x8xf32>
}

// -----

// The attention core has 4 loops (b, h, i, c): its result's dimensions.
func.func @core_too_many_tile_sizes(%q: tensor<1x2x64x8xf32>,
    %kp: tensor<1x2x8x8xf32>, %vp: tensor<1x2x8x8xf32>) -> tensor<1x2x64x8xf32> {
  %a_init = tensor.empty() : tensor<1x2x64x8xf32>
  // expected-error @+1 {{'linformer.attention_core' op has 5 tile sizes for 4 loops}}
  %a = linformer.attention_core %q, %kp, %vp scale(0.125) outs(%a_init)
         {linformer.root, linformer.tile_sizes = array<i64: 1, 1, 16, 0, 0>}
         : (tensor<1x2x64x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x64x8xf32>)
         -> tensor<1x2x64x8xf32>
  return %a : tensor<1x2x64x8xf32>
}
