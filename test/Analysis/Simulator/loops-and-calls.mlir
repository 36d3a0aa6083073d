// Calls are interpreted (not inlined first), loops with constant bounds are
// unrolled, and index arithmetic is evaluated concretely to get the bounds.
// RUN: distir-sim %s --cluster distir-uniform --cost-model distir-compat --entry main | FileCheck %s

!t = tensor<256x256xf32, #dist.device<0>>

// One add: 1.0587223e-05 s (see schedule-order.mlir). The loop runs
// 2 * 3 - 1 = 5 times and calls @double once per iteration: 5 adds.
// CHECK: latency: 5.293611683e-05 s
// CHECK: critical path (5 ops):
func.func @double(%x: !t) -> !t {
  %y = arith.addf %x, %x : !t
  return %y : !t
}

func.func @main(%x: !t) -> !t {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %m = arith.muli %c2, %c3 : index
  %n = arith.subi %m, %c1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> !t {
    %d = func.call @double(%acc) : (!t) -> !t
    scf.yield %d : !t
  }
  return %r : !t
}
