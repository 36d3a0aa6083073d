func.func @f(%x: tensor<4x8xf32, #dist.device<0>> {dist.batch_dim = 0 : i64}) -> tensor<4x8xf32, #dist.device<1>> {
  %y = dist.send %x : tensor<4x8xf32, #dist.device<0>> -> tensor<4x8xf32, #dist.device<1>>
  return %y : tensor<4x8xf32, #dist.device<1>>
}
