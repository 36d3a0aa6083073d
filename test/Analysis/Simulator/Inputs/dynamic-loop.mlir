func.func @f(%n: index, %a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> tensor<4xf32, #dist.device<0>> {
    %s = arith.addf %acc, %acc : tensor<4xf32, #dist.device<0>>
    scf.yield %s : tensor<4xf32, #dist.device<0>>
  }
  return %r : tensor<4xf32, #dist.device<0>>
}
