// A loop bound of 2^62 made distir-sim and distir-run (one interpreter)
// run forever; the loops of one interpretation run at most 2^26 iterations
// in all, and more is one error at the loop.
// RUN: not distir-sim %s --entry main --cluster dgx-h100 2>&1 | FileCheck %s
// RUN: not distir-run %s --entry main --random-inputs 1 2>&1 | FileCheck %s

!t = tensor<4xf32, #dist.device<0>>

// CHECK: loop-limit.mlir:[[#@LINE+5]]:8: error: scf.for runs 4611686018427387904 iterations; one interpretation runs at most 67108864 loop iterations in all
func.func @main(%x: !t) -> !t {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4611686018427387904 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (!t) {
    scf.yield %a : !t
  }
  return %r : !t
}
