// RUN: distir-opt %s --dist-place --split-input-file --verify-diagnostics

// expected-error @+1 {{dist-place cannot infer the batch of @scalar: result #0 (tensor<f32, #dist.device<0>>) has no dimension 0; mark the batch inputs with dist.batch_dim and pass result-batch-dim=-1}}
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

// The result comes from a constant: no argument reaches it.
// expected-error @+1 {{dist-place cannot infer the batch of @constant: no argument dimension reaches dimension 0 of result #0 through the ops it follows (linalg, reshapes, slices, pads, concats, element-wise)}}
func.func @constant(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// expected-error @+1 {{dist-place cannot infer the batch of @none: it has no result}}
func.func @none(%x: tensor<4xf32>) {
  return
}

// -----

func.func @elsewhere(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{dist-place: 'tensor<4xf32, #dist.device<1>>' already has an encoding other than #dist.device<0>}}
  %e = tensor.empty() : tensor<4xf32, #dist.device<1>>
  return %x : tensor<4xf32>
}

// -----

func.func @unranked(%x: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{dist-place cannot place the unranked 'tensor<*xf32>'}}
  %y = tensor.cast %x : tensor<*xf32> to tensor<*xf32>
  return %y : tensor<*xf32>
}
