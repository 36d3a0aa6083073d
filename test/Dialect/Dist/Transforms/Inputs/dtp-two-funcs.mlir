func.func @f(%x: tensor<4xf32, #dist.device<0>> {dist.batch_dim = 0 : i64}) -> tensor<4xf32, #dist.device<0>> {
  return %x : tensor<4xf32, #dist.device<0>>
}
func.func @g(%x: tensor<4xf32, #dist.device<0>> {dist.batch_dim = 0 : i64}) -> tensor<4xf32, #dist.device<0>> {
  return %x : tensor<4xf32, #dist.device<0>>
}
