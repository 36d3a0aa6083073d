func.func @add_one(%x: tensor<4x8xf32, #dist.device<0>> {dist.name = "x"}) -> tensor<4x8xf32, #dist.device<0>> {
  %one = arith.constant dense<1.0> : tensor<4x8xf32, #dist.device<0>>
  %y = arith.addf %x, %one : tensor<4x8xf32, #dist.device<0>>
  return %y : tensor<4x8xf32, #dist.device<0>>
}
