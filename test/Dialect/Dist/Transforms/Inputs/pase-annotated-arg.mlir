// The same MLP with the annotation on the first weight instead: arguments
// stay where they are, their readers follow them.
func.func @mlp(%x: tensor<512x1024xf32, #dist.device<0>> {dist.batch_dim = 0 : i64},
               %w1: tensor<1024x4096xf32, #dist.device<0>> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>},
               %w2: tensor<4096x1024xf32, #dist.device<0>>) -> tensor<512x1024xf32, #dist.device<0>> {
  %cst = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<512x4096xf32, #dist.device<0>>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<512x4096xf32, #dist.device<0>>) -> tensor<512x4096xf32, #dist.device<0>>
  %h = linalg.matmul
      ins(%x, %w1 : tensor<512x1024xf32, #dist.device<0>>, tensor<1024x4096xf32, #dist.device<0>>)
      outs(%z1 : tensor<512x4096xf32, #dist.device<0>>) -> tensor<512x4096xf32, #dist.device<0>>
  %e2 = tensor.empty() : tensor<512x4096xf32, #dist.device<0>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<512x4096xf32, #dist.device<0>>) outs(%e2 : tensor<512x4096xf32, #dist.device<0>>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<512x4096xf32, #dist.device<0>>
  %e3 = tensor.empty() : tensor<512x1024xf32, #dist.device<0>>
  %z3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<512x1024xf32, #dist.device<0>>) -> tensor<512x1024xf32, #dist.device<0>>
  %y = linalg.matmul ins(%r, %w2 : tensor<512x4096xf32, #dist.device<0>>, tensor<4096x1024xf32, #dist.device<0>>)
      outs(%z3 : tensor<512x1024xf32, #dist.device<0>>) -> tensor<512x1024xf32, #dist.device<0>>
  return %y : tensor<512x1024xf32, #dist.device<0>>
}
