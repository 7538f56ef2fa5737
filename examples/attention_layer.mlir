// One Linformer attention layer: batch 2, n = 64, d_model = 32, 4 heads,
// k = 16, learned projections shared by all heads (one E, one F).
func.func @layer(%x: tensor<2x64x32xf32>, %wq: tensor<32x32xf32>,
                 %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>,
                 %wo: tensor<32x32xf32>, %e: tensor<16x64xf32>,
                 %f: tensor<16x64xf32>, %lengths: tensor<2xi32>)
    -> tensor<2x64x32xf32> {
  %y = linformer.attention %x weights(%wq, %wk, %wv, %wo) heads(4) k(16)
         projection<learned> e(%e) f(%f) sharing<headwise> lengths(%lengths)
         : (tensor<2x64x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>,
            tensor<32x32xf32>, tensor<32x32xf32>, tensor<16x64xf32>,
            tensor<16x64xf32>, tensor<2xi32>) -> tensor<2x64x32xf32>
  return %y : tensor<2x64x32xf32>
}
