// A plain linalg MLP as another compiler would hand it over: no dist.layer,
// no names: x [8, 16] -> W0 [16, 32] -> relu -> W1 [32, 16].
!x = tensor<8x16xf32, #dist.device<0>>
!h = tensor<8x32xf32, #dist.device<0>>
!w0 = tensor<16x32xf32, #dist.device<0>>
!w1 = tensor<32x16xf32, #dist.device<0>>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @mlp(%x: !x {dist.batch_dim = 0 : i64}, %w0: !w0, %w1: !w1) -> !x {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : !h
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : !h) -> !h
  %h = linalg.matmul ins(%x, %w0 : !x, !w0) outs(%z0 : !h) -> !h
  %e1 = tensor.empty() : !h
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : !h) outs(%e1 : !h) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> !h
  %e2 = tensor.empty() : !x
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : !x) -> !x
  %y = linalg.matmul ins(%r, %w1 : !h, !w1) outs(%z2 : !x) -> !x
  return %y : !x
}
