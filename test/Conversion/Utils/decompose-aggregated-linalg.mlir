// linalg.softmax becomes the structured ops it is made of (max, sub/exp,
// sum, div), so that convert-linalg-to-loops can lower rank programs.
// RUN: distir-opt --distir-decompose-aggregated-linalg %s | FileCheck %s

// CHECK-LABEL: func.func @softmax(
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK-NOT: linalg.softmax
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %e = tensor.empty() : tensor<2x8xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}
