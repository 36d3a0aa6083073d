// The calibrated cost model: compute ops priced by their class's linear
// model (bytes = bytes read + written, as in the analytic roofline),
// collectives by the model of their kind and group size.
// RUN: distir-sim %s --entry mm --cluster dgx-h100 --cost-model calibrated --calibration %S/../Calibration/Inputs/sim-calibration.json | FileCheck %s --check-prefix=MM
// RUN: distir-sim %s --entry add --cluster dgx-h100 --cost-model calibrated --calibration %S/../Calibration/Inputs/sim-calibration.json | FileCheck %s --check-prefix=ADD
// RUN: distir-sim %s --entry rowsum --cluster dgx-h100 --cost-model calibrated --calibration %S/../Calibration/Inputs/sim-calibration.json | FileCheck %s --check-prefix=SUM
// RUN: distir-sim %s --entry transpose --cluster dgx-h100 --cost-model calibrated --calibration %S/../Calibration/Inputs/sim-calibration.json | FileCheck %s --check-prefix=COPY
// RUN: distir-sim %s --entry allreduce2 --cluster dgx-h100 --calibration %S/../Calibration/Inputs/sim-calibration.json | FileCheck %s --check-prefix=AR2
// RUN: distir-sim %s --entry allreduce4 --cluster dgx-h100 --calibration %S/../Calibration/Inputs/sim-calibration.json | FileCheck %s --check-prefix=AR4
// RUN: distir-sim %s --entry allreduce8 --cluster dgx-h100 --calibration %S/../Calibration/Inputs/sim-calibration.json | FileCheck %s --check-prefix=AR8
// RUN: distir-sim %s --entry chain --cluster dgx-h100 --calibration %S/../Calibration/Inputs/sim-calibration.json --format json | FileCheck %s --check-prefix=CHAIN

// matmul 400x400x400 f32: c0 = 1e-5, c1 = 1e-9 s/B; bytes = A + B +
// accumulator read + C written = 4 * 640000 = 2.56e6 -> 1e-5 + 2.56e-3.
// MM: (cost model calibrated,
// MM: latency: 2.570000000e-03 s
// Elementwise add of 2^20 f32: 2e-6 + 1e-12 * 1048576 flops.
// ADD: latency: 3.048576000e-06 s
// Row sum of 1024x1024 f32 (reduction class): 3e-6 + 1e-11 * (4194304 B
// input + 4096 B accumulator read + 4096 B written) = 4.502496e-05.
// SUM: latency: 4.502496000e-05 s
// Transpose of 512x256 f32 (copy class): 4e-6 + 2e-11 * 1048576 B.
// COPY: latency: 2.497152000e-05 s
// all_reduce of 4 MiB: n = 2 measured: 5e-6 + 1e-10 * 4194304.
// AR2: latency: 4.244304000e-04 s
// n = 4 falls back to the nearest measured size, 2, with the per-byte
// coefficient scaled by f(4) / f(2) = 1.5 / 1: 5e-6 + 1.5e-10 * 4194304.
// AR4: latency: 6.341456000e-04 s
// n = 8 measured: 2e-5 + 4e-10 * 4194304.
// AR8: latency: 1.697721600e-03 s
// matmul, then all_reduce of its 640000 B result, then add on device 0:
// 2.57e-3 + (5e-6 + 1e-10 * 640000) + (2e-6 + 1e-12 * 160000).
// CHAIN: "cost_model": "calibrated"
// CHAIN: "latency": 0.00264116

!m = tensor<400x400xf32, #dist.device<0>>
!m1 = tensor<400x400xf32, #dist.device<1>>
func.func @mm(%a: !m, %b: !m) -> !m {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !m
  %z = linalg.fill ins(%zero : f32) outs(%e : !m) -> !m
  %c = linalg.matmul ins(%a, %b : !m, !m) outs(%z : !m) -> !m
  return %c : !m
}

!v = tensor<1048576xf32, #dist.device<0>>
func.func @add(%a: !v, %b: !v) -> !v {
  %c = arith.addf %a, %b : !v
  return %c : !v
}

!x = tensor<1024x1024xf32, #dist.device<0>>
!y = tensor<1024xf32, #dist.device<0>>
func.func @rowsum(%x: !x) -> !y {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !y
  %z = linalg.fill ins(%zero : f32) outs(%e : !y) -> !y
  %r = linalg.reduce ins(%x : !x) outs(%z : !y) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : !y
}

!s = tensor<512x256xf32, #dist.device<0>>
!t = tensor<256x512xf32, #dist.device<0>>
func.func @transpose(%x: !s) -> !t {
  %e = tensor.empty() : !t
  %t = linalg.transpose ins(%x : !s) outs(%e : !t) permutation = [1, 0]
  return %t : !t
}

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

func.func @chain(%a: !m, %b: !m, %p: !m1) -> (!m, !m1) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !m
  %z = linalg.fill ins(%zero : f32) outs(%e : !m) -> !m
  %c = linalg.matmul ins(%a, %b : !m, !m) outs(%z : !m) -> !m
  %r:2 = dist.all_reduce sum %c, %p : !m, !m1
  %d = arith.addf %r#0, %a : !m
  return %d, %r#1 : !m, !m1
}
