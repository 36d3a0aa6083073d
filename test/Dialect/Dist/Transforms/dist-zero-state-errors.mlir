// dist-zero's errors on updates with optimizer state: one each, on the
// update.
// RUN: distir-opt %s --split-input-file --verify-diagnostics --dist-zero=stage=1

#id = affine_map<(d0, d1) -> (d0, d1)>
#sc = affine_map<(d0, d1) -> ()>
func.func @step(%w0: tensor<4x4xf32, #dist.device<0>>, %w1: tensor<4x4xf32, #dist.device<1>>,
                %g0: tensor<4x4xf32, #dist.device<0>>, %g1: tensor<4x4xf32, #dist.device<1>>,
                %m0: tensor<4x4xf32, #dist.device<0>> {dist.optimizer_state},
                %m1: tensor<4x4xf32, #dist.device<1>> {dist.optimizer_state},
                %s0: tensor<f32, #dist.device<0>> {dist.optimizer_state},
                %s1: tensor<f32, #dist.device<1>> {dist.optimizer_state})
    -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>,
        tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>,
        tensor<4x4xf32, #dist.device<0>>) {
  %r:2 = dist.all_reduce sum %g0, %g1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
  %a0 = tensor.empty() : tensor<4x4xf32, #dist.device<0>>
  %b0 = tensor.empty() : tensor<4x4xf32, #dist.device<0>>
  // expected-error @+1 {{dist-zero: optimizer state argument #4 is read by more than its update, so it cannot be partitioned}}
  %u0:2 = linalg.generic {indexing_maps = [#id, #id, #id, #sc, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w0, %r#0, %m0, %s0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>, tensor<f32, #dist.device<0>>)
      outs(%a0, %b0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>) {
  ^bb0(%w: f32, %g: f32, %m: f32, %s: f32, %o0: f32, %o1: f32):
    %mm = arith.mulf %m, %s : f32
    %nm = arith.addf %mm, %g : f32
    %nw = arith.subf %w, %nm : f32
    linalg.yield %nw, %nm : f32, f32
  } -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>)
  %a1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  %b1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  %u1:2 = linalg.generic {indexing_maps = [#id, #id, #id, #sc, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %r#1, %m1, %s1 : tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>, tensor<f32, #dist.device<1>>)
      outs(%a1, %b1 : tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>) {
  ^bb0(%w: f32, %g: f32, %m: f32, %s: f32, %o0: f32, %o1: f32):
    %mm = arith.mulf %m, %s : f32
    %nm = arith.addf %mm, %g : f32
    %nw = arith.subf %w, %nm : f32
    linalg.yield %nw, %nm : f32, f32
  } -> (tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>)
  return %u0#0, %u1#0, %u0#1, %u1#1, %m0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<0>>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#sc = affine_map<(d0, d1) -> ()>
func.func @step(%w0: tensor<4x4xf32, #dist.device<0>>, %w1: tensor<4x4xf32, #dist.device<1>>,
                %g0: tensor<4x4xf32, #dist.device<0>>, %g1: tensor<4x4xf32, #dist.device<1>>,
                %m0: tensor<4x4xf32, #dist.device<0>> {dist.optimizer_state},
                %m1: tensor<4x4xf32, #dist.device<1>> {dist.optimizer_state},
                %s0: tensor<f32, #dist.device<0>> {dist.optimizer_state},
                %s1: tensor<f32, #dist.device<1>> {dist.optimizer_state})
    -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>,
        tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>,
        tensor<4x4xf32, #dist.device<0>>) {
  %r:2 = dist.all_reduce sum %g0, %g1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
  %a0 = tensor.empty() : tensor<4x4xf32, #dist.device<0>>
  %b0 = tensor.empty() : tensor<4x4xf32, #dist.device<0>>
  // expected-error @+1 {{dist-zero: updated optimizer state (result #1) must be returned once and not used otherwise}}
  %u0:2 = linalg.generic {indexing_maps = [#id, #id, #id, #sc, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w0, %r#0, %m0, %s0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>, tensor<f32, #dist.device<0>>)
      outs(%a0, %b0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>) {
  ^bb0(%w: f32, %g: f32, %m: f32, %s: f32, %o0: f32, %o1: f32):
    %mm = arith.mulf %m, %s : f32
    %nm = arith.addf %mm, %g : f32
    %nw = arith.subf %w, %nm : f32
    linalg.yield %nw, %nm : f32, f32
  } -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>)
  %a1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  %b1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  %u1:2 = linalg.generic {indexing_maps = [#id, #id, #id, #sc, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %r#1, %m1, %s1 : tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>, tensor<f32, #dist.device<1>>)
      outs(%a1, %b1 : tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>) {
  ^bb0(%w: f32, %g: f32, %m: f32, %s: f32, %o0: f32, %o1: f32):
    %mm = arith.mulf %m, %s : f32
    %nm = arith.addf %mm, %g : f32
    %nw = arith.subf %w, %nm : f32
    linalg.yield %nw, %nm : f32, f32
  } -> (tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>)
  return %u0#0, %u1#0, %u0#1, %u1#1, %u0#1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<0>>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#sc = affine_map<(d0, d1) -> ()>
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @step(%w0: tensor<4x4xf32, #dist.device<0>>, %w1: tensor<4x4xf32, #dist.device<1>>,
                %g0: tensor<4x4xf32, #dist.device<0>>, %g1: tensor<4x4xf32, #dist.device<1>>,
                %m0: tensor<4x4xf32, #dist.device<0>> {dist.optimizer_state},
                %m1: tensor<4x4xf32, #dist.device<1>> {dist.optimizer_state},
                %s0: tensor<f32, #dist.device<0>> {dist.optimizer_state},
                %s1: tensor<f32, #dist.device<1>> {dist.optimizer_state})
    -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>,
        tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>) {
  %r:2 = dist.all_reduce sum %g0, %g1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
  %a0 = tensor.empty() : tensor<4x4xf32, #dist.device<0>>
  %b0 = tensor.empty() : tensor<4x4xf32, #dist.device<0>>
  // expected-error @+1 {{dist-zero: the weight update is not element-wise}}
  %u0:2 = linalg.generic {indexing_maps = [#id, #id, #tr, #sc, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w0, %r#0, %m0, %s0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>, tensor<f32, #dist.device<0>>)
      outs(%a0, %b0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>) {
  ^bb0(%w: f32, %g: f32, %m: f32, %s: f32, %o0: f32, %o1: f32):
    %mm = arith.mulf %m, %s : f32
    %nm = arith.addf %mm, %g : f32
    %nw = arith.subf %w, %nm : f32
    linalg.yield %nw, %nm : f32, f32
  } -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>)
  %a1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  %b1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  %u1:2 = linalg.generic {indexing_maps = [#id, #id, #id, #sc, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %r#1, %m1, %s1 : tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>, tensor<f32, #dist.device<1>>)
      outs(%a1, %b1 : tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>) {
  ^bb0(%w: f32, %g: f32, %m: f32, %s: f32, %o0: f32, %o1: f32):
    %mm = arith.mulf %m, %s : f32
    %nm = arith.addf %mm, %g : f32
    %nw = arith.subf %w, %nm : f32
    linalg.yield %nw, %nm : f32, f32
  } -> (tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>)
  return %u0#0, %u1#0, %u0#1, %u1#1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#sc = affine_map<(d0, d1) -> ()>
func.func @step(%w0: tensor<4x4xf32, #dist.device<0>>, %w1: tensor<4x4xf32, #dist.device<1>>,
                %g0: tensor<4x4xf32, #dist.device<0>>, %g1: tensor<4x4xf32, #dist.device<1>>,
                %m0: tensor<4x4xf32, #dist.device<0>> {dist.optimizer_state},
                %m1: tensor<4x4xf32, #dist.device<1>> {dist.optimizer_state},
                %s0: tensor<f32, #dist.device<0>> {dist.optimizer_state},
                %s1: tensor<f32, #dist.device<1>> {dist.optimizer_state})
    -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>,
        tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>) {
  %r:2 = dist.all_reduce sum %g0, %g1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
  %a0 = tensor.empty() : tensor<4x4xf32, #dist.device<0>>
  %b0 = tensor.empty() : tensor<4x4xf32, #dist.device<0>>
  %u0:2 = linalg.generic {indexing_maps = [#id, #id, #id, #sc, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w0, %r#0, %m0, %s0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>, tensor<f32, #dist.device<0>>)
      outs(%a0, %b0 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>) {
  ^bb0(%w: f32, %g: f32, %m: f32, %s: f32, %o0: f32, %o1: f32):
    %mm = arith.mulf %m, %s : f32
    %nm = arith.addf %mm, %g : f32
    %nw = arith.subf %w, %nm : f32
    linalg.yield %nw, %nm : f32, f32
  } -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<0>>)
  %a1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  %b1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  // expected-error @+1 {{dist-zero: the replicas' updates of this all-reduce have different numbers of results}}
  %u1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %r#1 : tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<1>>)
      outs(%a1 : tensor<4x4xf32, #dist.device<1>>) {
  ^bb0(%w: f32, %g: f32, %o0: f32):
    %nw = arith.subf %w, %g : f32
    linalg.yield %nw : f32
  } -> tensor<4x4xf32, #dist.device<1>>
  return %u0#0, %u1, %u0#1, %m1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>, tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>
}
