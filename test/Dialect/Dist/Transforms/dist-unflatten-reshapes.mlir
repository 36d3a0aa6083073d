// RUN: distir-opt %s --split-input-file --dist-unflatten-reshapes | FileCheck %s
// RUN: distir-opt %s --split-input-file --dist-unflatten-reshapes=report=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not distir-opt %s --split-input-file --dist-unflatten-reshapes=max-rewrites=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=LIMIT
// A function that needs more rewrites than max-rewrites allows is an error
// (as the greedy driver reports non-convergence), not a half-rewritten one.
// LIMIT: dist-unflatten-reshapes.mlir:{{[0-9]+}}:{{[0-9]+}}: error: dist-unflatten-reshapes: the rewrite did not converge

// nn.MultiheadAttention's core as the ONNX importer emits it: [S, B, E] =
// [4, 2, 8] seen as [S, B * H, D] = [4, 4, 4] through a collapse + expand,
// heads to the front, scores, softmax, heads back, and [S * B, H * D]. The
// batch and the heads stay apart from the first reshape to the last.
!x = tensor<4x2x8xf32, #dist.device<0>>
!m = tensor<4x4x4xf32, #dist.device<0>>
// REMARK: remark: dist-unflatten-reshapes: 3 reshapes through their finest shape, 5 ops reading the merged dimensions apart
// CHECK-LABEL: func.func @attention
func.func @attention(%q: !x, %k: !x) -> tensor<8x8xf32, #dist.device<0>> {
  %cq = tensor.collapse_shape %q [[0], [1, 2]] : !x into tensor<4x16xf32, #dist.device<0>>
  %eq = tensor.expand_shape %cq [[0], [1, 2]] output_shape [4, 4, 4] : tensor<4x16xf32, #dist.device<0>> into !m
  %ck = tensor.collapse_shape %k [[0], [1, 2]] : !x into tensor<4x16xf32, #dist.device<0>>
  %ek = tensor.expand_shape %ck [[0], [1, 2]] output_shape [4, 4, 4] : tensor<4x16xf32, #dist.device<0>> into !m
  %e0 = tensor.empty() : !m
  %tq = linalg.transpose ins(%eq : !m) outs(%e0 : !m) permutation = [1, 0, 2]
  %e1 = tensor.empty() : !m
  %tk = linalg.transpose ins(%ek : !m) outs(%e1 : !m) permutation = [1, 0, 2]
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : !m
  %z = linalg.fill ins(%zero : f32) outs(%e2 : !m) -> !m
  %s = linalg.generic {
      indexing_maps = [affine_map<(b, i, j, d) -> (b, i, d)>,
                       affine_map<(b, i, j, d) -> (b, j, d)>,
                       affine_map<(b, i, j, d) -> (b, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%tq, %tk : !m, !m) outs(%z : !m) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> !m
  %e3 = tensor.empty() : !m
  %sm = linalg.softmax dimension(2) ins(%s : !m) outs(%e3 : !m) -> !m
  %e4 = tensor.empty() : !m
  %t = linalg.transpose ins(%sm : !m) outs(%e4 : !m) permutation = [1, 0, 2]
  %flat = tensor.collapse_shape %t [[0, 1, 2]] : !m into tensor<64xf32, #dist.device<0>>
  %rows = tensor.expand_shape %flat [[0, 1]] output_shape [8, 8] : tensor<64xf32, #dist.device<0>> into tensor<8x8xf32, #dist.device<0>>
  return %rows : tensor<8x8xf32, #dist.device<0>>
}
// CHECK: %[[Q:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [4, 2, 2, 4]
// CHECK: linalg.transpose ins(%[[Q]] : tensor<4x2x2x4xf32, #dist.device<0>>) outs(%{{.*}} : tensor<2x2x4x4xf32, #dist.device<0>>) permutation = [1, 2, 0, 3]
// The contraction's init stays a fresh zero-filled tensor.
// CHECK: %[[Z:.*]] = linalg.fill {{.*}} -> tensor<2x2x4x4xf32, #dist.device<0>>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: outs(%[[Z]] :
// CHECK: } -> tensor<2x2x4x4xf32, #dist.device<0>>
// CHECK: linalg.softmax dimension(3) ins(%{{.*}} : tensor<2x2x4x4xf32, #dist.device<0>>)
// CHECK: linalg.transpose {{.*}} outs(%{{.*}} : tensor<4x2x2x4xf32, #dist.device<0>>) permutation = [2, 0, 1, 3]
// CHECK-NOT: tensor.collapse_shape
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2, 3]] : tensor<4x2x2x4xf32, #dist.device<0>> into tensor<8x8xf32, #dist.device<0>>
// CHECK-NEXT: return

