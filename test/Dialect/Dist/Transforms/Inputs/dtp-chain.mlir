// Four untagged projections in a chain (x [8, 16] through W0..W3 [16, 16],
// relu between): the column/row candidates W0-W1, W1-W2, W2-W3 overlap.
!x = tensor<8x16xf32, #dist.device<0>>
!w = tensor<16x16xf32, #dist.device<0>>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @chain(%x: !x {dist.batch_dim = 0 : i64}, %w0: !w, %w1: !w, %w2: !w, %w3: !w) -> !x {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : !x
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : !x) -> !x
  %h0 = linalg.matmul ins(%x, %w0 : !x, !w) outs(%z0 : !x) -> !x
  %re0 = tensor.empty() : !x
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h0 : !x) outs(%re0 : !x) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> !x
  %e1 = tensor.empty() : !x
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : !x) -> !x
  %h1 = linalg.matmul ins(%r0, %w1 : !x, !w) outs(%z1 : !x) -> !x
  %re1 = tensor.empty() : !x
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : !x) outs(%re1 : !x) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> !x
  %e2 = tensor.empty() : !x
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : !x) -> !x
  %h2 = linalg.matmul ins(%r1, %w2 : !x, !w) outs(%z2 : !x) -> !x
  %re2 = tensor.empty() : !x
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2 : !x) outs(%re2 : !x) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> !x
  %e3 = tensor.empty() : !x
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : !x) -> !x
  %h3 = linalg.matmul ins(%r2, %w3 : !x, !w) outs(%z3 : !x) -> !x
  return %h3 : !x
}
