// RUN: distir-opt %s --dist-lower-reshard=cluster=aws-p3.8xlarge:nodes=2 --mlir-print-op-on-diagnostic=false | FileCheck %s
// RUN: not distir-opt %s --dist-lower-reshard --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// RUN: not distir-opt %s --dist-lower-reshard="cluster=aws-p3.8xlarge:nodes=2 strategy=fast" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not distir-opt %s --dist-lower-reshard="cluster=aws-p3.8xlarge:nodes=2 balance=slow" 2>&1 | FileCheck %s --check-prefix=BALANCE
// RUN: not distir-opt %s --dist-lower-reshard="cluster=aws-p3.8xlarge:nodes=2 strategy=local-allgather" --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: not distir-opt %s --dist-lower-reshard=cluster=distir-uniform:devices=4 --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=OUTSIDE


!r0 = tensor<2x4xf32, #dist.device<0>>
!r1 = tensor<2x4xf32, #dist.device<1>>
!c2 = tensor<4x2xf32, #dist.device<2>>
!c3 = tensor<4x2xf32, #dist.device<3>>

// Rows on devices 0, 1 to columns on 2, 3: four pieces, each with one
// holder and one receiver, sent point to point in the order that keeps both
// senders busy (0 -> 2 with 1 -> 3, then 0 -> 3 with 1 -> 2); each column is
// assembled from its two pieces.
// CHECK-LABEL: func.func @rows_to_columns
// CHECK-NOT: dist.reshard
// CHECK: tensor.extract_slice %arg0[0, 0] [2, 2] [1, 1] : tensor<2x4xf32, #dist.device<0>> to tensor<2x2xf32, #dist.device<0>>
// CHECK-NEXT: %[[A:.*]] = dist.send {{.*}} -> tensor<2x2xf32, #dist.device<2>>
// CHECK-NEXT: tensor.extract_slice %arg1[0, 2] [2, 2]
// CHECK-NEXT: dist.send {{.*}} -> tensor<2x2xf32, #dist.device<3>>
// CHECK-NEXT: tensor.extract_slice %arg0[0, 2] [2, 2]
// CHECK-NEXT: dist.send {{.*}} -> tensor<2x2xf32, #dist.device<3>>
// CHECK-NEXT: tensor.extract_slice %arg1[0, 0] [2, 2]
// CHECK-NEXT: %[[B:.*]] = dist.send {{.*}} -> tensor<2x2xf32, #dist.device<2>>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x2xf32, #dist.device<2>>
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 2] [1, 1]
// CHECK-NEXT: tensor.insert_slice %[[B]] into %[[I]][2, 0] [2, 2] [1, 1]
func.func @rows_to_columns(%a: !r0, %b: !r1) -> (!c2, !c3) {
  %r:2 = dist.reshard %a, %b shape [4, 4]
      from <mesh = <shape = [2]>, split = [[0]]>
      to <mesh = <shape = [2], devices = [2, 3]>, split = [[], [0]]>
      : !r0, !r1 -> !c2, !c3
  return %r#0, %r#1 : !c2, !c3
}

// An uneven split (2 and 3 rows) to a replicated copy on two devices of
// the other host: each piece crosses the NIC once, in a broadcast.
// CHECK-LABEL: func.func @uneven_to_replicated
// CHECK-NOT: dist.reshard
// CHECK: dist.broadcast %arg0 : tensor<2x3xf32, #dist.device<0>> -> tensor<2x3xf32, #dist.device<0>>, tensor<2x3xf32, #dist.device<4>>, tensor<2x3xf32, #dist.device<5>>
// CHECK: dist.broadcast %arg1 : tensor<3x3xf32, #dist.device<1>> -> tensor<3x3xf32, #dist.device<1>>, tensor<3x3xf32, #dist.device<4>>, tensor<3x3xf32, #dist.device<5>>
// CHECK: return {{.*}} : tensor<5x3xf32, #dist.device<4>>, tensor<5x3xf32, #dist.device<5>>
func.func @uneven_to_replicated(%a: tensor<2x3xf32, #dist.device<0>>,
                                %b: tensor<3x3xf32, #dist.device<1>>)
    -> (tensor<5x3xf32, #dist.device<4>>, tensor<5x3xf32, #dist.device<5>>) {
  %r:2 = dist.reshard %a, %b shape [5, 3]
      from <mesh = <shape = [2]>, split = [[0]]>
      to <mesh = <shape = [2], devices = [4, 5]>, split = []>
      : tensor<2x3xf32, #dist.device<0>>, tensor<3x3xf32, #dist.device<1>>
        -> tensor<5x3xf32, #dist.device<4>>, tensor<5x3xf32, #dist.device<5>>
  return %r#0, %r#1 : tensor<5x3xf32, #dist.device<4>>, tensor<5x3xf32, #dist.device<5>>
}

// NOCLUSTER: error: no cluster: pass cluster=NAME or cluster=path.json to dist-lower-reshard, or attach one with dist-attach-cluster
// STRATEGY: for the --strategy option: Cannot find option named 'fast'!
// BALANCE: for the --balance option: Cannot find option named 'slow'!
// FORCED: error: 'dist.reshard' op strategy local-allgather does not apply: no dimension of the 3x3 piece divides into 2 equal parts
// OUTSIDE: error: 'dist.reshard' op the destination mesh places position 0 on device 4, outside the 4 devices of cluster 'distir-uniform:devices=4'
