// RUN: distir-opt --dist-autodiff=optimizer=momentum %s | FileCheck %s
// RUN: distir-opt --dist-autodiff='loss=cross-entropy optimizer=adamw lr=0.001 weight-decay=0.1' %s | FileCheck %s --check-prefix=ADAMW
// RUN: distir-opt --dist-autodiff='frozen=b' %s | FileCheck %s --check-prefix=FROZEN
// RUN: distir-opt --dist-autodiff='compute=bf16 optimizer=adam' %s | FileCheck %s --check-prefix=BF16

// A linear layer with tanh, as the ONNX importer writes it: input x, then
// the weights.
!x = tensor<4x8xf32, #dist.device<0>>
!w = tensor<8x2xf32, #dist.device<0>>
!b = tensor<2xf32, #dist.device<0>>
!y = tensor<4x2xf32, #dist.device<0>>
func.func @main(%x: !x {dist.batch_dim = 0 : i64, dist.name = "x"},
                %w: !w {dist.name = "w"}, %b: !b {dist.name = "b"}) -> !y {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !y
  %init = linalg.fill ins(%zero : f32) outs(%e : !y) -> !y
  %mm = linalg.matmul ins(%x, %w : !x, !w) outs(%init : !y) -> !y
  %e2 = tensor.empty() : !y
  %out = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : !y, !b) outs(%e2 : !y) {
  ^bb0(%m: f32, %bias: f32, %o: f32):
    %s = arith.addf %m, %bias : f32
    %r = math.tanh %s : f32
    linalg.yield %r : f32
  } -> !y
  return %out : !y
}

// The step's signature: inputs, target, weights, state; results: loss,
// weights, state, each with its name.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: {dist.batch_dim = 0 : i64, dist.name = "x"}
// CHECK-SAME: %[[T:.*]]: tensor<4x2xf32, #dist.device<0>> {dist.batch_dim = 0 : i64, dist.name = "target"}
// CHECK-SAME: %[[W:.*]]: tensor<8x2xf32, #dist.device<0>> {dist.name = "w"}
// CHECK-SAME: %[[B:.*]]: tensor<2xf32, #dist.device<0>> {dist.name = "b"}
// CHECK-SAME: %[[WM:.*]]: tensor<8x2xf32, #dist.device<0>> {dist.name = "w.m", dist.optimizer_state}
// CHECK-SAME: %[[BM:.*]]: tensor<2xf32, #dist.device<0>> {dist.name = "b.m", dist.optimizer_state})
// CHECK-SAME: -> (tensor<f32, #dist.device<0>> {dist.name = "loss"}, tensor<8x2xf32, #dist.device<0>> {dist.name = "w"}, tensor<2xf32, #dist.device<0>> {dist.name = "b"}, tensor<8x2xf32, #dist.device<0>> {dist.name = "w.m"}, tensor<2xf32, #dist.device<0>> {dist.name = "b.m"})
// The forward ops are tagged forward, layer 0 (the program has no layers),
// and each differentiated one with the id its adjoint's ops refer to.
// CHECK: linalg.matmul {dist.layer = 0 : i64, dist.phase = "forward", dist.vjp_id = [[MM:[0-9]+]] : i64}
// MSE: a sum of squares over every element, scaled by 1/8.
// CHECK: iterator_types = ["reduction", "reduction"]} ins(%{{.*}}, %[[T]] :
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: %[[LOSS:.*]] = linalg.generic
// CHECK: arith.constant 1.250000e-01 : f32
// Backward of tanh(mm + b): the pre-activation's adjoint reads dy and the
// forward inputs; the bias's adjoint reduces over the batch loop.
// CHECK: %[[DY:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%{{.*}}, %{{.*}}, %[[T]] :
// CHECK-SAME: dist.phase = "backward"
// CHECK: %[[DZ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[DY]], 
// CHECK: math.tanh
// CHECK: %[[DB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: outs(%{{.*}} : tensor<2xf32, #dist.device<0>>)
// dW = x^T dz as a named matmul; x (an input) gets no adjoint.
// CHECK: %[[XT:.*]] = linalg.transpose ins(%arg0
// CHECK: %[[DW:.*]] = linalg.matmul {dist.layer = 0 : i64, dist.phase = "backward", dist.vjp_of = [[MM]] : i64} ins(%[[XT]], %[[DZ]] :
// CHECK-NOT: linalg.matmul
// Momentum: one update per weight, yielding the weight and its buffer.
// CHECK: %[[UW:.*]]:2 = linalg.generic {{.*}} ins(%[[W]], %[[DW]], %[[WM]] :
// CHECK-SAME: dist.phase = "update"
// CHECK: %[[UB:.*]]:2 = linalg.generic {{.*}} ins(%[[B]], %[[DB]], %[[BM]] :
// CHECK: return %[[LOSS]], %[[UW]]#0, %[[UB]]#0, %[[UW]]#1, %[[UB]]#1