// -----

// A reduction over merged rows (a bias gradient over [S * B]) keeps them
// merged, and unit dimensions are left alone.
!x = tensor<4x2x8xf32, #dist.device<0>>
// REMARK: remark: dist-unflatten-reshapes: 0 reshapes through their finest shape, 0 ops reading the merged dimensions apart
// CHECK-LABEL: func.func @row_sum
func.func @row_sum(%x: !x, %y: tensor<4x1x8xf32, #dist.device<0>>) -> (tensor<8xf32, #dist.device<0>>, tensor<2x2x8xf32, #dist.device<0>>) {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : !x into tensor<8x8xf32, #dist.device<0>>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32, #dist.device<0>>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32, #dist.device<0>>) -> tensor<8xf32, #dist.device<0>>
  %s = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
      iterator_types = ["reduction", "parallel"]}
      ins(%c : tensor<8x8xf32, #dist.device<0>>) outs(%z : tensor<8xf32, #dist.device<0>>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32, #dist.device<0>>
  %u = tensor.collapse_shape %y [[0, 1], [2]] : tensor<4x1x8xf32, #dist.device<0>> into tensor<4x8xf32, #dist.device<0>>
  %v = tensor.expand_shape %u [[0, 1], [2]] output_shape [2, 2, 8] : tensor<4x8xf32, #dist.device<0>> into tensor<2x2x8xf32, #dist.device<0>>
  return %s, %v : tensor<8xf32, #dist.device<0>>, tensor<2x2x8xf32, #dist.device<0>>
}
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK: tensor.collapse_shape %arg1 {{\[\[}}0, 1], [2]]
// CHECK: tensor.expand_shape

// -----

