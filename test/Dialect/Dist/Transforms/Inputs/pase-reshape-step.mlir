// A data-parallel step with forward ops that only move data: h = x w1
// [64, 32] is expanded to [8, 8, 32], squared, collapsed back, and
// multiplied by w2. The expand and the collapse are forward ops without
// loops of their own (the search reads them through their result
// dimensions); their adjoints (the collapse and the expand of the incoming
// gradient) follow them, and the zero fill of an accumulator follows the
// op that reads it.
#id = affine_map<(i, j, k) -> (i, j, k)>
func.func @step(%x: tensor<64x32xf32> {dist.batch_dim = 0 : i64}, %w1: tensor<32x32xf32>, %w2: tensor<32x32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64x32xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<64x32xf32>, tensor<32x32xf32>) outs(%i1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e = tensor.expand_shape %h [[0, 1], [2]] output_shape [8, 8, 32] : tensor<64x32xf32> into tensor<8x8x32xf32>
  %e3 = tensor.empty() : tensor<8x8x32xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : tensor<8x8x32xf32>) outs(%e3 : tensor<8x8x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8x8x32xf32>
  %c = tensor.collapse_shape %sq [[0, 1], [2]] : tensor<8x8x32xf32> into tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul ins(%c, %w2 : tensor<64x32xf32>, tensor<32x32xf32>) outs(%i2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
