// The algo option changes the pricing, hence the program: under NCCL tree
// costs the cross-node step becomes ReduceScatter ; AllGather instead of an
// AllReduce.
// RUN: distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16:nodes=2 algo=ring" | FileCheck %s --check-prefix=RING
// RUN: distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16:nodes=2" | FileCheck %s --check-prefix=RING
// RUN: distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16:nodes=2 algo=tree" --dist-verify-placement | FileCheck %s --check-prefix=TREE

!t0 = tensor<1024x256xf32, #dist.device<0>>
!t1 = tensor<1024x256xf32, #dist.device<1>>
!t16 = tensor<1024x256xf32, #dist.device<16>>
!t17 = tensor<1024x256xf32, #dist.device<17>>

// RING-LABEL: func.func @f
// RING: dist.reduce_scatter sum %arg0, %arg1 dim 0
// RING-NEXT: dist.reduce_scatter sum %arg2, %arg3 dim 0
// RING-NEXT: dist.all_reduce sum {{.*}} : tensor<512x256xf32, #dist.device<0>>, tensor<512x256xf32, #dist.device<16>>
// RING-NEXT: dist.all_reduce sum {{.*}} : tensor<512x256xf32, #dist.device<1>>, tensor<512x256xf32, #dist.device<17>>
// RING-NEXT: dist.all_gather {{.*}} dim 0 : tensor<512x256xf32, #dist.device<0>>, tensor<512x256xf32, #dist.device<1>>
// RING-NEXT: dist.all_gather {{.*}} dim 0 : tensor<512x256xf32, #dist.device<16>>, tensor<512x256xf32, #dist.device<17>>
// RING-NEXT: return

// TREE-LABEL: func.func @f
// TREE: %[[RS0:.*]]:2 = dist.reduce_scatter sum %arg0, %arg1 dim 0
// TREE-NEXT: %[[RS1:.*]]:2 = dist.reduce_scatter sum %arg2, %arg3 dim 0
// TREE-NEXT: %[[X0:.*]]:2 = dist.reduce_scatter sum %[[RS0]]#0, %[[RS1]]#0 dim 0 : tensor<512x256xf32, #dist.device<0>>, tensor<512x256xf32, #dist.device<16>>
// TREE-NEXT: %[[X1:.*]]:2 = dist.reduce_scatter sum %[[RS0]]#1, %[[RS1]]#1 dim 0 : tensor<512x256xf32, #dist.device<1>>, tensor<512x256xf32, #dist.device<17>>
// TREE-NEXT: %[[G0:.*]]:2 = dist.all_gather %[[X0]]#0, %[[X0]]#1 dim 0 : tensor<256x256xf32, #dist.device<0>>, tensor<256x256xf32, #dist.device<16>>
// TREE-NEXT: %[[G1:.*]]:2 = dist.all_gather %[[X1]]#0, %[[X1]]#1 dim 0 : tensor<256x256xf32, #dist.device<1>>, tensor<256x256xf32, #dist.device<17>>
// TREE-NEXT: %[[F0:.*]]:2 = dist.all_gather %[[G0]]#0, %[[G1]]#0 dim 0 : tensor<512x256xf32, #dist.device<0>>, tensor<512x256xf32, #dist.device<1>>
// TREE-NEXT: %[[F1:.*]]:2 = dist.all_gather %[[G0]]#1, %[[G1]]#1 dim 0 : tensor<512x256xf32, #dist.device<16>>, tensor<512x256xf32, #dist.device<17>>
// TREE-NEXT: return %[[F0]]#0, %[[F0]]#1, %[[F1]]#0, %[[F1]]#1
func.func @f(%a: !t0, %b: !t1, %c: !t16, %d: !t17) -> (!t0, !t1, !t16, !t17) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t16, !t17
  return %r#0, %r#1, %r#2, %r#3 : !t0, !t1, !t16, !t17
}
