// A layer whose weights are entry arguments, its sequence input unmarked:
// the runtime could not tell the sequence from the weights.
func.func @layer(%x: tensor<2x16x32xf32>, %wq: tensor<32x32xf32>,
                 %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>,
                 %wo: tensor<32x32xf32>, %lengths: tensor<2xi32>)
    -> tensor<2x16x32xf32> {
  %y = linformer.attention %x weights(%wq, %wk, %wv, %wo) heads(4) k(4) projection<mean_pool> sharing<none> lengths(%lengths) : (tensor<2x16x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<2xi32>) -> tensor<2x16x32xf32>
  return %y : tensor<2x16x32xf32>
}
