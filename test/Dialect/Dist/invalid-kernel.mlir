// RUN: distir-opt %s -split-input-file -verify-diagnostics

func.func @negative() {
  // expected-error @+1 {{'dist.kernel' op needs a finite, non-negative duration, got -1}}
  %t = dist.kernel "op" {duration = -1.0 : f64} : tensor<0xf32, #dist.device<0>>
  return
}

// -----

func.func @infinite() {
  // expected-error @+1 {{'dist.kernel' op needs a finite, non-negative duration, got INF}}
  %t = dist.kernel "op" {duration = 0x7FF0000000000000 : f64} : tensor<0xf32, #dist.device<0>>
  return
}

// -----

func.func @other_device(%x: tensor<0xf32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.kernel' op operand #0 is on device 1, the result on device 0}}
  %t = dist.kernel "op" (%x : tensor<0xf32, #dist.device<1>>) {duration = 1.0 : f64} : tensor<0xf32, #dist.device<0>>
  return
}

// -----

func.func @unplaced() {
  // expected-error @+1 {{result #0 must be statically shaped tensor placed on a device}}
  %t = dist.kernel "op" {duration = 1.0 : f64} : tensor<0xf32>
  return
}

// -----

func.func @no_duration() {
  // expected-error @+1 {{requires attribute 'duration'}}
  %t = dist.kernel "op" : tensor<0xf32, #dist.device<0>>
  return
}

// -----

// expected-error @+1 {{'dist.replayed_latency' must be a finite, non-negative float on a func.func}}
func.func @bad_latency() attributes {dist.replayed_latency = -1.0 : f64} {
  return
}

// -----

// expected-error @+1 {{'dist.replayed_latency' must be a finite, non-negative float on a func.func}}
func.func @nan_latency() attributes {dist.replayed_latency = 0x7FF8000000000000 : f64} {
  return
}

// -----

// expected-error @+1 {{'dist.replayed_latency' must be a finite, non-negative float on a func.func}}
module attributes {dist.replayed_latency = 1.0 : f64} {
}
