// An argument named after an initializer of gpt2-test.onnx with another
// shape (weights-from.test).
func.func @f(%w: tensor<4x4xf32, #dist.device<0>> {dist.name = "wte.weight"}) -> tensor<4x4xf32, #dist.device<1>> {
  %0 = dist.send %w : tensor<4x4xf32, #dist.device<0>> -> tensor<4x4xf32, #dist.device<1>>
  return %0 : tensor<4x4xf32, #dist.device<1>>
}
