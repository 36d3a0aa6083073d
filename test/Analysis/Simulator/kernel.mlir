// RUN: distir-sim %s --cluster dgx-h100 --overlap | FileCheck %s
// RUN: not distir-run %s 2>&1 | FileCheck %s --check-prefix=EXEC

// Profiled work runs for its measured duration on its device's compute
// stream; a transfer (`communication`) is reported as communication; a
// token crosses devices by a send of zero bytes (the link's latency,
// 2 us on one dgx-h100 node). By hand: 20 us transfer, 150 us backward,
// 2 us send, 100 us on device 1: 272 us.

// CHECK: latency: 2.720000000e-04 s
// CHECK-NEXT: device     compute (s)       comm (s)
// CHECK-NEXT: 0         1.500000e-04   2.200000e-05
// CHECK-NEXT: 1         1.000000e-04   2.000000e-06
// CHECK: critical path (4 ops):
// CHECK-NEXT: 0.000000e+00   2.000000e-05  gloo step 0 [0]
// CHECK-NEXT: 2.000000e-05   1.700000e-04  AddmmBackward0 [0]
// CHECK-NEXT: 1.700000e-04   1.720000e-04  dist.send [0, 1]
// CHECK-NEXT: 1.720000e-04   2.720000e-04  next [1]
// CHECK: gloo step 0 {{.*}}1 events   2.000000e-05 s

// The reference executor cannot run what it does not know:
// EXEC: reference executor: unsupported op 'dist.kernel'

!tok0 = tensor<0xf32, #dist.device<0>>
!tok1 = tensor<0xf32, #dist.device<1>>
func.func @replay() -> !tok1 {
  %t = dist.kernel "gloo step 0" {communication, duration = 2.0e-05 : f64} : !tok0
  %b = dist.kernel "AddmmBackward0" (%t : !tok0) {duration = 1.5e-04 : f64} : !tok0
  %s = dist.send %b : !tok0 -> !tok1
  %c = dist.kernel "next" (%s : !tok1) {duration = 1.0e-04 : f64} : !tok1
  return %c : !tok1
}
