// On two gcp-a100x16 nodes, an all_reduce across nodes becomes the
// synthesized ReduceScatter (node) ; AllReduce (across nodes, per chunk) ;
// AllGather (node) program, one all_reduce inside a node is kept, and a
// tensor whose dimension 0 does not divide by the group falls back to
// Reduce ; AllReduce among the masters ; Broadcast. The cluster comes from
// the option or from the module's dist.cluster attribute, and the output
// still passes dist-verify-placement. Without verbose there are no remarks.
// RUN: distir-opt %s --dist-synthesize-reductions=cluster=gcp-a100x16:nodes=2 --dist-verify-placement | FileCheck %s
// RUN: distir-opt %s --dist-attach-cluster=cluster=gcp-a100x16:nodes=2 --dist-synthesize-reductions | FileCheck %s
// The wider Master form (every collective) finds the same best programs here.
// RUN: distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16:nodes=2 master-collectives=all" | FileCheck %s
// RUN: distir-opt %s --dist-synthesize-reductions=cluster=gcp-a100x16:nodes=2 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty

// QUIET-NOT: remark

!t0 = tensor<1024x256xf32, #dist.device<0>>
!t1 = tensor<1024x256xf32, #dist.device<1>>
!t2 = tensor<1024x256xf32, #dist.device<2>>
!t3 = tensor<1024x256xf32, #dist.device<3>>
!t16 = tensor<1024x256xf32, #dist.device<16>>
!t17 = tensor<1024x256xf32, #dist.device<17>>

// CHECK-LABEL: func.func @across_nodes
// CHECK-SAME: (%[[A:.*]]: tensor<1024x256xf32, #dist.device<0>>, %[[B:.*]]: tensor<1024x256xf32, #dist.device<1>>, %[[C:.*]]: tensor<1024x256xf32, #dist.device<16>>, %[[D:.*]]: tensor<1024x256xf32, #dist.device<17>>)
// CHECK-NOT: = dist.
// CHECK: %[[RS0:.*]]:2 = dist.reduce_scatter sum %[[A]], %[[B]] dim 0 : tensor<1024x256xf32, #dist.device<0>>, tensor<1024x256xf32, #dist.device<1>>
// CHECK-NEXT: %[[RS1:.*]]:2 = dist.reduce_scatter sum %[[C]], %[[D]] dim 0 : tensor<1024x256xf32, #dist.device<16>>, tensor<1024x256xf32, #dist.device<17>>
// CHECK-NEXT: %[[AR0:.*]]:2 = dist.all_reduce sum %[[RS0]]#0, %[[RS1]]#0 : tensor<512x256xf32, #dist.device<0>>, tensor<512x256xf32, #dist.device<16>>
// CHECK-NEXT: %[[AR1:.*]]:2 = dist.all_reduce sum %[[RS0]]#1, %[[RS1]]#1 : tensor<512x256xf32, #dist.device<1>>, tensor<512x256xf32, #dist.device<17>>
// CHECK-NEXT: %[[AG0:.*]]:2 = dist.all_gather %[[AR0]]#0, %[[AR1]]#0 dim 0 : tensor<512x256xf32, #dist.device<0>>, tensor<512x256xf32, #dist.device<1>>
// CHECK-NEXT: %[[AG1:.*]]:2 = dist.all_gather %[[AR0]]#1, %[[AR1]]#1 dim 0 : tensor<512x256xf32, #dist.device<16>>, tensor<512x256xf32, #dist.device<17>>
// CHECK-NEXT: return %[[AG0]]#0, %[[AG0]]#1, %[[AG1]]#0, %[[AG1]]#1
func.func @across_nodes(%a: !t0, %b: !t1, %c: !t16, %d: !t17) -> (!t0, !t1, !t16, !t17) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t16, !t17
  return %r#0, %r#1, %r#2, %r#3 : !t0, !t1, !t16, !t17
}

// Operands in any order: results stay on the devices of their operands.
// CHECK-LABEL: func.func @shuffled
// CHECK-SAME: (%[[A:.*]]: tensor<1024x256xf32, #dist.device<0>>, %[[B:.*]]: tensor<1024x256xf32, #dist.device<1>>, %[[C:.*]]: tensor<1024x256xf32, #dist.device<16>>, %[[D:.*]]: tensor<1024x256xf32, #dist.device<17>>)
// CHECK: dist.reduce_scatter max %[[A]], %[[B]] dim 0
// CHECK: dist.reduce_scatter max %[[C]], %[[D]] dim 0
// CHECK: dist.all_reduce max
// CHECK: dist.all_reduce max
// CHECK: %[[AG0:.*]]:2 = dist.all_gather {{.*}} : tensor<512x256xf32, #dist.device<0>>, tensor<512x256xf32, #dist.device<1>>
// CHECK: %[[AG1:.*]]:2 = dist.all_gather {{.*}} : tensor<512x256xf32, #dist.device<16>>, tensor<512x256xf32, #dist.device<17>>
// CHECK-NEXT: return %[[AG1]]#1, %[[AG0]]#0, %[[AG1]]#0, %[[AG0]]#1
func.func @shuffled(%a: !t0, %b: !t1, %c: !t16, %d: !t17) -> (!t17, !t0, !t16, !t1) {
  %r:4 = dist.all_reduce max %d, %a, %c, %b : !t17, !t0, !t16, !t1
  return %r#0, %r#1, %r#2, %r#3 : !t17, !t0, !t16, !t1
}

