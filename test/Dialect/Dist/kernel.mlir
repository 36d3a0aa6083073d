// RUN: distir-opt %s | distir-opt | FileCheck %s
// RUN: distir-opt %s --canonicalize --cse | FileCheck %s --check-prefix=KEPT

// Profiled work (distir-replay --emit-program): the label, operands and
// measured duration round-trip; canonicalization and CSE keep every kernel
// (program order is the schedule), also the identical ones and those whose
// token nobody reads.

!tok0 = tensor<0xf32, #dist.device<0>>
!tok1 = tensor<0xf32, #dist.device<1>>

// CHECK-LABEL: func.func @replay
// CHECK: %[[T:.*]] = dist.kernel "gloo step 0" {communication, duration = 2.000000e-05 : f64} : tensor<0xf32, #dist.device<0>>
// CHECK: %[[B:.*]] = dist.kernel "AddmmBackward0"(%[[T]] : tensor<0xf32, #dist.device<0>>) {duration = 1.500000e-04 : f64}
// CHECK: dist.send %[[B]]
// KEPT-COUNT-4: dist.kernel
func.func @replay() -> !tok1 {
  %t = dist.kernel "gloo step 0" {communication, duration = 2.0e-05 : f64} : !tok0
  %b = dist.kernel "AddmmBackward0" (%t : !tok0) {duration = 1.5e-04 : f64} : !tok0
  %s = dist.send %b : !tok0 -> !tok1
  %c = dist.kernel "next" (%s : !tok1) {duration = 1.0e-04 : f64} : !tok1
  %unused = dist.kernel "next" (%s : !tok1) {duration = 1.0e-04 : f64} : !tok1
  return %c : !tok1
}
