// An entry whose first argument is not a tensor: the runtime cannot bind it.
func.func @f(%scale: f32, %x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
