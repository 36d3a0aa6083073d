// Negative integer tensor constants keep their sign.
// RUN: distir-run %s | FileCheck %s

func.func @main() -> (tensor<3xi8, #dist.device<0>>, tensor<2xi64, #dist.device<0>>) {
  %a = arith.constant dense<[-56, 3, -128]> : tensor<3xi8, #dist.device<0>>
  %b = arith.constant dense<[-1, 9]> : tensor<2xi64, #dist.device<0>>
  return %a, %b : tensor<3xi8, #dist.device<0>>, tensor<2xi64, #dist.device<0>>
}

// CHECK: output #0
// CHECK-NEXT: [-56, 3, -128]
// CHECK: output #1
// CHECK-NEXT: [-1, 9]
