func.func @f(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xi32, #dist.device<0>> {
  %b = tensor.bitcast %a : tensor<4xf32, #dist.device<0>> to tensor<4xi32, #dist.device<0>>
  return %b : tensor<4xi32, #dist.device<0>>
}
