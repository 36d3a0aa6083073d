// RUN: distir-opt %s --dist-pase='devices=2 cluster=%S/Inputs/slow-compute.json' -verify-diagnostics

// The cluster's device has a peak for f32 only: an f64 op cannot be priced
// (one error at the op, not an infinite cost).
func.func @no_peak(%a: tensor<8x8xf64>, %b: tensor<8x8xf64>, %e: tensor<8x8xf64>) -> tensor<8x8xf64> {
  // expected-error @+1 {{per-op strategies price this op at the peak flop/s of its element type, and cluster 'slow-compute' has none for f64 (add it to the device's peak_flops)}}
  %m = linalg.matmul ins(%a, %b : tensor<8x8xf64>, tensor<8x8xf64>) outs(%e : tensor<8x8xf64>) -> tensor<8x8xf64>
  return %m : tensor<8x8xf64>
}
