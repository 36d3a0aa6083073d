// Two projections, a ReLU, a row sum and a matmul that accumulates onto a
// non-zero value (a split reduction must add the accumulator once).
func.func @mlp(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>, %w2: tensor<64x32xf32>, %w3: tensor<32x32xf32>) -> (tensor<16x32xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x64xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x32xf32>, tensor<32x64xf32>) outs(%i1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<16x64xf32>) outs(%e2 : tensor<16x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  %e3 = tensor.empty() : tensor<16x32xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<16x64xf32>, tensor<64x32xf32>) outs(%i3 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %e4 = tensor.empty() : tensor<16xf32>
  %i4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<16xf32>) -> tensor<16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<16x32xf32>) outs(%i4 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %b, %a : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  // Accumulates onto a non-zero value: a split k must add %y once.
  %z = linalg.matmul ins(%y, %w3 : tensor<16x32xf32>, tensor<32x32xf32>) outs(%y : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %z, %s : tensor<16x32xf32>, tensor<16xf32>
}
