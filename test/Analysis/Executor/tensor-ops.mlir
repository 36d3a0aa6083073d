// Tensor ops: slices, concat, pad, reshapes, element access.
// RUN: %python %S/Inputs/npcheck.py tensor %s %t | FileCheck %s
// CHECK: tensor: ok (7 outputs)

!x = tensor<4x6xf32, #dist.device<1>>
!y = tensor<2x6xf32, #dist.device<1>>

func.func @tensor_ops(%x: !x, %y: !y)
    -> (tensor<2x3xf32, #dist.device<1>>, !x, tensor<6x6xf32, #dist.device<1>>,
        tensor<6x8xf32, #dist.device<1>>, tensor<2x2x6xf32, #dist.device<1>>,
        tensor<24xf32, #dist.device<1>>, tensor<2xf32, #dist.device<1>>) {
  %s = tensor.extract_slice %x[1, 2] [2, 3] [1, 1] : !x to tensor<2x3xf32, #dist.device<1>>
  %i = tensor.insert_slice %y into %x[1, 0] [2, 6] [1, 1] : !y into !x
  %c = tensor.concat dim(0) %x, %y : (!x, !y) -> tensor<6x6xf32, #dist.device<1>>
  %seven = arith.constant 7.0 : f32
  %p = tensor.pad %x low[1, 2] high[1, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %seven : f32
  } : !x to tensor<6x8xf32, #dist.device<1>>
  %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 2, 6] : !x into tensor<2x2x6xf32, #dist.device<1>>
  %f = tensor.collapse_shape %x [[0, 1]] : !x into tensor<24xf32, #dist.device<1>>
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %v1 = tensor.extract %x[%c3, %c5] : !x
  %v2 = tensor.extract %x[%c0, %c0] : !x
  %fe = tensor.from_elements %v1, %v2 : tensor<2xf32, #dist.device<1>>
  return %s, %i, %c, %p, %e, %f, %fe : tensor<2x3xf32, #dist.device<1>>, !x, tensor<6x6xf32, #dist.device<1>>, tensor<6x8xf32, #dist.device<1>>, tensor<2x2x6xf32, #dist.device<1>>, tensor<24xf32, #dist.device<1>>, tensor<2xf32, #dist.device<1>>
}
