// RUN: distir-opt %s --dist-import-shard | FileCheck %s

// Upstream shard annotations become dist.sharding attributes: on function
// arguments, on the producing op (one entry per result of a multi-result op),
// with offsets kept; the annotation ops, shardings and grids go away.

shard.grid @grid0(shape = 2x4)
shard.grid @line(shape = 4)
shard.grid @unused(shape = 8)

// CHECK-NOT: shard.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: %arg0: tensor<8x16xf32> {dist.sharding = #dist.sharding<mesh = <name = "grid0", shape = [2, 4]>, split = {{\[}}[0]]>}
// CHECK-SAME: %arg1: tensor<16x32xf32> {dist.sharding = #dist.sharding<mesh = <name = "grid0", shape = [2, 4]>, split = {{\[}}[], [1]]>}
func.func @mlp(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %s0 = shard.sharding @grid0 split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s0 : tensor<8x16xf32>
  %s1 = shard.sharding @grid0 split_axes = [[], [1]] : !shard.sharding
  %w1 = shard.shard %w to %s1 annotate_for_users : tensor<16x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  // CHECK: linalg.matmul {dist.sharding = #dist.sharding<mesh = <name = "grid0", shape = [2, 4]>, split = {{\[}}[0], [1]]>}
  %y = linalg.matmul ins(%x0, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  %s2 = shard.sharding @grid0 split_axes = [[0], [1]] : !shard.sharding
  %y2 = shard.shard %y to %s2 : tensor<8x32xf32>
  // The same sharding again for the users is not a conflict.
  %y3 = shard.shard %y2 to %s2 annotate_for_users : tensor<8x32xf32>
  // CHECK: return %{{.*}} : tensor<8x32xf32>
  return %y3 : tensor<8x32xf32>
}

// CHECK-LABEL: func.func @uneven
// CHECK: tensor.empty() {dist.sharding = #dist.sharding<mesh = <name = "line", shape = [4]>, split = {{\[}}[], [0]], offsets = [0, 3, 6, 8, 10]>}
func.func @uneven() -> tensor<2x10xf32> {
  %e = tensor.empty() : tensor<2x10xf32>
  %s = shard.sharding @line split_axes = [[], [0]] sharded_dims_offsets = [0, 3, 6, 8, 10] : !shard.sharding
  %r = shard.shard %e to %s : tensor<2x10xf32>
  return %r : tensor<2x10xf32>
}

// CHECK-LABEL: func.func @two_results
// CHECK: linalg.generic
// CHECK-SAME: dist.sharding = [#dist.sharding<mesh = <name = "line", shape = [4]>, split = []>, #dist.sharding<mesh = <name = "line", shape = [4]>, split = {{\[}}[0]]>]
func.func @two_results(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                         iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%a, %a : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    linalg.yield %x, %x : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  %s = shard.sharding @line split_axes = [[0]] : !shard.sharding
  %b = shard.shard %r#1 to %s : tensor<8xf32>
  return %r#0, %b : tensor<8xf32>, tensor<8xf32>
}
