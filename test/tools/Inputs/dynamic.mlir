func.func @layer(%x: tensor<?x64x32xf32>, %w: tensor<32x32xf32>) -> tensor<?x64x32xf32> {
  %y = linformer.attention %x weights(%w, %w, %w, %w) heads(4) k(16) projection<mean_pool> sharing<none> : (tensor<?x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<?x64x32xf32>
  return %y : tensor<?x64x32xf32>
}
