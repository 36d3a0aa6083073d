// RUN: distir-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{'dist.cluster' may only be attached to a module}}
func.func private @f() attributes {dist.cluster = #dist.cluster<name = "c", levels = [#dist.level<name = "node", size = 1, bandwidth = 1.0, latency = 0.0>], device = #dist.device_spec<peak_flops = {f32 = 1.0 : f64}, memory_bandwidth = 1.0, memory_capacity = 1, launch_overhead = 0.0>>}

// -----

// expected-error @+1 {{'dist.cluster' must be a #dist.cluster attribute, got "dgx-h100"}}
module attributes {dist.cluster = "dgx-h100"} {
}

// -----

// expected-error @+1 {{unknown dist dialect attribute 'dist.clusters'}}
module attributes {dist.clusters = 1} {
}

// -----

// The cluster attribute obeys the same rules as JSON files and presets.
// expected-error @+1 {{level 'node': size must be >= 1, got 0}}
module attributes {dist.cluster = #dist.cluster<name = "c", levels = [#dist.level<name = "node", size = 0, bandwidth = 1.0, latency = 0.0>], device = #dist.device_spec<peak_flops = {f32 = 1.0 : f64}, memory_bandwidth = 1.0, memory_capacity = 1, launch_overhead = 0.0>>} {
}

// -----

// expected-error @+1 {{level 'node': link bandwidth must be a positive finite number, got -1}}
module attributes {dist.cluster = #dist.cluster<name = "c", levels = [#dist.level<name = "node", size = 1, bandwidth = -1.0, latency = 0.0>], device = #dist.device_spec<peak_flops = {f32 = 1.0 : f64}, memory_bandwidth = 1.0, memory_capacity = 1, launch_overhead = 0.0>>} {
}

// -----

// expected-error @+1 {{peak_flops entry 'f32' must be a float}}
module attributes {dist.cluster = #dist.cluster<name = "c", levels = [#dist.level<name = "node", size = 1, bandwidth = 1.0, latency = 0.0>], device = #dist.device_spec<peak_flops = {f32 = "fast"}, memory_bandwidth = 1.0, memory_capacity = 1, launch_overhead = 0.0>>} {
}

// -----

// expected-error @+1 {{device has no peak flop/s entries}}
module attributes {dist.cluster = #dist.cluster<name = "c", levels = [#dist.level<name = "node", size = 1, bandwidth = 1.0, latency = 0.0>], device = #dist.device_spec<peak_flops = {}, memory_bandwidth = 1.0, memory_capacity = 1, launch_overhead = 0.0>>} {
}

// -----

// expected-error @+1 {{duplicate level name 'node'}}
module attributes {dist.cluster = #dist.cluster<name = "c", levels = [#dist.level<name = "node", size = 1, bandwidth = 1.0, latency = 0.0>, #dist.level<name = "node", size = 2, bandwidth = 1.0, latency = 0.0>], device = #dist.device_spec<peak_flops = {f32 = 1.0 : f64}, memory_bandwidth = 1.0, memory_capacity = 1, launch_overhead = 0.0>>} {
}

// -----

// expected-error @+1 {{cluster 'c' has no levels}}
module attributes {dist.cluster = #dist.cluster<name = "c", levels = [], device = #dist.device_spec<peak_flops = {f32 = 1.0 : f64}, memory_bandwidth = 1.0, memory_capacity = 1, launch_overhead = 0.0>>} {
}

// -----

// expected-error @+2 {{invalid kind of attribute specified}}
// expected-error @+1 {{failed to parse Dist_ClusterAttr parameter 'levels'}}
module attributes {dist.cluster = #dist.cluster<name = "c", levels = [#dist.device<0>], device = #dist.device_spec<peak_flops = {f32 = 1.0 : f64}, memory_bandwidth = 1.0, memory_capacity = 1, launch_overhead = 0.0>>} {
}

// -----

// expected-error @+2 {{expected integer value}}
// expected-error @+1 {{failed to parse Dist_DeviceAttr parameter 'id' which is to be a `int64_t`}}
func.func private @g() attributes {test.d = #dist.device<first>}

// -----

// expected-error @+2 {{expected ::distir::dist::ReductionKind to be one of: sum, prod, max, min, avg}}
// expected-error @+1 {{failed to parse Dist_ReductionKindAttr parameter 'value'}}
func.func private @h() attributes {test.r = #dist.reduction<mean>}

// -----

// expected-error @+1 {{'dist.batch_dim' of argument #0 must be a non-negative integer, got -1 : i64}}
func.func private @neg_batch(tensor<4xf32, #dist.device<0>> {dist.batch_dim = -1 : i64})

// -----

// expected-error @+1 {{'dist.layer' of argument #0 must be a non-negative integer, got "first"}}
func.func private @bad_layer(tensor<4xf32, #dist.device<0>> {dist.layer = "first"})

// -----

// expected-error @+1 {{'dist.name' of argument #0 must be a string, got 3 : i64}}
func.func private @bad_name(tensor<4xf32, #dist.device<0>> {dist.name = 3})

// -----

// expected-error @+1 {{'dist.frozen' of argument #0 must be a unit attribute, got true}}
func.func private @bad_frozen(tensor<4xf32, #dist.device<0>> {dist.frozen = true})

// -----

// expected-error @+1 {{'dist.optimizer_state' of argument #0 must be a unit attribute, got 1 : i64}}
func.func private @bad_state(tensor<4xf32, #dist.device<0>> {dist.optimizer_state = 1})

// -----

// expected-error @+1 {{unknown dist argument attribute 'dist.batch'}}
func.func private @unknown(tensor<4xf32, #dist.device<0>> {dist.batch = 0})

// -----

func.func @bad_op_layer(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.layer' must be a non-negative integer, got -2 : i64}}
  %b = arith.addf %a, %a {dist.layer = -2 : i64} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @bad_vjp_id(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.vjp_id' must be a non-negative integer, got "x"}}
  %b = arith.addf %a, %a {dist.vjp_id = "x"} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @bad_vjp_of(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.vjp_of' must be a non-negative integer, got -1 : i64}}
  %b = arith.addf %a, %a {dist.vjp_of = -1 : i64} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @unsigned_vjp_of(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.vjp_of' must be a non-negative integer, got 3 : ui32}}
  %b = arith.addf %a, %a {dist.vjp_of = 3 : ui32} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @wide_layer(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.layer' must be a non-negative integer, got 1 : i128}}
  %b = arith.addf %a, %a {dist.layer = 1 : i128} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @bad_phase(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.phase' must be "forward", "backward" or "update", got "sideways"}}
  %b = arith.addf %a, %a {dist.phase = "sideways"} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @bad_task(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.task' must be a string, got 1 : i64}}
  %b = arith.addf %a, %a {dist.task = 1} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @receive_not_on_send(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.receive' must be a unit attribute on a dist.send or dist.broadcast}}
  %b = arith.addf %a, %a {dist.receive} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @receive_not_unit(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<1>> {
  // expected-error @+1 {{'dist.receive' must be a unit attribute on a dist.send or dist.broadcast}}
  %b = dist.send %a {dist.receive = 1} : tensor<4xf32, #dist.device<0>> -> tensor<4xf32, #dist.device<1>>
  return %b : tensor<4xf32, #dist.device<1>>
}

// -----

func.func @gradient_buffer_not_empty(%a: tensor<4xf32, #dist.device<0>>) -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.gradient_buffer' must be a unit attribute on a tensor.empty}}
  %b = arith.addf %a, %a {dist.gradient_buffer} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}

// -----

func.func @gradient_buffer_not_unit() -> tensor<4xf32, #dist.device<0>> {
  // expected-error @+1 {{'dist.gradient_buffer' must be a unit attribute on a tensor.empty}}
  %b = tensor.empty() {dist.gradient_buffer = "yes"} : tensor<4xf32, #dist.device<0>>
  return %b : tensor<4xf32, #dist.device<0>>
}