// Ops the rewrite creates take the stage tags of the op they replace (a
// layer-0 forward op whose result a layer-1 op and a backward op read), and
// a generic that computes with linalg.index is left alone (upstream would
// turn the index into affine.apply, which the reference executor does not
// run).
!x = tensor<4x2x8xf32, #dist.device<0>>
!r = tensor<8x8xf32, #dist.device<0>>
// REMARK: remark: dist-unflatten-reshapes: 0 reshapes through their finest shape, 3 ops reading the merged dimensions apart
// CHECK-LABEL: func.func @tags
func.func @tags(%x: !x, %w: !r) -> (!r, !r, !r) {
  %c = tensor.collapse_shape %x [[0, 1], [2]] {dist.layer = 0 : i64, dist.phase = "forward"} : !x into !r
  %e = tensor.empty() {dist.layer = 0 : i64, dist.phase = "forward"} : !r
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : !r) outs(%e : !r) attrs = {dist.layer = 0 : i64, dist.phase = "forward"} {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> !r
  %zero = arith.constant {dist.layer = 1 : i64, dist.phase = "forward"} 0.0 : f32
  %e1 = tensor.empty() {dist.layer = 1 : i64, dist.phase = "forward"} : !r
  %z1 = linalg.fill {dist.layer = 1 : i64, dist.phase = "forward"} ins(%zero : f32) outs(%e1 : !r) -> !r
  %f = linalg.matmul {dist.layer = 1 : i64, dist.phase = "forward"} ins(%g, %w : !r, !r) outs(%z1 : !r) -> !r
  %b = linalg.matmul {dist.layer = 0 : i64, dist.phase = "backward"} ins(%f, %g : !r, !r) outs(%z1 : !r) -> !r
  %e2 = tensor.empty() {dist.layer = 0 : i64, dist.phase = "forward"} : !r
  %i = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : !r) outs(%e2 : !r) attrs = {dist.layer = 0 : i64, dist.phase = "forward"} {
  ^bb0(%a: f32, %o: f32):
    %row = linalg.index 0 : index
    %n = arith.index_cast %row : index to i64
    %v = arith.sitofp %n : i64 to f32
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> !r
  return %f, %b, %i : !r, !r, !r
}
// CHECK: %[[E:.*]] = tensor.empty() {dist.layer = 0 : i64, dist.phase = "forward"} : tensor<4x2x8xf32, #dist.device<0>>
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x2x8xf32, #dist.device<0>>) outs(%[[E]] : tensor<4x2x8xf32, #dist.device<0>>) attrs =  {dist.layer = 0 : i64, dist.phase = "forward"}
// CHECK: math.exp %{{[a-z_0-9]+}} : f32
// CHECK-NOT: tensor.collapse_shape %[[G]]
// The forward matmul reads the rows apart too (a generic of the same
// contraction, with its own tags); the backward one, which sums over the
// merged rows, reads them apart as two reductions: no reader of the exp's
// rows needs them merged any more.
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[G]], %arg1 : {{.*}} attrs =  {dist.layer = 1 : i64, dist.phase = "forward"}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %[[G]] : tensor<8x4x2xf32, #dist.device<0>>, tensor<4x2x8xf32, #dist.device<0>>) {{.*}} attrs =  {dist.layer = 0 : i64, dist.phase = "backward"}
// CHECK: linalg.index 0
// CHECK: } -> tensor<8x8xf32

// -----

// nn.MultiheadAttention's out-projection reads [S, B, H, D] as
// [S * B, H * D] rows: the collapse is split in two (the heads it reduces
// over merged first, then the rows), and the matmul becomes the same
// contraction as a linalg.generic over [S, B] rows, up to the expand back
// (folded away). An untagged matmul that reduces over merged rows (dY^T X)
// keeps them merged (its [H * D] columns are read apart), and one
// annotated with a dist.sharding keeps its form.
!x = tensor<4x2x2x4xf32, #dist.device<0>>
!r = tensor<8x8xf32, #dist.device<0>>
// REMARK: remark: dist-unflatten-reshapes: 0 reshapes through their finest shape, 2 ops reading the merged dimensions apart
// CHECK-LABEL: func.func @projection
func.func @projection(%x: !x, %w: !r, %dy: !r) -> (tensor<4x2x8xf32, #dist.device<0>>, !r, !r) {
  %c = tensor.collapse_shape %x [[0, 1], [2, 3]] : !x into !r
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !r
  %z = linalg.fill ins(%zero : f32) outs(%e : !r) -> !r
  %y = linalg.matmul ins(%c, %w : !r, !r) outs(%z : !r) -> !r
  %back = tensor.expand_shape %y [[0, 1], [2]] output_shape [4, 2, 8] : !r into tensor<4x2x8xf32, #dist.device<0>>
  %e1 = tensor.empty() : !r
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : !r) -> !r
  %dyt = linalg.transpose ins(%dy : !r) outs(%e1 : !r) permutation = [1, 0]
  %dw = linalg.matmul ins(%dyt, %c : !r, !r) outs(%z1 : !r) -> !r
  %e2 = tensor.empty() : !r
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : !r) -> !r
  %a = linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]]>} ins(%c, %w : !r, !r) outs(%z2 : !r) -> !r
  return %back, %dw, %a : tensor<4x2x8xf32, #dist.device<0>>, !r, !r
}
// CHECK: %[[HEADS:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<4x2x2x4xf32, #dist.device<0>> into tensor<4x2x8xf32, #dist.device<0>>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[HEADS]], %arg1 : tensor<4x2x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>)
// CHECK: arith.mulf
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<8x8xf32, #dist.device<0>>, tensor<8x2x4xf32, #dist.device<0>>)
// CHECK: tensor.collapse_shape %[[DW]] {{\[\[}}0], [1, 2]]
// CHECK: linalg.matmul {dist.sharding = {{.*}}} ins(%{{.*}}, %arg1 : tensor<8x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>)
// CHECK: return %[[Y]],

