// RUN: distir-opt --dist-to-rank %s | FileCheck %s
// RUN: distir-opt --dist-to-rank='keep-global=false strip-placement=true' %s | FileCheck %s --check-prefix=STRIP
// RUN: distir-opt --dist-to-rank %s | distir-opt --dist-rank-verify-matching | FileCheck %s --check-prefix=ROUNDTRIP

!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>

// Sends both ways, with compute on each side and a replicated scalar.
// CHECK-LABEL: func.func @ping_pong(
// CHECK-SAME: dist_rank.ranks = [@ping_pong_rank0, @ping_pong_rank1]
// CHECK-LABEL: func.func @ping_pong_rank0(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32, #dist.device<0>>, %[[S:.*]]: f32) -> tensor<4xf32, #dist.device<0>>
// CHECK-SAME: dist_rank.arg_map = array<i64: 0, 2>
// CHECK-SAME: dist_rank.num_ranks = 2 : i64
// CHECK-SAME: dist_rank.program = "ping_pong"
// CHECK-SAME: dist_rank.rank = 0 : i64
// CHECK-SAME: dist_rank.result_map = array<i64: 1>
// CHECK: dist_rank.send %[[X]] to 1 tag 0 : tensor<4xf32, #dist.device<0>>
// CHECK: %[[B:.*]] = dist_rank.recv from 1 tag 0 : tensor<4xf32, #dist.device<0>>
// CHECK: %[[B2:.*]] = dist_rank.recv from 1 tag 1 : tensor<4xf32, #dist.device<0>>
// CHECK: linalg.add ins(%[[B]], %[[B2]]
// CHECK-NOT: dist_rank
// CHECK: return
// CHECK-LABEL: func.func @ping_pong_rank1(
// CHECK-SAME: %[[Y:.*]]: tensor<4xf32, #dist.device<1>>, %[[S1:.*]]: f32) -> tensor<4xf32, #dist.device<1>>
// CHECK-SAME: dist_rank.arg_map = array<i64: 1, 2>
// CHECK-SAME: dist_rank.result_map = array<i64: 0>
// CHECK: %[[A:.*]] = dist_rank.recv from 0 tag 0 : tensor<4xf32, #dist.device<1>>
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: dist_rank.send %[[C]] to 0 tag 0
// CHECK: dist_rank.send %[[Y]] to 0 tag 1
// CHECK: return %[[C]]

// STRIP-NOT: func.func @ping_pong(
// STRIP-LABEL: func.func @ping_pong_rank0(
// STRIP-SAME: tensor<4xf32>, %{{.*}}: f32) -> tensor<4xf32>
// STRIP: dist_rank.send %{{.*}} to 1 tag 0 : tensor<4xf32>
// STRIP-LABEL: func.func @ping_pong_rank1(
// STRIP-NOT: #dist.device

// ROUNDTRIP: func.func @ping_pong_rank1
#map = affine_map<(d0) -> (d0)>
func.func @ping_pong(%x: !t0, %y: !t1, %s: f32) -> (!t1, !t0) {
  %a = dist.send %x : !t0 -> !t1
  %e = tensor.empty() : !t1
  %c = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : !t1) outs(%e : !t1) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    linalg.yield %m : f32
  } -> !t1
  %b = dist.send %c : !t1 -> !t0
  %b2 = dist.send %y : !t1 -> !t0
  %e0 = tensor.empty() : !t0
  %d = linalg.add ins(%b, %b2 : !t0, !t0) outs(%e0 : !t0) -> !t0
  return %c, %d : !t1, !t0
}
