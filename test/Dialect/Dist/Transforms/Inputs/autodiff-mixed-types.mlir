// A program that already mixes float types: compute= refuses to lower it.
!v = tensor<4xf32, #dist.device<0>>
!h = tensor<4xf16, #dist.device<0>>
func.func @mixed(%x: !v {dist.batch_dim = 0 : i64}, %w: !h) -> !v {
  %e = tensor.empty() : !v
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%w : !h) outs(%e : !v) {
  ^bb0(%a: f16, %o: f32):
    %c = arith.extf %a : f16 to f32
    linalg.yield %c : f32
  } -> !v
  return %r : !v
}
