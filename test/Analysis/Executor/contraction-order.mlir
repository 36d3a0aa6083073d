// Contractions sum their terms in the order of the reduction loops, each
// partial sum rounded to the element type, as the sequential loop nest does:
// [1e8, 1, -1e8, 1] . ones is 1 in f32 (1e8 + 1 rounds to 1e8), 2 in f64,
// 0 summed backwards. The executor runs these bodies without interpreting
// them and may move a parallel loop innermost (the 8 columns here, wider than
// the 4-term reduction); neither may change the order of the sum.
// RUN: distir-run %s | FileCheck %s

!a = tensor<2x4xf32, #dist.device<0>>
!b = tensor<4x8xf32, #dist.device<0>>
!c = tensor<2x8xf32, #dist.device<0>>
!a64 = tensor<2x4xf64, #dist.device<0>>
!b64 = tensor<4x8xf64, #dist.device<0>>
!c64 = tensor<2x8xf64, #dist.device<0>>

func.func @main() -> (!c, !c, !c64, tensor<1xf32, #dist.device<0>>) {
  %a = arith.constant dense<[[1.0e+08, 1.0, -1.0e+08, 1.0],
                             [1.0, 1.0e+08, 1.0, -1.0e+08]]> : !a
  %b = arith.constant dense<1.0> : !b
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !c
  %z = linalg.fill ins(%zero : f32) outs(%e : !c) -> !c
  %mm = linalg.matmul ins(%a, %b : !a, !b) outs(%z : !c) -> !c
  // The same contraction written as a generic, operands of the product
  // swapped and the sum's too.
  %g = linalg.generic {
      indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                       affine_map<(i, j, k) -> (k, j)>,
                       affine_map<(i, j, k) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : !a, !b) outs(%z : !c) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %y, %x : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> !c
  %a64 = arith.constant dense<[[1.0e+08, 1.0, -1.0e+08, 1.0],
                               [1.0, 1.0e+08, 1.0, -1.0e+08]]> : !a64
  %b64 = arith.constant dense<1.0> : !b64
  %zero64 = arith.constant 0.0 : f64
  %e64 = tensor.empty() : !c64
  %z64 = linalg.fill ins(%zero64 : f64) outs(%e64 : !c64) -> !c64
  %mm64 = linalg.matmul ins(%a64, %b64 : !a64, !b64) outs(%z64 : !c64) -> !c64
  // A parallel loop (d1) the output does not index sums like a reduction
  // loop, in loop order: it must not move innermost. Sequentially
  // 1e8 + 1 - 1e8 + 1 = 1; column by column it would be 2.
  %x = arith.constant dense<[[1.0e+08, 1.0], [-1.0e+08, 1.0], [0.0, 0.0], [0.0, 0.0]]> : tensor<4x2xf32, #dist.device<0>>
  %ones = arith.constant dense<1.0> : tensor<4x2xf32, #dist.device<0>>
  %e1 = tensor.empty() : tensor<1xf32, #dist.device<0>>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1xf32, #dist.device<0>>) -> tensor<1xf32, #dist.device<0>>
  %p = linalg.generic {
      indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>,
                       affine_map<(d0, d1, d2) -> (d1, d2)>,
                       affine_map<(d0, d1, d2) -> (d0)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %ones : tensor<4x2xf32, #dist.device<0>>, tensor<4x2xf32, #dist.device<0>>)
      outs(%z1 : tensor<1xf32, #dist.device<0>>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1xf32, #dist.device<0>>
  return %mm, %g, %mm64, %p : !c, !c, !c64, tensor<1xf32, #dist.device<0>>
}

// Row 1 in f32: 0 + 1 = 1, + 1e8 = 1e8, + 1 = 1e8, - 1e8 = 0.
// CHECK: output #0
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK: output #1
// CHECK-NEXT: [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
// CHECK: output #2
// CHECK-NEXT: [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
// CHECK: output #3
// CHECK-NEXT: [1]
