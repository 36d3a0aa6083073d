// The sequential program that examples/mlp-data-parallel.mlir distributes:
// the whole batch of 8 rows on one device.
!x = tensor<8x16xf32, #dist.device<0>>
!xt = tensor<16x8xf32, #dist.device<0>>
!w = tensor<16x8xf32, #dist.device<0>>
!y = tensor<8x8xf32, #dist.device<0>>
#map = affine_map<(d0, d1) -> (d0, d1)>

func.func @train_step(%x: !x, %w: !w, %dy: !y, %lr: f32) -> (!y, !w) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !y
  %z = linalg.fill ins(%zero : f32) outs(%e : !y) -> !y
  %h = linalg.matmul ins(%x, %w : !x, !w) outs(%z : !y) -> !y
  %y = linalg.max ins(%h, %z : !y, !y) outs(%e : !y) -> !y
  %te = tensor.empty() : !xt
  %xt = linalg.transpose ins(%x : !x) outs(%te : !xt) permutation = [1, 0]
  %ge = tensor.empty() : !w
  %gz = linalg.fill ins(%zero : f32) outs(%ge : !w) -> !w
  %dw = linalg.matmul ins(%xt, %dy : !xt, !y) outs(%gz : !w) -> !w
  %n = linalg.generic {indexing_maps = [#map, #map, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w, %dw : !w, !w) outs(%ge : !w) {
  ^bb0(%wi: f32, %d: f32, %out: f32):
    %s = arith.mulf %lr, %d : f32
    %u = arith.subf %wi, %s : f32
    linalg.yield %u : f32
  } -> !w
  return %y, %n : !y, !w
}
