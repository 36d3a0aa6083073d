// The dist-lower-to-llvm pipeline with NCCL communication: no MPI calls, the
// shim's functions instead, and a dispatcher on the shim's world rank.
// RUN: distir-opt --dist-lower-to-llvm="comm=nccl" %s | FileCheck %s
// RUN: distir-opt --dist-lower-to-llvm="comm=mpi" %s | FileCheck %s --check-prefix=MPI
// RUN: not distir-opt --dist-lower-to-llvm="comm=gloo" %s 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-NOT: MPI_
// CHECK-LABEL: llvm.func @g(
// CHECK: llvm.call @distir_nccl_world_rank() : () -> i32
// CHECK-LABEL: llvm.func @g_rank0(
// CHECK: llvm.call @distir_nccl_group_comm
// CHECK: llvm.call @distir_nccl_reduce_scatter
// CHECK-LABEL: llvm.func @g_rank1(
// CHECK-NOT: MPI_

// MPI: llvm.call @MPI_Comm_rank
// MPI-NOT: distir_nccl

// BAD: for the --comm option: Cannot find option named 'gloo'!

!t0 = tensor<4x2xf32, #dist.device<0>>
!t1 = tensor<4x2xf32, #dist.device<1>>
!h0 = tensor<2x2xf32, #dist.device<0>>
!h1 = tensor<2x2xf32, #dist.device<1>>
func.func @g(%a: !t0, %b: !t1) -> (!h0, !h1) {
  %r:2 = dist.reduce_scatter sum %a, %b dim 0 : !t0, !t1
  return %r#0, %r#1 : !h0, !h1
}
