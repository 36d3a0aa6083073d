// A two-layer MLP as another compiler writes it: plain linalg on tensors,
// no placements, no dist attributes.
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x4xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %cb = arith.constant dense<0.5> : tensor<32xf32>
  %e1 = tensor.empty() : tensor<8x32xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%z1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %hb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%h, %cb : tensor<8x32xf32>, tensor<32xf32>) outs(%e1 : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %c0 : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%hb, %w2 : tensor<8x32xf32>, tensor<32x4xf32>) outs(%z2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
