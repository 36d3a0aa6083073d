// NCCL all-reduces in place when its input is not needed afterwards, so the
// result takes no memory of its own; an input read later keeps its buffer
// and the result needs another one.
// RUN: distir-sim %s --entry in_place --cluster distir-uniform:devices=2 | FileCheck %s --check-prefix=INPLACE
// RUN: distir-sim %s --entry kept --cluster distir-uniform:devices=2 | FileCheck %s --check-prefix=KEPT

!t0 = tensor<1024xf32, #dist.device<0>>       // 4096 bytes
!t1 = tensor<1024xf32, #dist.device<1>>

// Per device: resident %x = 4096; %a = 4096 more (8192); the all-reduce
// writes over %a (8192). Peak 8192.
// INPLACE: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 8192 {{[0-9]+}} 4096
// INPLACE-NEXT: 1 {{[^ ]+ +[^ ]+ +[^ ]+}} 8192 {{[0-9]+}} 4096
func.func @in_place(%x: !t0, %y: !t1) -> (!t0, !t1) {
  %a = arith.addf %x, %x : !t0
  %b = arith.addf %y, %y : !t1
  %r:2 = dist.all_reduce sum %a, %b : !t0, !t1
  return %r#0, %r#1 : !t0, !t1
}

// %a is read after the all-reduce: its result needs a buffer of its own,
// %x + %a + %r = 4096 * 3 = 12288. (%s, returned, takes the buffer of the
// dead argument %x, as an update takes its weight's: docs/design/memory.md.)
// KEPT: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 12288 {{[0-9]+}} 4096
func.func @kept(%x: !t0, %y: !t1) -> (!t0, !t1) {
  %a = arith.addf %x, %x : !t0
  %b = arith.addf %y, %y : !t1
  %r:2 = dist.all_reduce sum %a, %b : !t0, !t1
  %s = arith.addf %r#0, %a : !t0
  %t = arith.addf %r#1, %b : !t1
  return %s, %t : !t0, !t1
}
