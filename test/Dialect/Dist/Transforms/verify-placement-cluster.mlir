// RUN: distir-opt %s -verify-diagnostics --dist-attach-cluster=cluster=dgx-h100 --dist-verify-placement

// dgx-h100 with one node has devices 0..7.
func.func @out_of_cluster(%a: tensor<4xf32, #dist.device<7>>) {
  // expected-error @+1 {{'dist.send' op result #0 is on device 8 but cluster 'dgx-h100' has only 8 devices}}
  %b = dist.send %a : tensor<4xf32, #dist.device<7>> -> tensor<4xf32, #dist.device<8>>
  return
}
