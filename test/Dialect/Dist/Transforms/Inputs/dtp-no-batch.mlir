func.func @f(%x: tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>> {
  %y = arith.addf %x, %x : tensor<4x8xf32, #dist.device<0>>
  return %y : tensor<4x8xf32, #dist.device<0>>
}
