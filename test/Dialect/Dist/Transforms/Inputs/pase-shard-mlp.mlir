// The annotated MLP written with upstream shard annotations: the first
// weight split by columns over a grid of two.
shard.grid @tp(shape = 2)
func.func @mlp(%x: tensor<512x1024xf32> {dist.batch_dim = 0 : i64},
               %w1: tensor<1024x4096xf32>,
               %w2: tensor<4096x1024xf32>) -> tensor<512x1024xf32> {
  %s = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
  %w1s = shard.shard %w1 to %s : tensor<1024x4096xf32>
  %cst = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<512x4096xf32>
  %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<512x4096xf32>) -> tensor<512x4096xf32>
  %h = linalg.matmul ins(%x, %w1s : tensor<512x1024xf32>, tensor<1024x4096xf32>)
      outs(%z1 : tensor<512x4096xf32>) -> tensor<512x4096xf32>
  %e2 = tensor.empty() : tensor<512x4096xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<512x4096xf32>) outs(%e2 : tensor<512x4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<512x4096xf32>
  %e3 = tensor.empty() : tensor<512x1024xf32>
  %z3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<512x4096xf32>, tensor<4096x1024xf32>)
      outs(%z3 : tensor<512x1024xf32>) -> tensor<512x1024xf32>
  return %y : tensor<512x1024xf32>
}
