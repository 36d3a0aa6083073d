func.func @f(%a: tensor<4xf32, #dist.device<9>>) -> tensor<4xf32, #dist.device<9>> {
  %b = arith.addf %a, %a : tensor<4xf32, #dist.device<9>>
  return %b : tensor<4xf32, #dist.device<9>>
}
