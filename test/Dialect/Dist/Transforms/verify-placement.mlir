// RUN: distir-opt %s -split-input-file -verify-diagnostics --dist-verify-placement | FileCheck %s

// A correct two-device program passes and is left unchanged.
!w0 = tensor<16x8xf32, #dist.device<0>>
!w1 = tensor<16x8xf32, #dist.device<1>>
!x0 = tensor<4x16xf32, #dist.device<0>>
!x1 = tensor<4x16xf32, #dist.device<1>>
!y0 = tensor<4x8xf32, #dist.device<0>>
!y1 = tensor<4x8xf32, #dist.device<1>>

// CHECK-LABEL: func.func @data_parallel
func.func @data_parallel(%x0: !x0, %x1: !x1, %w0: !w0, %w1: !w1) -> (!y0, !y1) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : !y0
  %f0 = linalg.fill ins(%c0 : f32) outs(%e0 : !y0) -> !y0
  %y0 = linalg.matmul ins(%x0, %w0 : !x0, !w0) outs(%f0 : !y0) -> !y0
  %e1 = tensor.empty() : !y1
  %f1 = linalg.fill ins(%c0 : f32) outs(%e1 : !y1) -> !y1
  %y1 = linalg.matmul ins(%x1, %w1 : !x1, !w1) outs(%f1 : !y1) -> !y1
  // CHECK: dist.all_reduce sum
  %r:2 = dist.all_reduce sum %y0, %y1 : !y0, !y1
  // Calls and returns may carry values of several devices.
  %c:2 = func.call @identity(%r#0, %r#1) : (!y0, !y1) -> (!y0, !y1)
  return %c#0, %c#1 : !y0, !y1
}

func.func private @identity(%a: !y0, %b: !y1) -> (!y0, !y1) {
  return %a, %b : !y0, !y1
}

// -----

// Ops with SameOperandsAndResultType (arith, math) already reject mixed
// devices through their types; named linalg ops do not.
func.func @mixed_devices(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<1>>, %o: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'linalg.add' op has operand #0 on device 0 and operand #1 on device 1; only dist communication ops may move data between devices}}
  %c = linalg.add ins(%a, %b : tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>>) outs(%o : tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>>
  return %c : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @result_moves(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<2>> {
  // expected-error @+1 {{'tensor.cast' op has operand #0 on device 0 and result #0 on device 2}}
  %c = tensor.cast %a : tensor<4xf32, #dist.device<0>> to tensor<4xf32, #dist.device<2>>
  return %c : tensor<4xf32, #dist.device<2>>
}

// -----

func.func @unplaced_result() {
  // expected-error @+1 {{'tensor.empty' op result #0 of type 'tensor<4xf32>' has no placement; every tensor value needs a #dist.device encoding}}
  %e = tensor.empty() : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{'func.func' op block argument #1 of type 'tensor<4xf32>' has no placement}}
func.func @unplaced_argument(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32>) {
  return
}

// -----

// Region bodies (here linalg.generic's scalar block arguments) are not
// tensors and need no placement; a generic with operands on two devices is
// still rejected.
#id = affine_map<(d0) -> (d0)>
func.func @generic_mixed(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<1>>) -> tensor<4xf32, #dist.device<1>> {
  // expected-error @+1 {{'linalg.generic' op has operand #0 on device 0 and operand #1 on device 1}}
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32, #dist.device<0>>) outs(%b : tensor<4xf32, #dist.device<1>>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32, #dist.device<1>>
  return %r : tensor<4xf32, #dist.device<1>>
}

// -----

// Sizes are int64 byte counts: a type of 2^64 x 16 floats would count as
// 0 bytes in the simulator and 0 elements in the executor.
// expected-error @+1 {{'func.func' op block argument #0 of type 'tensor<4294967296x4294967296x16xf32, #dist.device<0>>' holds more than 2^63 bytes (the limit of every size DistIR counts)}}
func.func @too_large(%a: tensor<4294967296x4294967296x16xf32, #dist.device<0>>) -> tensor<4294967296x4294967296x16xf32, #dist.device<0>> {
  return %a : tensor<4294967296x4294967296x16xf32, #dist.device<0>>
}

// -----

// A large type whose byte count fits (2^30 x (2^29 - 1) f32: 2^61 - 2^32
// bytes) is accepted.
// CHECK-LABEL: func.func @largest
func.func @largest(%a: tensor<1073741824x536870911xf32, #dist.device<0>>) -> tensor<1073741824x536870911xf32, #dist.device<0>> {
  return %a : tensor<1073741824x536870911xf32, #dist.device<0>>
}
