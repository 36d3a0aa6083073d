// A broadcast computed with linalg.index (no input reads its dimensions) is
// deferred to its consumers; each computes it in the layout it needs,
// shifting the index of a split loop by the block's offset. A layout that
// splits such a loop into groups (the batch behind the sequence in merged
// [S * B] rows) gets the value computed whole and cut: its groups are not
// contiguous blocks.
// RUN: distir-opt %s '--dist-dtp=dp=2' -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: %python %distir_src_root/scripts/check-dtp-equivalence.py --program %s --entry main --work %t.eq --degrees 1,2 --tp-degrees 1 --pp-degrees 1 --microbatches 1,2 | FileCheck %s --check-prefix=EQ

!x = tensor<2x4x8xf32, #dist.device<0>>
!r = tensor<8x8xf32, #dist.device<0>>
!b = tensor<4x8xf32, #dist.device<0>>
func.func @main(%x: !x {dist.batch_dim = 1 : i64}, %y: !b {dist.batch_dim = 0 : i64}) -> (!r, !b) {
  // Rows s * 4 + b: the batch (dim 1) grouped behind the sequence.
  %rows = tensor.collapse_shape %x [[0, 1], [2]] : !x into !r
  %e = tensor.empty() : !r
  %pos = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      outs(%e : !r) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    linalg.yield %f : f32
  } -> !r
  %sum = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%rows, %pos : !r, !r) outs(%e : !r) {
  ^bb0(%a: f32, %p: f32, %out: f32):
    %s = arith.addf %a, %p : f32
    linalg.yield %s : f32
  } -> !r
  // The same kind of broadcast over a plain batch split: [4, 8] rows of
  // the batch, each device computing its own rows' indices.
  %e2 = tensor.empty() : !b
  %pos2 = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      outs(%e2 : !b) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    linalg.yield %f : f32
  } -> !b
  %sum2 = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%y, %pos2 : !b, !b) outs(%e2 : !b) {
  ^bb0(%a: f32, %p: f32, %out: f32):
    %s = arith.addf %a, %p : f32
    linalg.yield %s : f32
  } -> !b
  return %sum, %sum2 : !r, !b
}
// The grouped layout: computed whole ([8, 8]) on each device, then cut
// (device 0: rows 0-1 and 4-5).
// CHECK-LABEL: func.func @main_dtp
// CHECK: linalg.index 0
// CHECK: -> tensor<8x8xf32, #dist.device<0>>
// CHECK: tensor.extract_slice %{{.*}}[4, 0] [2, 8] [1, 1] : tensor<8x8xf32, #dist.device<0>>
// The plain split: device 1 computes rows 2 and 3 of the second broadcast.
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8xf32, #dist.device<1>>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.index 0 : index
// CHECK-NEXT: %[[OFF:.*]] = arith.constant 2 : index
// CHECK-NEXT: arith.addi %{{.*}}, %[[OFF]] : index
// EQ-NOT: DIFFERENT
// EQ: 4 configurations, 4 equal, 0 different
