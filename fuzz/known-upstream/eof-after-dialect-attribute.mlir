func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @elsewhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32, #dist.device<1>>
