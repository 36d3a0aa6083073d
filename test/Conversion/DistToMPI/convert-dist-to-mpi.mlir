// RUN: distir-opt --dist-to-rank --convert-dist-to-mpi %s | FileCheck %s
// RUN: distir-opt --dist-lower-to-llvm %s | FileCheck %s --check-prefix=LLVM

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// The global function becomes the dispatcher.
// CHECK-LABEL: func.func @f(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[W:.*]] = mpi.comm_world : !mpi.comm
// CHECK: %[[R:.*]] = mpi.comm_rank(%[[W]]) : i32
// CHECK: scf.index_switch
// CHECK: case 0 {
// CHECK: func.call @f_rank0
// CHECK: case 1 {
// CHECK: func.call @f_rank1
// CHECK: default {
// CHECK-LABEL: func.func @f_rank0(
// Communicators come from the runtime's cache, keyed by the group's ranks.
// CHECK: %[[G:.*]] = memref.get_global @__distir_group_0_1 : memref<2xi64>
// CHECK: %[[H:.*]] = call @distir_mpi_group_comm(%{{.*}}, %{{.*}}) : (i64, i64) -> i64
// CHECK: %[[C:.*]] = builtin.unrealized_conversion_cast %[[H]] : i64 to !mpi.comm
// CHECK: mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %[[C]]) : memref<4xf32>, memref<4xf32>
// CHECK: mpi.send(%{{.*}}, %{{.*}}, %{{.*}}, %[[W0:.*]]) : memref<4xf32>, i32, i32
// CHECK-LABEL: func.func @f_rank1(
// CHECK: mpi.allreduce
// CHECK: mpi.recv(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : memref<4xf32>, i32, i32
// CHECK: bufferization.to_tensor %{{.*}} restrict writable

// LLVM-DAG: llvm.mlir.global external @ompi_mpi_op_sum()
// LLVM-DAG: llvm.call @MPI_Allreduce
// LLVM-NOT: @ompi_mpi_sum
// LLVM-NOT: MPI_Comm_split
// Buffers the step allocates are freed (ownership-based deallocation): the
// all-reduce's result on rank 1, after the call that writes it.
// LLVM-LABEL: llvm.func @f_rank1(
// LLVM: llvm.call @malloc
// LLVM: llvm.call @MPI_Allreduce
// LLVM: llvm.call @free
!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
func.func @f(%a: !t0, %b: !t1) -> (!t0, !t1) {
  %r:2 = dist.all_reduce sum %a, %b : !t0, !t1
  %s = dist.send %r#0 : !t0 -> !t1
  return %r#0, %s : !t0, !t1
}
