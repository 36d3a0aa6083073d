// RUN: distir-opt %s | distir-opt | FileCheck %s
// RUN: distir-opt %s --mlir-print-op-generic | distir-opt | FileCheck %s
// RUN: distir-opt %s --verify-roundtrip > /dev/null

!d0 = tensor<4x8xf32, #dist.device<0>>
!d1 = tensor<4x8xf32, #dist.device<1>>
!d2 = tensor<4x8xf32, #dist.device<2>>

// CHECK-LABEL: func.func @send
// CHECK-SAME: %[[X:[A-Za-z0-9_]*]]: tensor<4x8xf32, #dist.device<0>>
func.func @send(%x: !d0) -> !d1 {
  // CHECK: dist.send %[[X]] : tensor<4x8xf32, #dist.device<0>> -> tensor<4x8xf32, #dist.device<1>>
  %y = dist.send %x : !d0 -> !d1
  return %y : !d1
}

// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%a: !d0, %b: !d1, %c: !d2) -> (!d0, !d1, !d2) {
  // CHECK: %{{.*}}:3 = dist.all_reduce sum %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>, tensor<4x8xf32, #dist.device<2>>
  %r:3 = dist.all_reduce sum %a, %b, %c : !d0, !d1, !d2
  // CHECK: dist.all_reduce prod
  %p:3 = dist.all_reduce prod %a, %b, %c : !d0, !d1, !d2
  // CHECK: dist.all_reduce max
  %m:3 = dist.all_reduce max %a, %b, %c : !d0, !d1, !d2
  // CHECK: dist.all_reduce min
  %n:3 = dist.all_reduce min %a, %b, %c : !d0, !d1, !d2
  // CHECK: dist.all_reduce avg
  %v:3 = dist.all_reduce avg %a, %b, %c : !d0, !d1, !d2
  return %r#0, %r#1, %r#2 : !d0, !d1, !d2
}

// A group of one device is legal (it is what a degree-1 axis produces).
// CHECK-LABEL: func.func @single_device_group
func.func @single_device_group(%a: tensor<4xi32, #dist.device<5>>) -> tensor<4xi32, #dist.device<5>> {
  // CHECK: dist.all_reduce sum %{{.*}} : tensor<4xi32, #dist.device<5>>
  %r = dist.all_reduce sum %a : tensor<4xi32, #dist.device<5>>
  return %r : tensor<4xi32, #dist.device<5>>
}

// CHECK-LABEL: func.func @all_gather
func.func @all_gather(%a: !d0, %b: !d1) -> (tensor<4x16xf32, #dist.device<0>>, tensor<4x16xf32, #dist.device<1>>) {
  // CHECK: %[[G:.*]]:2 = dist.all_gather %{{.*}}, %{{.*}} dim 1 : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
  %g:2 = dist.all_gather %a, %b dim 1 : !d0, !d1
  // CHECK: return %[[G]]#0, %[[G]]#1 : tensor<4x16xf32, #dist.device<0>>, tensor<4x16xf32, #dist.device<1>>
  return %g#0, %g#1 : tensor<4x16xf32, #dist.device<0>>, tensor<4x16xf32, #dist.device<1>>
}

// CHECK-LABEL: func.func @reduce_scatter
func.func @reduce_scatter(%a: !d0, %b: !d1) -> (tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<1>>) {
  // CHECK: %[[R:.*]]:2 = dist.reduce_scatter sum %{{.*}}, %{{.*}} dim 0 : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
  %r:2 = dist.reduce_scatter sum %a, %b dim 0 : !d0, !d1
  // CHECK: return %[[R]]#0, %[[R]]#1 : tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<1>>
  return %r#0, %r#1 : tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<1>>
}

// CHECK-LABEL: func.func @all_to_all
func.func @all_to_all(%a: !d0, %b: !d1) -> (tensor<8x4xf32, #dist.device<0>>, tensor<8x4xf32, #dist.device<1>>) {
  // CHECK: %[[T:.*]]:2 = dist.all_to_all %{{.*}}, %{{.*}} split_dim 1 concat_dim 0 : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
  %t:2 = dist.all_to_all %a, %b split_dim 1 concat_dim 0 : !d0, !d1
  // CHECK: return %[[T]]#0, %[[T]]#1 : tensor<8x4xf32, #dist.device<0>>, tensor<8x4xf32, #dist.device<1>>
  return %t#0, %t#1 : tensor<8x4xf32, #dist.device<0>>, tensor<8x4xf32, #dist.device<1>>
}

// CHECK-LABEL: func.func @broadcast
func.func @broadcast(%x: !d1) -> (!d0, !d1, !d2) {
  // CHECK: dist.broadcast %{{.*}} : tensor<4x8xf32, #dist.device<1>> -> tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>, tensor<4x8xf32, #dist.device<2>>
  %r:3 = dist.broadcast %x : !d1 -> !d0, !d1, !d2
  return %r#0, %r#1, %r#2 : !d0, !d1, !d2
}

// CHECK-LABEL: func.func @scatter
func.func @scatter(%x: !d0) -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>) {
  // CHECK: dist.scatter %{{.*}} dim 1 : tensor<4x8xf32, #dist.device<0>> -> tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
  %r:2 = dist.scatter %x dim 1 : !d0 -> tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
  return %r#0, %r#1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
}

// CHECK-LABEL: func.func @reduce
func.func @reduce(%a: !d0, %b: !d1) -> !d1 {
  // CHECK: dist.reduce min %{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>> -> tensor<4x8xf32, #dist.device<1>>
  %r = dist.reduce min %a, %b : !d0, !d1 -> !d1
  return %r : !d1
}

// CHECK-LABEL: func.func @gather
func.func @gather(%a: !d0, %b: !d1) -> tensor<8x8xf32, #dist.device<0>> {
  // CHECK: dist.gather %{{.*}}, %{{.*}} dim 0 : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>> -> tensor<8x8xf32, #dist.device<0>>
  %r = dist.gather %a, %b dim 0 : !d0, !d1 -> tensor<8x8xf32, #dist.device<0>>
  return %r : tensor<8x8xf32, #dist.device<0>>
}
