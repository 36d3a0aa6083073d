func.func @f(%a: tensor<4294967296x4294967296x16xf32, #dist.device<0>>, %b: tensor<4294967296x4294967296x16xf32, #dist.device<1>>) {
  %r:2 = dist.all_reduce sum %a, %b : tensor<4294967296x4294967296x16xf32, #dist.device<0>>, tensor<4294967296x4294967296x16xf32, #dist.device<1>>
  return
}
