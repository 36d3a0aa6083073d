// A rank-reducing slice (the first row of x) has no split rule: dist-pase
// runs it whole on every device and says so; the ops around it split.
func.func @f(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32>
  %row = tensor.extract_slice %y[0, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
  %z = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%y, %row : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %r: f32, %b: f32):
    %s = arith.addf %a, %r : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %z : tensor<8x4xf32>
}
