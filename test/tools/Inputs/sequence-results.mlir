// Two results of the sequence input's [b, n, ...]: %y holds tokens (the
// input plus a weight, row by row), %z none (a weight alone, the shape of
// the tokens by coincidence, as E X with k = n is). The manifest says so:
// "sequence": true for the first output, false for the second. Each is a
// kernel root (tiled into workgroups), as a model's ops are.
func.func @two(%x: tensor<2x8x4xf32> {linformer.sequence},
               %len: tensor<2xi32> {linformer.lengths},
               %w: tensor<2x8x4xf32>)
    -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>) {
  %e = tensor.empty() : tensor<2x8x4xf32>
  %y = linalg.add {linformer.root}
      ins(%x, %w : tensor<2x8x4xf32>, tensor<2x8x4xf32>)
      outs(%e : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %z = linalg.add {linformer.root}
      ins(%w, %w : tensor<2x8x4xf32>, tensor<2x8x4xf32>)
      outs(%e : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %y, %z : tensor<2x8x4xf32>, tensor<2x8x4xf32>
}
