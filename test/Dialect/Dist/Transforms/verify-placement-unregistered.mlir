// RUN: distir-opt %s --allow-unregistered-dialect -split-input-file -verify-diagnostics --dist-verify-placement

// Ops of unregistered dialects are compute ops like any other.
func.func @mixed(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<1>>) {
  // expected-error @+1 {{'foo.bar' op has operand #0 on device 0 and operand #1 on device 1}}
  "foo.bar"(%a, %b) : (tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>>) -> ()
  return
}

// -----

func.func @placed(%a: tensor<4xf32, #dist.device<3>>) -> tensor<4xf32, #dist.device<3>> {
  %r = "foo.baz"(%a) : (tensor<4xf32, #dist.device<3>>) -> tensor<4xf32, #dist.device<3>>
  return %r : tensor<4xf32, #dist.device<3>>
}
