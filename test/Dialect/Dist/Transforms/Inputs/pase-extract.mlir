// A scalar read from a tensor feeds a linalg body: dist-pase cannot emit it.
func.func @f(%x: tensor<8xf32, #dist.device<0>>) -> tensor<8xf32, #dist.device<0>> {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<8xf32, #dist.device<0>>
  // The first element scales every element.
  %s = tensor.extract %x[%c0] : tensor<8xf32, #dist.device<0>>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32, #dist.device<0>>) outs(%e : tensor<8xf32, #dist.device<0>>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %s : f32
    linalg.yield %m : f32
  } -> tensor<8xf32, #dist.device<0>>
  return %y : tensor<8xf32, #dist.device<0>>
}
