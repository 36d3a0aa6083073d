// RUN: distir-opt --dist-to-rank --convert-dist-to-nccl -split-input-file -verify-diagnostics %s | FileCheck %s

// The global function dispatches on the shim's world rank.
// CHECK-LABEL: func.func @f(
// CHECK: %[[R:.*]] = call @distir_nccl_world_rank() : () -> i32
// CHECK: %[[I:.*]] = arith.index_cast %[[R]] : i32 to index
// CHECK: scf.index_switch %[[I]]
// CHECK: case 0 {
// CHECK: func.call @f_rank0(%arg0)
// CHECK: case 1 {
// CHECK: func.call @f_rank1(%arg1)
// CHECK-LABEL: func.func @f_rank1(
// CHECK: %[[G:.*]] = memref.get_global @__distir_group_0_1 : memref<2xi64>
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[G]]
// CHECK: %[[PI:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK: %[[C:.*]] = call @distir_nccl_group_comm(%[[PI]], %{{.*}}) : (i64, i64) -> i64
// The shim sees raw pointers: the call and the pointer extractions of its
// buffers share a region, so that deallocation cannot free them in between.
// CHECK: memref.alloca_scope {
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: call @distir_nccl_all_reduce(%[[C]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64, i64, i32, i32) -> ()
// CHECK: call @distir_nccl_all_gather
// CHECK: call @distir_nccl_recv
// CHECK: func.func private @distir_nccl_group_comm(i64, i64) -> i64
!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
func.func @f(%a: !t0, %b: !t1) -> (!t1, tensor<8xf32, #dist.device<1>>, !t1) {
  %r:2 = dist.all_reduce sum %a, %b : !t0, !t1
  %g:2 = dist.all_gather %a, %b dim 0 : !t0, !t1
  %s = dist.send %a : !t0 -> !t1
  return %r#1, %g#1, %s : !t1, tensor<8xf32, #dist.device<1>>, !t1
}

// -----

!t0 = tensor<2x4xf32, #dist.device<0>>
!t1 = tensor<2x4xf32, #dist.device<1>>
func.func @g(%a: !t0, %b: !t1) -> tensor<2x8xf32, #dist.device<1>> {
  // expected-error @+1 {{chunks along dimension 1 of 'tensor<2x8xf32>' are not contiguous}}
  %g:2 = dist.all_gather %a, %b dim 1 : !t0, !t1
  return %g#1 : tensor<2x8xf32, #dist.device<1>>
}