// -----

// The out-projection alone: its [S * B, H * D] collapse has no other
// reader, so none is left behind. A generic and a transpose annotated with
// a dist.sharding (which names their dimensions) keep reading the merged
// rows.
!x = tensor<4x2x2x4xf32, #dist.device<0>>
!r = tensor<8x8xf32, #dist.device<0>>
// REMARK: remark: dist-unflatten-reshapes: 0 reshapes through their finest shape, 1 ops reading the merged dimensions apart
// CHECK-LABEL: func.func @out_projection
func.func @out_projection(%x: !x, %w: !r, %y: tensor<4x2x8xf32, #dist.device<0>>) -> (tensor<4x2x8xf32, #dist.device<0>>, !r, !r) {
  %c = tensor.collapse_shape %x [[0, 1], [2, 3]] : !x into !r
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !r
  %z = linalg.fill ins(%zero : f32) outs(%e : !r) -> !r
  %o = linalg.matmul ins(%c, %w : !r, !r) outs(%z : !r) -> !r
  %back = tensor.expand_shape %o [[0, 1], [2]] output_shape [4, 2, 8] : !r into tensor<4x2x8xf32, #dist.device<0>>
  %cy = tensor.collapse_shape %y [[0, 1], [2]] : tensor<4x2x8xf32, #dist.device<0>> into !r
  %e1 = tensor.empty() : !r
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%cy : !r) outs(%e1 : !r) attrs = {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]]>} {
  ^bb0(%a: f32, %b: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> !r
  %e2 = tensor.empty() : !r
  %t = linalg.transpose ins(%cy : !r) outs(%e2 : !r) permutation = [1, 0] {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>}
  return %back, %g, %t : tensor<4x2x8xf32, #dist.device<0>>, !r, !r
}
// CHECK-NOT: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2, 3]]
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]]
// CHECK-NOT: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2, 3]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: %[[CY:.*]] = tensor.collapse_shape %arg2 {{\[\[}}0, 1], [2]]
// CHECK: linalg.generic {{.*}} ins(%[[CY]] : tensor<8x8xf32, #dist.device<0>>) {{.*}} attrs =  {dist.sharding
// CHECK: linalg.transpose ins(%[[CY]] : tensor<8x8xf32, #dist.device<0>>) {{.*}} {dist.sharding

// -----

