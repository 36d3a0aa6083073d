// Analytic (roofline) compute costs on dgx-h100: launch 1e-5 s plus the
// larger of flops / peak(dtype) and bytes moved / 3.35e12 B/s.
// RUN: distir-sim %s --entry mm_f32 --cluster dgx-h100 | FileCheck %s --check-prefix=F32
// RUN: distir-sim %s --entry mm_bf16 --cluster dgx-h100 | FileCheck %s --check-prefix=BF16
// RUN: distir-sim %s --entry add_f32 --cluster dgx-h100 | FileCheck %s --check-prefix=ADD

// 400x400x400 f32: 1.28e8 flops / 6.7e13 = 1.910448e-06 s (compute bound;
// bytes: A, B, accumulator read + C written = 2.56e6 B -> 7.64e-07 s).
// F32: latency: 1.191044776e-05 s
// bf16 at 9.89e14 flop/s: 1.294237e-07 s of compute; memory: 4 * 320000 B /
// 3.35e12 = 3.820896e-07 s wins.
// BF16: latency: 1.038208955e-05 s
// Elementwise add of 2^20 f32: 4 MiB read twice + 4 MiB written
// = 12582912 B / 3.35e12 = 3.756093e-06 s.
// ADD: latency: 1.375609313e-05 s

!f = tensor<400x400xf32, #dist.device<0>>
func.func @mm_f32(%a: !f, %b: !f) -> !f {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !f
  %z = linalg.fill ins(%zero : f32) outs(%e : !f) -> !f
  %c = linalg.matmul ins(%a, %b : !f, !f) outs(%z : !f) -> !f
  return %c : !f
}

!h = tensor<400x400xbf16, #dist.device<0>>
func.func @mm_bf16(%a: !h, %b: !h) -> !h {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : !h
  %z = linalg.fill ins(%zero : bf16) outs(%e : !h) -> !h
  %c = linalg.matmul ins(%a, %b : !h, !h) outs(%z : !h) -> !h
  return %c : !h
}

!v = tensor<1048576xf32, #dist.device<3>>
func.func @add_f32(%a: !v, %b: !v) -> !v {
  %c = arith.addf %a, %b : !v
  return %c : !v
}
