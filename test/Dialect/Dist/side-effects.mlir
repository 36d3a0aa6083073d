// RUN: distir-opt %s --canonicalize --cse | FileCheck %s

// Communication ops are neither merged, dropped nor reordered by generic
// passes: program order is the schedule.

!d0 = tensor<8xf32, #dist.device<0>>
!d1 = tensor<8xf32, #dist.device<1>>

// CHECK-LABEL: func.func @kept
func.func @kept(%a: !d0, %b: !d1) -> !d0 {
  // CHECK: dist.send
  // CHECK: dist.all_reduce sum
  // CHECK: dist.all_reduce sum
  // CHECK: dist.broadcast
  %unused = dist.send %a : !d0 -> !d1
  %r:2 = dist.all_reduce sum %a, %b : !d0, !d1
  %s:2 = dist.all_reduce sum %a, %b : !d0, !d1
  %t:2 = dist.broadcast %a : !d0 -> !d0, !d1
  return %r#0 : !d0
}
