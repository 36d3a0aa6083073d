!t = tensor<64x64xf16, #dist.device<0>>
func.func @f(%a: !t, %b: !t, %c: !t) -> !t {
  %r = linalg.matmul ins(%a, %b : !t, !t) outs(%c : !t) -> !t
  return %r : !t
}
