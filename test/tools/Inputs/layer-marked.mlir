// The same layer, its sequence input marked: the other arguments become
// the artifact's weights, the lengths its lengths input.
func.func @layer(%x: tensor<2x16x32xf32> {linformer.sequence}, %wq: tensor<32x32xf32>,
                 %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>,
                 %wo: tensor<32x32xf32>, %lengths: tensor<2xi32>)
    -> tensor<2x16x32xf32> {
  %y = linformer.attention %x weights(%wq, %wk, %wv, %wo) heads(4) k(4) projection<mean_pool> sharing<none> lengths(%lengths) : (tensor<2x16x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xi32>) -> tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}