// A training step's backward pass through the out-projection: the weight
// gradient dW = X^T dY sums over the [S * B] rows, which it reads apart
// (two reductions), while its [H * D] rows, its weight's, stay merged (the
// collapse is split: the heads first, then the rows it sums over), so the
// optimizer update keeps the weight's layout. A second microbatch's
// gradient accumulates into the first (its init) and reaches the update
// through a transpose: both are weight gradients. The input gradient
// dX = dY W reads the rows apart up to the expand back. Ops of the update,
// a transpose too, are never rewritten.
!x = tensor<4x2x2x4xf32, #dist.device<0>>
!y = tensor<4x2x8xf32, #dist.device<0>>
!r = tensor<8x8xf32, #dist.device<0>>
// REMARK: remark: dist-unflatten-reshapes: 0 reshapes through their finest shape, 4 ops reading the merged dimensions apart
// CHECK-LABEL: func.func @weight_gradient
func.func @weight_gradient(%x: !x, %dy: !y, %w: !r, %m: !r) -> (!y, !r, !r) {
  %zero = arith.constant {dist.phase = "backward"} 0.0 : f32
  %cx = tensor.collapse_shape %x [[0, 1], [2, 3]] {dist.phase = "backward"} : !x into !r
  %cdy = tensor.collapse_shape %dy [[0, 1], [2]] {dist.phase = "backward"} : !y into !r
  %e0 = tensor.empty() {dist.phase = "backward"} : !r
  %z0 = linalg.fill {dist.phase = "backward"} ins(%zero : f32) outs(%e0 : !r) -> !r
  %dx = linalg.matmul {dist.phase = "backward"} ins(%cdy, %w : !r, !r) outs(%z0 : !r) -> !r
  %dxb = tensor.expand_shape %dx [[0, 1], [2]] output_shape [4, 2, 8] {dist.phase = "backward"} : !r into !y
  %e1 = tensor.empty() {dist.phase = "backward"} : !r
  %xt = linalg.transpose ins(%cx : !r) outs(%e1 : !r) permutation = [1, 0] {dist.phase = "backward"}
  %e2 = tensor.empty() {dist.phase = "backward"} : !r
  %z2 = linalg.fill {dist.phase = "backward"} ins(%zero : f32) outs(%e2 : !r) -> !r
  %dw = linalg.matmul {dist.phase = "backward"} ins(%xt, %cdy : !r, !r) outs(%z2 : !r) -> !r
  %dw2 = linalg.matmul {dist.phase = "backward"} ins(%xt, %cdy : !r, !r) outs(%dw : !r) -> !r
  %e4 = tensor.empty() {dist.phase = "backward"} : !r
  %dwt = linalg.transpose ins(%dw2 : !r) outs(%e4 : !r) permutation = [1, 0] {dist.phase = "backward"}
  %e3 = tensor.empty() {dist.phase = "update"} : !r
  %mu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m, %dwt : !r, !r) outs(%e3 : !r) attrs = {dist.phase = "update"} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> !r
  %cu = tensor.collapse_shape %x [[0, 1], [2, 3]] {dist.phase = "update"} : !x into !r
  %e5 = tensor.empty() {dist.phase = "update"} : !r
  %tu = linalg.transpose ins(%cu : !r) outs(%e5 : !r) permutation = [1, 0] {dist.phase = "update"}
  return %dxb, %mu, %tu : !y, !r, !r
}
// CHECK: %[[DX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg1, %arg2 : tensor<4x2x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>) {{.*}} attrs =  {dist.phase = "backward"}
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<4x2x2x4xf32, #dist.device<0>>) {{.*}} permutation = [2, 3, 0, 1]
// CHECK: %[[HEADS:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2], [3]] {dist.phase = "backward"} : tensor<2x4x4x2xf32, #dist.device<0>> into tensor<8x4x2xf32, #dist.device<0>>
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[HEADS]], %arg1 : tensor<8x4x2xf32, #dist.device<0>>, tensor<4x2x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<8x8xf32, #dist.device<0>>) attrs =  {dist.phase = "backward"}
// CHECK: %[[HEADS2:.*]] = tensor.collapse_shape %[[T]] {{\[\[}}0, 1], [2], [3]]
// CHECK: %[[DW2:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[HEADS2]], %arg1 : tensor<8x4x2xf32, #dist.device<0>>, tensor<4x2x8xf32, #dist.device<0>>) outs(%[[DW]] : tensor<8x8xf32, #dist.device<0>>) attrs =  {dist.phase = "backward"}
// CHECK: %[[DWT:.*]] = linalg.transpose ins(%[[DW2]] : tensor<8x8xf32, #dist.device<0>>)
// CHECK: %[[MU:.*]] = linalg.generic {{.*}} ins(%arg3, %[[DWT]] : tensor<8x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>) {{.*}} attrs =  {dist.phase = "update"}
// CHECK: %[[CU:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2, 3]] {dist.phase = "update"}
// CHECK: %[[TU:.*]] = linalg.transpose ins(%[[CU]] : tensor<8x8xf32, #dist.device<0>>) {{.*}} {dist.phase = "update"}
// CHECK: return %[[DX]], %[[MU]], %[[TU]] :
