// RUN: distir-opt --dist-to-rank='keep-global=false strip-placement=true' %s | FileCheck %s

// One function per communication kind. Each program has as many ranks as
// its largest device id plus one; a rank outside a group gets no op.

!a0 = tensor<6x4xf32, #dist.device<0>>
!a1 = tensor<6x4xf32, #dist.device<1>>
!a2 = tensor<6x4xf32, #dist.device<2>>

// CHECK-LABEL: func.func @all_reduce_rank0(%{{.*}}: tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK: dist_rank.all_reduce #dist.reduction<max> %{{.*}} group [0, 1, 2] : tensor<6x4xf32> -> tensor<6x4xf32>
// CHECK-LABEL: func.func @all_reduce_rank2(
// CHECK: dist_rank.all_reduce #dist.reduction<max> %{{.*}} group [0, 1, 2]
func.func @all_reduce(%a: !a0, %b: !a1, %c: !a2) -> (!a0, !a1, !a2) {
  %r:3 = dist.all_reduce max %a, %b, %c : !a0, !a1, !a2
  return %r#0, %r#1, %r#2 : !a0, !a1, !a2
}

// CHECK-LABEL: func.func @all_gather_rank1(
// CHECK: dist_rank.all_gather %{{.*}} group [2, 1, 0] dim 1 : tensor<6x4xf32> -> tensor<6x12xf32>
func.func @all_gather(%a: !a2, %b: !a1, %c: !a0)
    -> (tensor<6x12xf32, #dist.device<2>>, tensor<6x12xf32, #dist.device<1>>,
        tensor<6x12xf32, #dist.device<0>>) {
  %r:3 = dist.all_gather %a, %b, %c dim 1 : !a2, !a1, !a0
  return %r#0, %r#1, %r#2 : tensor<6x12xf32, #dist.device<2>>,
      tensor<6x12xf32, #dist.device<1>>, tensor<6x12xf32, #dist.device<0>>
}

// CHECK-LABEL: func.func @reduce_scatter_rank0(
// CHECK: dist_rank.reduce_scatter #dist.reduction<sum> %{{.*}} group [0, 1, 2] dim 0 : tensor<6x4xf32> -> tensor<2x4xf32>
func.func @reduce_scatter(%a: !a0, %b: !a1, %c: !a2)
    -> (tensor<2x4xf32, #dist.device<0>>, tensor<2x4xf32, #dist.device<1>>,
        tensor<2x4xf32, #dist.device<2>>) {
  %r:3 = dist.reduce_scatter sum %a, %b, %c dim 0 : !a0, !a1, !a2
  return %r#0, %r#1, %r#2 : tensor<2x4xf32, #dist.device<0>>,
      tensor<2x4xf32, #dist.device<1>>, tensor<2x4xf32, #dist.device<2>>
}

// CHECK-LABEL: func.func @all_to_all_rank2(
// CHECK: dist_rank.all_to_all %{{.*}} group [0, 1, 2] split_dim 0 concat_dim 1 : tensor<6x4xf32> -> tensor<2x12xf32>
func.func @all_to_all(%a: !a0, %b: !a1, %c: !a2)
    -> (tensor<2x12xf32, #dist.device<0>>, tensor<2x12xf32, #dist.device<1>>,
        tensor<2x12xf32, #dist.device<2>>) {
  %r:3 = dist.all_to_all %a, %b, %c split_dim 0 concat_dim 1 : !a0, !a1, !a2
  return %r#0, %r#1, %r#2 : tensor<2x12xf32, #dist.device<0>>,
      tensor<2x12xf32, #dist.device<1>>, tensor<2x12xf32, #dist.device<2>>
}

// CHECK-LABEL: func.func @broadcast_rank0() -> tensor<6x4xf32>
// CHECK: dist_rank.broadcast root 1 group [0, 1] : tensor<6x4xf32>
// CHECK-LABEL: func.func @broadcast_rank1(
// CHECK-SAME: %[[X:.*]]: tensor<6x4xf32>
// CHECK: dist_rank.broadcast root 1 group [0, 1] value %[[X]] : tensor<6x4xf32> : tensor<6x4xf32>
// CHECK-NOT: func.func @broadcast_rank2
func.func @broadcast(%x: !a1) -> (!a0, !a1) {
  %r:2 = dist.broadcast %x : !a1 -> !a0, !a1
  return %r#0, %r#1 : !a0, !a1
}

// CHECK-LABEL: func.func @scatter_rank0(
// CHECK: dist_rank.scatter root 0 group [0, 1] dim 0 value %{{.*}} : tensor<6x4xf32> : tensor<3x4xf32>
// CHECK-LABEL: func.func @scatter_rank1()
// CHECK: dist_rank.scatter root 0 group [0, 1] dim 0 : tensor<3x4xf32>
func.func @scatter(%x: !a0) -> (tensor<3x4xf32, #dist.device<0>>, tensor<3x4xf32, #dist.device<1>>) {
  %r:2 = dist.scatter %x dim 0 : !a0 -> tensor<3x4xf32, #dist.device<0>>, tensor<3x4xf32, #dist.device<1>>
  return %r#0, %r#1 : tensor<3x4xf32, #dist.device<0>>, tensor<3x4xf32, #dist.device<1>>
}

// CHECK-LABEL: func.func @reduce_rank0(
// CHECK: dist_rank.reduce #dist.reduction<sum> %{{.*}} root 2 group [0, 2] : tensor<6x4xf32>{{$}}
// CHECK-LABEL: func.func @reduce_rank1()
// CHECK-NEXT: return
// CHECK-LABEL: func.func @reduce_rank2(
// CHECK: dist_rank.reduce #dist.reduction<sum> %{{.*}} root 2 group [0, 2] : tensor<6x4xf32> -> tensor<6x4xf32>
func.func @reduce(%a: !a0, %c: !a2) -> !a2 {
  %r = dist.reduce sum %a, %c : !a0, !a2 -> !a2
  return %r : !a2
}

// CHECK-LABEL: func.func @gather_rank0(
// CHECK: dist_rank.gather %{{.*}} root 0 group [0, 1] dim 0 : tensor<6x4xf32> -> tensor<12x4xf32>
// CHECK-LABEL: func.func @gather_rank1(
// CHECK: dist_rank.gather %{{.*}} root 0 group [0, 1] dim 0 : tensor<6x4xf32>{{$}}
func.func @gather(%a: !a0, %b: !a1) -> tensor<12x4xf32, #dist.device<0>> {
  %r = dist.gather %a, %b dim 0 : !a0, !a1 -> tensor<12x4xf32, #dist.device<0>>
  return %r : tensor<12x4xf32, #dist.device<0>>
}

// CHECK-LABEL: func.func @send_rank0(
// CHECK: dist_rank.send %{{.*}} to 2 tag 0
// CHECK-LABEL: func.func @send_rank1()
// CHECK-NEXT: return
// CHECK-LABEL: func.func @send_rank2()
// CHECK: dist_rank.recv from 0 tag 0 : tensor<6x4xf32>
func.func @send(%a: !a0) -> !a2 {
  %r = dist.send %a : !a0 -> !a2
  return %r : !a2
}
