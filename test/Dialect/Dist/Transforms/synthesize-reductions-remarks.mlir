// With verbose, every decision is a remark on the all_reduce; a tensor that
// does not divide by the group skips the programs with reduce_scatter or
// all_gather (see synthesize-reductions-fallback.mlir for the fallback to
// the all_reduce itself).
// RUN: distir-opt %s --split-input-file --verify-diagnostics --dist-synthesize-reductions="cluster=gcp-a100x16:nodes=2 verbose=1" | FileCheck %s

// CHECK-LABEL: func.func @not_divisible
// CHECK: dist.reduce sum
// CHECK-LABEL: func.func @decisions
// CHECK: dist.reduce_scatter
// CHECK-LABEL: func.func @scalar
// CHECK: dist.reduce avg

!u0 = tensor<1023x256xf32, #dist.device<0>>
!u1 = tensor<1023x256xf32, #dist.device<1>>
!u16 = tensor<1023x256xf32, #dist.device<16>>
!u17 = tensor<1023x256xf32, #dist.device<17>>
func.func @not_divisible(%a: !u0, %b: !u1, %c: !u16, %d: !u17) -> (!u0, !u1, !u16, !u17) {
  // expected-remark-re @+1 {{replaced by Reduce(node, InsideGroup) ; AllReduce(node, Master(root)) ; Broadcast(node, InsideGroup) (predicted {{[0-9.e+-]+}} s, all_reduce {{[0-9.e+-]+}} s); skipped 2 faster program(s) that the dist ops cannot express, first ReduceScatter(node, InsideGroup) ; AllReduce(node, Parallel(root)) ; AllGather(node, InsideGroup): dimension 0 of size 1023 is not divisible by the 4 devices of the group}}
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !u0, !u1, !u16, !u17
  return %r#0, %r#1, %r#2, %r#3 : !u0, !u1, !u16, !u17
}

// -----

!t0 = tensor<1024x256xf32, #dist.device<0>>
!t1 = tensor<1024x256xf32, #dist.device<1>>
!t2 = tensor<1024x256xf32, #dist.device<2>>
!t16 = tensor<1024x256xf32, #dist.device<16>>
!t17 = tensor<1024x256xf32, #dist.device<17>>
func.func @decisions(%a: !t0, %b: !t1, %c: !t2, %d: !t16, %e: !t17) {
  // expected-remark-re @+1 {{replaced by ReduceScatter(node, InsideGroup) ; AllReduce(node, Parallel(root)) ; AllGather(node, InsideGroup) (predicted {{[0-9.e+-]+}} s, all_reduce {{[0-9.e+-]+}} s)}}
  %r:4 = dist.all_reduce sum %a, %b, %d, %e : !t0, !t1, !t16, !t17
  // expected-remark @+1 {{kept: the group spans one hierarchy level (gpu)}}
  %s:3 = dist.all_reduce sum %a, %b, %c : !t0, !t1, !t2
  // expected-remark @+1 {{kept: the group spans one hierarchy level (node)}}
  %t:2 = dist.all_reduce sum %a, %d : !t0, !t16
  // expected-remark @+1 {{kept: the group is not a product of per-level device sets}}
  %u:3 = dist.all_reduce sum %a, %b, %d : !t0, !t1, !t16
  // expected-remark @+1 {{kept: a group of one device}}
  %v = dist.all_reduce sum %a : !t0
  return
}

// -----

// A 0-d tensor cannot be split; avg stays exact through Reduce ; AllReduce ;
// Broadcast because every partial average covers as many devices.
!s0 = tensor<f32, #dist.device<0>>
!s1 = tensor<f32, #dist.device<1>>
!s16 = tensor<f32, #dist.device<16>>
!s17 = tensor<f32, #dist.device<17>>
func.func @scalar(%a: !s0, %b: !s1, %c: !s16, %d: !s17) {
  // expected-remark-re @+1 {{replaced by Reduce(node, InsideGroup) ; AllReduce(node, Master(root)) ; Broadcast(node, InsideGroup) (predicted {{[0-9.e+-]+}} s, all_reduce {{[0-9.e+-]+}} s); skipped 2 faster program(s) that the dist ops cannot express, first ReduceScatter(node, InsideGroup) ; AllReduce(node, Parallel(root)) ; AllGather(node, InsideGroup): a rank-0 tensor cannot be split}}
  %r:4 = dist.all_reduce avg %a, %b, %c, %d : !s0, !s1, !s16, !s17
  return
}