// Inside one node the all_reduce is already the best program.
// CHECK-LABEL: func.func @intra_node
// CHECK-NEXT: %[[R:.*]]:4 = dist.all_reduce sum %arg0, %arg1, %arg2, %arg3 :
// CHECK-NEXT: return %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3
func.func @intra_node(%a: !t0, %b: !t1, %c: !t2, %d: !t3) -> (!t0, !t1, !t2, !t3) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t2, !t3
  return %r#0, %r#1, %r#2, %r#3 : !t0, !t1, !t2, !t3
}

// One GPU on each node: the group spans only the node level.
// CHECK-LABEL: func.func @one_per_node
// CHECK-NEXT: dist.all_reduce sum %arg0, %arg1 :
// CHECK-NEXT: return
func.func @one_per_node(%a: !t0, %c: !t16) -> (!t0, !t16) {
  %r:2 = dist.all_reduce sum %a, %c : !t0, !t16
  return %r#0, %r#1 : !t0, !t16
}

// Three GPUs on one node and one on the other are not a product of
// per-level sets: kept.
// CHECK-LABEL: func.func @irregular
// CHECK-NEXT: dist.all_reduce sum %arg0, %arg1, %arg2, %arg3 :
// CHECK-NEXT: return
func.func @irregular(%a: !t0, %b: !t1, %c: !t2, %d: !t16) -> (!t0, !t1, !t2, !t16) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t2, !t16
  return %r#0, %r#1, %r#2, %r#3 : !t0, !t1, !t2, !t16
}

// 1023 rows do not divide by the 4 devices: programs with reduce_scatter or
// all_gather are skipped, and Reduce ; AllReduce ; Broadcast still wins.
!u0 = tensor<1023x256xf32, #dist.device<0>>
!u1 = tensor<1023x256xf32, #dist.device<1>>
!u16 = tensor<1023x256xf32, #dist.device<16>>
!u17 = tensor<1023x256xf32, #dist.device<17>>
// CHECK-LABEL: func.func @not_divisible
// CHECK-SAME: (%[[A:.*]]: tensor<1023x256xf32, #dist.device<0>>, %[[B:.*]]: tensor<1023x256xf32, #dist.device<1>>, %[[C:.*]]: tensor<1023x256xf32, #dist.device<16>>, %[[D:.*]]: tensor<1023x256xf32, #dist.device<17>>)
// CHECK-NOT: = dist.
// CHECK: %[[R0:.*]] = dist.reduce avg %[[A]], %[[B]] : tensor<1023x256xf32, #dist.device<0>>, tensor<1023x256xf32, #dist.device<1>> -> tensor<1023x256xf32, #dist.device<0>>
// CHECK-NEXT: %[[R1:.*]] = dist.reduce avg %[[C]], %[[D]] : tensor<1023x256xf32, #dist.device<16>>, tensor<1023x256xf32, #dist.device<17>> -> tensor<1023x256xf32, #dist.device<16>>
// CHECK-NEXT: %[[AR:.*]]:2 = dist.all_reduce avg %[[R0]], %[[R1]] : tensor<1023x256xf32, #dist.device<0>>, tensor<1023x256xf32, #dist.device<16>>
// CHECK-NEXT: %[[B0:.*]]:2 = dist.broadcast %[[AR]]#0 : tensor<1023x256xf32, #dist.device<0>> -> tensor<1023x256xf32, #dist.device<0>>, tensor<1023x256xf32, #dist.device<1>>
// CHECK-NEXT: %[[B1:.*]]:2 = dist.broadcast %[[AR]]#1 : tensor<1023x256xf32, #dist.device<16>> -> tensor<1023x256xf32, #dist.device<16>>, tensor<1023x256xf32, #dist.device<17>>
// CHECK-NEXT: return %[[B0]]#0, %[[B0]]#1, %[[B1]]#0, %[[B1]]#1
func.func @not_divisible(%a: !u0, %b: !u1, %c: !u16, %d: !u17) -> (!u0, !u1, !u16, !u17) {
  %r:4 = dist.all_reduce avg %a, %b, %c, %d : !u0, !u1, !u16, !u17
  return %r#0, %r#1, %r#2, %r#3 : !u0, !u1, !u16, !u17
}
