// RUN: distir-opt %s --dist-place --split-input-file | FileCheck %s
// RUN: distir-opt %s --dist-place=device=3 --split-input-file | FileCheck %s --check-prefix=DEV3
// Placing a placed program changes nothing.
// RUN: distir-opt %s --dist-place --split-input-file | distir-opt --dist-place | FileCheck %s

// dist-place puts every tensor (signature, results, constants, block
// arguments of nested regions) on the device and infers the batch: x's
// dim 0 reaches result #0's dim 0 through the matmul's parallel loop and
// the bias add; w is read only by the contracted and column loops.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME: %{{.*}}: tensor<8x16xf32, #dist.device<0>> {dist.batch_dim = 0 : i64, dist.name = "arg0"}
// CHECK-SAME: %{{.*}}: tensor<16x4xf32, #dist.device<0>> {dist.name = "w"}
// CHECK-SAME: -> tensor<8x4xf32, #dist.device<0>>
// CHECK: arith.constant dense<5.000000e-01> : tensor<4xf32, #dist.device<0>>
// CHECK: tensor.empty() : tensor<8x4xf32, #dist.device<0>>
// DEV3-LABEL: func.func @linear(
// DEV3-SAME: tensor<8x16xf32, #dist.device<3>> {dist.batch_dim = 0 : i64
// DEV3: arith.constant dense<5.000000e-01> : tensor<4xf32, #dist.device<3>>
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<16x4xf32> {dist.name = "w"}) -> tensor<8x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %b = arith.constant dense<0.5> : tensor<4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  %yb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %yb : tensor<8x4xf32>
}

// -----

// The batch followed through a reshape (its outermost non-unit dim), a
// transpose, a full slice and a softmax: tokens [B, S, H] with B = 2.
// CHECK-LABEL: func.func @attention_scores(
// CHECK-SAME: tensor<2x3x4xf32, #dist.device<0>> {dist.batch_dim = 0 : i64
// CHECK-SAME: tensor<4x4xf32, #dist.device<0>> {dist.name = "arg1"}
func.func @attention_scores(%t: tensor<2x3x4xf32>, %wq: tensor<4x4xf32>) -> tensor<2x3x3xf32> {
  %c0 = arith.constant 0.0 : f32
  %flat = tensor.collapse_shape %t [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %e = tensor.empty() : tensor<6x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<6x4xf32>) -> tensor<6x4xf32>
  %q = linalg.matmul ins(%flat, %wq : tensor<6x4xf32>, tensor<4x4xf32>) outs(%z : tensor<6x4xf32>) -> tensor<6x4xf32>
  %q3 = tensor.expand_shape %q [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %et = tensor.empty() : tensor<2x4x3xf32>
  %k = linalg.transpose ins(%t : tensor<2x3x4xf32>) outs(%et : tensor<2x4x3xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x3x3xf32>
  %zs = linalg.fill ins(%c0 : f32) outs(%es : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %s = linalg.batch_matmul ins(%q3, %k : tensor<2x3x4xf32>, tensor<2x4x3xf32>) outs(%zs : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %full = tensor.extract_slice %s[0, 0, 0] [2, 3, 3] [1, 1, 1] : tensor<2x3x3xf32> to tensor<2x3x3xf32>
  %p = linalg.softmax dimension(2) ins(%full : tensor<2x3x3xf32>) outs(%es : tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %p : tensor<2x3x3xf32>
}

// -----

// An argument already marked keeps its mark.
// CHECK-LABEL: func.func @marked(
// CHECK-SAME: tensor<4x8xf32, #dist.device<0>> {dist.batch_dim = 1 : i64, dist.name = "in"}
func.func @marked(%x: tensor<4x8xf32> {dist.batch_dim = 1 : i64, dist.name = "in"}) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %y = linalg.copy ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
