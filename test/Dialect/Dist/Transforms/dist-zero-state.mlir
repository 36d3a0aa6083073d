// ZeRO partitions optimizer state: the momentum (or Adam moments) an
// element-wise update reads become chunk arguments of the step, the
// updated state chunk results (stage 1 already, as DeepSpeed's ZeRO-1);
// scalars every point reads (a step count) stay whole.
// RUN: distir-opt %s --dist-zero=stage=1 --dist-verify-placement | FileCheck %s
// RUN: distir-opt %s --dist-zero=stage=3 --dist-verify-placement | FileCheck %s --check-prefix=S3

// CHECK-LABEL: func.func @step
// CHECK-SAME: %arg4: tensor<2x4xf32, #dist.device<0>> {dist.optimizer_state}, %arg5: tensor<2x4xf32, #dist.device<1>> {dist.optimizer_state}
// CHECK-SAME: %arg6: tensor<f32, #dist.device<0>> {dist.optimizer_state}
// CHECK-SAME: -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x4xf32, #dist.device<1>>, tensor<2x4xf32, #dist.device<0>>, tensor<2x4xf32, #dist.device<1>>)
// CHECK: dist.reduce_scatter sum %arg2, %arg3 dim 0
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %arg4, %arg6 : tensor<2x4xf32, #dist.device<0>>, tensor<2x4xf32, #dist.device<0>>, tensor<2x4xf32, #dist.device<0>>, tensor<f32, #dist.device<0>>)
// CHECK: dist.all_gather
// CHECK: return

// S3-LABEL: func.func @step
// S3-SAME: %arg0: tensor<2x4xf32, #dist.device<0>>
// S3-SAME: %arg4: tensor<2x4xf32, #dist.device<0>> {dist.optimizer_state}
// S3-SAME: -> (tensor<2x4xf32, #dist.device<0>>, tensor<2x4xf32, #dist.device<1>>, tensor<2x4xf32, #dist.device<0>>, tensor<2x4xf32, #dist.device<1>>)
// S3-NOT: dist.all_gather
// S3: return

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
