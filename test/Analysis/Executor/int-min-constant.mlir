// Negative scalar integer constants (here filled and compared) keep their
// sign: INT64_MIN used to be read as +2^63 and -1 as 2^64 - 1 (a
// conditional of uint64_t and int64_t), then clamped.
// RUN: distir-run %s | FileCheck %s

func.func @main() -> (tensor<2xi64, #dist.device<0>>, tensor<2xi64, #dist.device<0>>, tensor<2xi32, #dist.device<0>>, tensor<2xi64, #dist.device<0>>) {
  %min = arith.constant -9223372036854775808 : i64
  %m32 = arith.constant -2147483648 : i32
  %x = arith.constant dense<[2, -3]> : tensor<2xi64, #dist.device<0>>
  %0 = tensor.empty() : tensor<2xi64, #dist.device<0>>
  %1 = linalg.fill ins(%min : i64) outs(%0 : tensor<2xi64, #dist.device<0>>) -> tensor<2xi64, #dist.device<0>>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %1 : tensor<2xi64, #dist.device<0>>, tensor<2xi64, #dist.device<0>>) outs(%0 : tensor<2xi64, #dist.device<0>>) {
  ^bb0(%a: i64, %b: i64, %o: i64):
    %m = arith.minsi %a, %b : i64
    linalg.yield %m : i64
  } -> tensor<2xi64, #dist.device<0>>
  %3 = tensor.empty() : tensor<2xi32, #dist.device<0>>
  %4 = linalg.fill ins(%m32 : i32) outs(%3 : tensor<2xi32, #dist.device<0>>) -> tensor<2xi32, #dist.device<0>>
  %neg = arith.constant -1 : i64
  %5 = linalg.fill ins(%neg : i64) outs(%0 : tensor<2xi64, #dist.device<0>>) -> tensor<2xi64, #dist.device<0>>
  return %1, %2, %4, %5 : tensor<2xi64, #dist.device<0>>, tensor<2xi64, #dist.device<0>>, tensor<2xi32, #dist.device<0>>, tensor<2xi64, #dist.device<0>>
}

// CHECK: output #0
// CHECK-NEXT: [-9223372036854775808, -9223372036854775808]
// CHECK: output #1
// CHECK-NEXT: [-9223372036854775808, -9223372036854775808]
// CHECK: output #2
// CHECK-NEXT: [-2147483648, -2147483648]
// CHECK: output #3
// CHECK-NEXT: [-1, -1]