// Cross-entropy targets are class indices; AdamW keeps two moments per
// weight and a step count, and decays the weight before the step.
// ADAMW-LABEL: func.func @main(
// ADAMW-SAME: tensor<4xi64, #dist.device<0>> {dist.batch_dim = 0 : i64, dist.name = "target"}
// ADAMW-SAME: {dist.name = "w.m", dist.optimizer_state}, %{{.*}}: tensor<8x2xf32, #dist.device<0>> {dist.name = "w.v", dist.optimizer_state}
// ADAMW-SAME: %[[STEP:[a-z0-9]+]]: tensor<f32, #dist.device<0>> {dist.name = "step", dist.optimizer_state})
// Log-sum-exp with the row maximum, the logit of the target class.
// ADAMW: arith.maximumf
// ADAMW: math.exp
// ADAMW: linalg.index 1
// ADAMW: arith.cmpi eq
// ADAMW: %{{.*}}:3 = linalg.generic {{.*}} ins({{.*}}, %[[STEP]] :
// 1 - lr * wd
// ADAMW: arith.constant 0.999899983 : f32
// ADAMW: math.powf
// ADAMW: math.sqrt
// ADAMW: linalg.generic {{.*}} ins(%[[STEP]] :
// ADAMW: dist.phase = "update"

// A frozen weight gets no gradient, no update and is not returned.
// FROZEN-LABEL: func.func @main(
// FROZEN-SAME: {dist.name = "b"})
// FROZEN-SAME: -> (tensor<f32, #dist.device<0>> {dist.name = "loss"}, tensor<8x2xf32, #dist.device<0>> {dist.name = "w"})
// FROZEN-COUNT-1: dist.phase = "update"

// Mixed precision: fp32 master weights and state in the signature, a bf16
// copy of each f32 argument, bf16 compute, the output widened for the loss,
// and each update widening its bf16 gradient.
// BF16-LABEL: func.func @main(
// BF16-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32, #dist.device<0>> {dist.batch_dim = 0 : i64, dist.name = "x"}
// BF16-SAME: %[[W:[a-z0-9]+]]: tensor<8x2xf32, #dist.device<0>> {dist.name = "w"}
// BF16-SAME: tensor<8x2xf32, #dist.device<0>> {dist.name = "w.m", dist.optimizer_state}
// BF16-SAME: -> (tensor<f32, #dist.device<0>> {dist.name = "loss"}, tensor<8x2xf32, #dist.device<0>> {dist.name = "w"}
// BF16: %[[W16:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<8x2xf32, #dist.device<0>>) outs(%{{.*}} : tensor<8x2xbf16, #dist.device<0>>)
// BF16: arith.truncf %{{.*}} : f32 to bf16
// BF16: linalg.matmul {{.*}} ins(%{{.*}}, %[[W16]] : tensor<4x8xbf16, #dist.device<0>>, tensor<8x2xbf16, #dist.device<0>>)
// BF16: math.tanh %{{.*}} : bf16
// BF16: arith.extf %{{.*}} : bf16 to f32
// BF16: %[[DW:.*]] = linalg.matmul {{.*}} -> tensor<8x2xbf16, #dist.device<0>>
// BF16: linalg.generic {{.*}} ins(%[[W]], %[[DW]], {{.*}} : tensor<8x2xf32, #dist.device<0>>, tensor<8x2xbf16, #dist.device<0>>
// BF16: arith.extf %{{.*}} : bf16 to f32
// BF16: dist.phase = "update"

// Matmul adjoints. For y = h W2^T, W2's gradient is dy^T h, computed in
// W2's layout (one buffer accumulates it over microbatches, no transpose
// of a gradient) and h's is dy W2 (no transpose of the weight). For
// h = x W1, dW1 = x^T dh. Each transpose has a location of its own: the
// search tells a weight's transpose, shared by every microbatch, from an
// activation's by location and type.
// RUN: distir-opt --dist-autodiff %S/Inputs/autodiff-linear.mlir --mlir-print-debuginfo | FileCheck %s --check-prefix=LINEAR
// LINEAR-LABEL: func.func @main(
// LINEAR-SAME: %[[X:[a-z0-9]+]]: tensor<4x8xf32, #dist.device<0>> {dist.batch_dim = 0 : i64, dist.name = "x"}
// LINEAR-SAME: %[[W1:[a-z0-9]+]]: tensor<8x8xf32, #dist.device<0>> {dist.name = "w1"}
// LINEAR-SAME: %[[W2:[a-z0-9]+]]: tensor<2x8xf32, #dist.device<0>> {dist.name = "w2"}
// LINEAR: %[[H:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[W1]] :
// LINEAR: linalg.matmul {{.*}} ins(%[[H]], %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<8x2xf32, #dist.device<0>>)
// LINEAR-NOT: linalg.transpose ins(%[[W2]]
// LINEAR: %[[DH:.*]] = linalg.matmul {{.*}} ins(%[[DY:.*]], %[[W2]] : tensor<4x2xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<0>>)
// LINEAR: %[[DYT:.*]] = linalg.transpose ins(%[[DY]] : {{.*}} loc(#[[DCT:loc[0-9]+]])
// LINEAR: %[[DW2:.*]] = linalg.matmul {{.*}} ins(%[[DYT]], %[[H]] : tensor<2x4xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<0>>) {{.*}} -> tensor<2x8xf32, #dist.device<0>>
// LINEAR: %[[XT:.*]] = linalg.transpose ins(%[[X]] : {{.*}} loc(#[[AT:loc[0-9]+]])
// LINEAR: %[[DW1:.*]] = linalg.matmul {{.*}} ins(%[[XT]], %[[DH]] :
// LINEAR-NOT: linalg.transpose
// LINEAR: linalg.generic {{.*}} ins(%[[W1]], %[[DW1]] :
// LINEAR: linalg.generic {{.*}} ins(%[[W2]], %[[DW2]] :
// LINEAR-DAG: #[[DCT]] = loc("dC^T"(
// LINEAR-DAG: #[[AT]] = loc("A^T"(
