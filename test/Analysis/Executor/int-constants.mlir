// Negative integer tensor constants keep their sign; a result marked
// `dist.unsigned` prints (and is written) as unsigned.
// RUN: distir-run %s | FileCheck %s

func.func @main() -> (tensor<3xi8, #dist.device<0>>, tensor<2xi64, #dist.device<0>>,
                      tensor<3xi8, #dist.device<0>> {dist.unsigned}) {
  %a = arith.constant dense<[-56, 3, -128]> : tensor<3xi8, #dist.device<0>>
  %b = arith.constant dense<[-1, 9]> : tensor<2xi64, #dist.device<0>>
  return %a, %b, %a : tensor<3xi8, #dist.device<0>>, tensor<2xi64, #dist.device<0>>, tensor<3xi8, #dist.device<0>>
}

// CHECK: output #0
// CHECK-NEXT: [-56, 3, -128]
// CHECK: output #1
// CHECK-NEXT: [-1, 9]
// CHECK: output #2
// CHECK-NEXT: [200, 3, 128]
