// RUN: distir-opt %s | distir-opt | FileCheck %s
// RUN: distir-opt %s --mlir-print-op-generic | distir-opt | FileCheck %s
// RUN: distir-opt %s --verify-roundtrip > /dev/null

// dist.reshard round-trips: rows of a 4x4 tensor on devices 0 and 1 become
// columns on devices 2 and 3; an uneven split (5 rows over 2 shards: 2 and
// 3) to a replicated copy on two devices.

!r0 = tensor<2x4xf32, #dist.device<0>>
!r1 = tensor<2x4xf32, #dist.device<1>>
!c2 = tensor<4x2xf32, #dist.device<2>>
!c3 = tensor<4x2xf32, #dist.device<3>>

// CHECK-LABEL: func.func @rows_to_columns
// CHECK: dist.reshard %{{.*}}, %{{.*}} shape [4, 4] from <mesh = <shape = [2]>, split = {{\[\[}}0]]> to <mesh = <shape = [2], devices = [2, 3]>, split = {{\[\[}}], [0]]> : tensor<2x4xf32, #dist.device<0>>, tensor<2x4xf32, #dist.device<1>> -> tensor<4x2xf32, #dist.device<2>>, tensor<4x2xf32, #dist.device<3>>
func.func @rows_to_columns(%a: !r0, %b: !r1) -> (!c2, !c3) {
  %r:2 = dist.reshard %a, %b shape [4, 4]
      from <mesh = <shape = [2]>, split = [[0]]>
      to <mesh = <shape = [2], devices = [2, 3]>, split = [[], [0]]>
      : !r0, !r1 -> !c2, !c3
  return %r#0, %r#1 : !c2, !c3
}

// CHECK-LABEL: func.func @uneven_to_replicated
// CHECK: dist.reshard {{.*}} shape [5, 3]
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
