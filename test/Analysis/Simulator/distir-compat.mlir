// The published DistIR simulator's reference values (docs/design/reference-facts.md), on a
// distir-uniform device: MatMul costs launch + inputs/bandwidth +
// 2mkn/throughput; peak memory is both inputs plus the result.
// RUN: distir-sim %s --entry matmul400 --cluster distir-uniform --cost-model distir-compat | FileCheck %s --check-prefix=M400
// RUN: distir-sim %s --entry matmul800 --cluster distir-uniform --cost-model distir-compat | FileCheck %s --check-prefix=M800
// RUN: distir-sim %s --entry allreduce2 --cluster distir-uniform:devices=8 --cost-model distir-compat | FileCheck %s --check-prefix=AR2
// RUN: distir-sim %s --entry allreduce4 --cluster distir-uniform:devices=8 --cost-model distir-compat | FileCheck %s --check-prefix=AR4
// RUN: distir-sim %s --entry allreduce8 --cluster distir-uniform:devices=8 --cost-model distir-compat | FileCheck %s --check-prefix=AR8

// M400: latency: 2.056507937e-05 s
// M400: 0 {{.*}} 1920000 1920000 1280000
// M800: latency: 8.883174603e-05 s
// M800: 0 {{.*}} 7680000 7680000 5120000
// AR2: latency: 1.342177280e-03 s
// AR4: latency: 2.013265920e-03 s
// AR8: latency: 2.348810240e-03 s

!a400 = tensor<400x400xf32, #dist.device<0>>
func.func @matmul400(%a: !a400, %b: !a400) -> !a400 {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !a400
  %z = linalg.fill ins(%zero : f32) outs(%e : !a400) -> !a400
  %c = linalg.matmul ins(%a, %b : !a400, !a400) outs(%z : !a400) -> !a400
  return %c : !a400
}

!a800 = tensor<800x800xf32, #dist.device<0>>
func.func @matmul800(%a: !a800, %b: !a800) -> !a800 {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !a800
  %z = linalg.fill ins(%zero : f32) outs(%e : !a800) -> !a800
  %c = linalg.matmul ins(%a, %b : !a800, !a800) outs(%z : !a800) -> !a800
  return %c : !a800
}

// 4 MiB per rank.
!g0 = tensor<1048576xf32, #dist.device<0>>
!g1 = tensor<1048576xf32, #dist.device<1>>
!g2 = tensor<1048576xf32, #dist.device<2>>
!g3 = tensor<1048576xf32, #dist.device<3>>
!g4 = tensor<1048576xf32, #dist.device<4>>
!g5 = tensor<1048576xf32, #dist.device<5>>
!g6 = tensor<1048576xf32, #dist.device<6>>
!g7 = tensor<1048576xf32, #dist.device<7>>
func.func @allreduce2(%a: !g0, %b: !g1) -> (!g0, !g1) {
  %r:2 = dist.all_reduce sum %a, %b : !g0, !g1
  return %r#0, %r#1 : !g0, !g1
}
func.func @allreduce4(%a: !g0, %b: !g1, %c: !g2, %d: !g3) -> (!g0, !g1, !g2, !g3) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !g0, !g1, !g2, !g3
  return %r#0, %r#1, %r#2, %r#3 : !g0, !g1, !g2, !g3
}
func.func @allreduce8(%a: !g0, %b: !g1, %c: !g2, %d: !g3, %e: !g4, %f: !g5, %g: !g6, %h: !g7) -> (!g0, !g1, !g2, !g3, !g4, !g5, !g6, !g7) {
  %r:8 = dist.all_reduce sum %a, %b, %c, %d, %e, %f, %g, %h : !g0, !g1, !g2, !g3, !g4, !g5, !g6, !g7
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : !g0, !g1, !g2, !g3, !g4, !g5, !g6, !g7
}
