// RUN: distir-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{device id must be non-negative, got -1}}
func.func @negative_device(%a: tensor<4xf32, #dist.device<-1>>) {
  return
}

// -----

func.func @unplaced_operand(%a: tensor<4xf32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor placed on a device (#dist.device encoding)}}
  %r = "dist.send"(%a) : (tensor<4xf32>) -> tensor<4xf32, #dist.device<1>>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32, #dist.device<0>>, %b: tensor<?xf32, #dist.device<1>>) {
  // expected-error @+1 {{operand #0 must be variadic of statically shaped tensor placed on a device}}
  %r:2 = dist.all_reduce sum %a, %b : tensor<?xf32, #dist.device<0>>, tensor<?xf32, #dist.device<1>>
  return
}

// -----

func.func @empty_group() {
  // expected-error @+1 {{'dist.all_reduce' op expects at least one operand}}
  "dist.all_reduce"() <{kind = #dist.reduction<sum>}> : () -> ()
  return
}

// -----

func.func @duplicate_device(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.all_reduce' op has operand #1 on device 0, which operand #0 already occupies; the devices of a group must be distinct}}
  %r:2 = dist.all_reduce sum %a, %b : tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @shape_mismatch(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<8xf32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.all_gather' op expects all operands to have the same shape and element type, but operand #1 is tensor<8xf32> and operand #0 is tensor<4xf32>}}
  %r:2 = dist.all_gather %a, %b dim 0 : tensor<4xf32, #dist.device<0>>, tensor<8xf32, #dist.device<1>>
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf16, #dist.device<1>>) {
  // expected-error @+1 {{operand #1 is tensor<4xf16> and operand #0 is tensor<4xf32>}}
  %r:2 = dist.all_reduce sum %a, %b : tensor<4xf32, #dist.device<0>>, tensor<4xf16, #dist.device<1>>
  return
}

// -----

func.func @unknown_reduction(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{unknown reduction kind 'mean'; expected sum, prod, max, min or avg}}
  %r = dist.all_reduce mean %a : tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @avg_of_integers(%a: tensor<4xi32, #dist.device<0>>, %b: tensor<4xi32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.all_reduce' op reduction 'avg' needs a floating-point element type, got 'i32'}}
  %r:2 = dist.all_reduce avg %a, %b : tensor<4xi32, #dist.device<0>>, tensor<4xi32, #dist.device<1>>
  return
}

// -----

func.func @sum_of_complex(%a: tensor<4xcomplex<f32>, #dist.device<0>>) {
  // expected-error @+1 {{'dist.reduce_scatter' op reduction 'sum' needs an integer or floating-point element type, got 'complex<f32>'}}
  %r = dist.reduce_scatter sum %a dim 0 : tensor<4xcomplex<f32>, #dist.device<0>>
  return
}

// -----

func.func @reduce_of_index(%a: tensor<4xindex, #dist.device<0>>) {
  // expected-error @+1 {{'dist.reduce' op reduction 'max' needs an integer or floating-point element type, got 'index'}}
  %r = dist.reduce max %a : tensor<4xindex, #dist.device<0>> -> tensor<4xindex, #dist.device<0>>
  return
}

// -----

func.func @all_gather_dim_out_of_range(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.all_gather' op dim 1 is out of range for rank 1}}
  %r = dist.all_gather %a dim 1 : tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @all_gather_wrong_result(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<1>>) {
  // Upstream's InferTypeOpInterface verifier reports the mismatch twice.
  // expected-error @+2 {{'dist.all_gather' op failed to infer returned types}}
  // expected-error @+1 {{'dist.all_gather' op inferred type(s) 'tensor<8xf32, #dist.device<0>>', 'tensor<8xf32, #dist.device<1>>' are incompatible with return type(s) of operation 'tensor<4xf32, #dist.device<0>>', 'tensor<4xf32, #dist.device<1>>'}}
  %r:2 = "dist.all_gather"(%a, %b) <{dim = 0 : i64}> : (tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>>) -> (tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>>)
  return
}

// -----

func.func @reduce_scatter_dim_out_of_range(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.reduce_scatter' op dim -1 is out of range for rank 1}}
  %r = dist.reduce_scatter sum %a dim -1 : tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @reduce_scatter_not_divisible(%a: tensor<5xf32, #dist.device<0>>, %b: tensor<5xf32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.reduce_scatter' op dim 0 has size 5, which is not divisible by the group size 2}}
  %r:2 = dist.reduce_scatter sum %a, %b dim 0 : tensor<5xf32, #dist.device<0>>, tensor<5xf32, #dist.device<1>>
  return
}

// -----

func.func @all_to_all_split_out_of_range(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.all_to_all' op split_dim 2 is out of range for rank 1}}
  %r = dist.all_to_all %a split_dim 2 concat_dim 0 : tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @all_to_all_concat_out_of_range(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.all_to_all' op concat_dim 3 is out of range for rank 1}}
  %r = dist.all_to_all %a split_dim 0 concat_dim 3 : tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @all_to_all_not_divisible(%a: tensor<3x4xf32, #dist.device<0>>, %b: tensor<3x4xf32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.all_to_all' op split_dim 0 has size 3, which is not divisible by the group size 2}}
  %r:2 = dist.all_to_all %a, %b split_dim 0 concat_dim 1 : tensor<3x4xf32, #dist.device<0>>, tensor<3x4xf32, #dist.device<1>>
  return
}

// -----

func.func @send_to_self(%a: tensor<4xf32, #dist.device<2>>) {
  // expected-error @+1 {{'dist.send' op sends to its own device 2}}
  %r = dist.send %a : tensor<4xf32, #dist.device<2>> -> tensor<4xf32, #dist.device<2>>
  return
}

// -----

func.func @send_shape_mismatch(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.send' op expects result #0 to be tensor<4xf32>, got tensor<2xf32>}}
  %r = dist.send %a : tensor<4xf32, #dist.device<0>> -> tensor<2xf32, #dist.device<1>>
  return
}

// -----

func.func @broadcast_duplicate_result(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.broadcast' op has result #1 on device 0, which result #0 already occupies}}
  %r:2 = dist.broadcast %a : tensor<4xf32, #dist.device<0>> -> tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @broadcast_no_results(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.broadcast' op expects at least one result}}
  "dist.broadcast"(%a) : (tensor<4xf32, #dist.device<0>>) -> ()
  return
}

// -----

func.func @broadcast_shape_mismatch(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.broadcast' op expects result #1 to be tensor<4xf32>, got tensor<4xf16>}}
  %r:2 = dist.broadcast %a : tensor<4xf32, #dist.device<0>> -> tensor<4xf32, #dist.device<0>>, tensor<4xf16, #dist.device<1>>
  return
}

// -----

func.func @broadcast_root_outside(%a: tensor<4xf32, #dist.device<3>>) {
  // expected-error @+1 {{'dist.broadcast' op root device 3 must be the device of one of the results}}
  %r:2 = dist.broadcast %a : tensor<4xf32, #dist.device<3>> -> tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>>
  return
}

// -----

func.func @scatter_dim_out_of_range(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.scatter' op dim 1 is out of range for rank 1}}
  %r:2 = dist.scatter %a dim 1 : tensor<4xf32, #dist.device<0>> -> tensor<2xf32, #dist.device<0>>, tensor<2xf32, #dist.device<1>>
  return
}

// -----

func.func @scatter_not_divisible(%a: tensor<5xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.scatter' op dim 0 has size 5, which is not divisible by the group size 2}}
  %r:2 = dist.scatter %a dim 0 : tensor<5xf32, #dist.device<0>> -> tensor<2xf32, #dist.device<0>>, tensor<2xf32, #dist.device<1>>
  return
}

// -----

func.func @scatter_wrong_chunk(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.scatter' op expects result #0 to be tensor<2xf32>, got tensor<4xf32>}}
  %r:2 = dist.scatter %a dim 0 : tensor<4xf32, #dist.device<0>> -> tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>>
  return
}

// -----

func.func @scatter_duplicate_result(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.scatter' op has result #1 on device 0, which result #0 already occupies}}
  %r:2 = dist.scatter %a dim 0 : tensor<4xf32, #dist.device<0>> -> tensor<2xf32, #dist.device<0>>, tensor<2xf32, #dist.device<0>>
  return
}

// -----

func.func @scatter_root_outside(%a: tensor<4xf32, #dist.device<7>>) {
  // expected-error @+1 {{'dist.scatter' op root device 7 must be the device of one of the results}}
  %r:2 = dist.scatter %a dim 0 : tensor<4xf32, #dist.device<7>> -> tensor<2xf32, #dist.device<0>>, tensor<2xf32, #dist.device<1>>
  return
}

// -----

func.func @reduce_shape_mismatch(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.reduce' op expects result #0 to be tensor<4xf32>, got tensor<8xf32>}}
  %r = dist.reduce sum %a, %b : tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>> -> tensor<8xf32, #dist.device<0>>
  return
}

// -----

func.func @reduce_root_outside(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.reduce' op root device 2 must be the device of one of the operands}}
  %r = dist.reduce sum %a, %b : tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>> -> tensor<4xf32, #dist.device<2>>
  return
}

// -----

func.func @reduce_operand_mismatch(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xi32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.reduce' op expects all operands to have the same shape and element type}}
  %r = dist.reduce sum %a, %b : tensor<4xf32, #dist.device<0>>, tensor<4xi32, #dist.device<1>> -> tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @gather_dim_out_of_range(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.gather' op dim 4 is out of range for rank 1}}
  %r = dist.gather %a dim 4 : tensor<4xf32, #dist.device<0>> -> tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @gather_wrong_result(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.gather' op expects result #0 to be tensor<8xf32>, got tensor<4xf32>}}
  %r = dist.gather %a, %b dim 0 : tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>> -> tensor<4xf32, #dist.device<0>>
  return
}

// -----

func.func @gather_root_outside(%a: tensor<4xf32, #dist.device<0>>, %b: tensor<4xf32, #dist.device<1>>) {
  // expected-error @+1 {{'dist.gather' op root device 5 must be the device of one of the operands}}
  %r = dist.gather %a, %b dim 0 : tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<1>> -> tensor<8xf32, #dist.device<5>>
  return
}

// -----

func.func @gather_duplicate_operand(%a: tensor<4xf32, #dist.device<0>>) {
  // expected-error @+1 {{'dist.gather' op has operand #1 on device 0, which operand #0 already occupies}}
  %r = dist.gather %a, %a dim 0 : tensor<4xf32, #dist.device<0>>, tensor<4xf32, #dist.device<0>> -> tensor<8xf32, #dist.device<0>>
  return
}
