// Two results: each gets its own buffer name in the manifest.
func.func @two(%x: tensor<64x32xf32>, %y: tensor<64x32xf32>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %e = tensor.empty() : tensor<64x32xf32>
  %s = linalg.add ins(%x, %y : tensor<64x32xf32>, tensor<64x32xf32>)
                  outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %d = linalg.sub ins(%x, %y : tensor<64x32xf32>, tensor<64x32xf32>)
                  outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %s, %d : tensor<64x32xf32>, tensor<64x32xf32>
}
