// A reduction loop split over devices leaves partial results, reduced by the
// collective of the body's combiner: partial sums (zero init) by a sum, and
// partial maxima by a max, whatever the init (each shard's maximum includes
// it). Maxima are reduced over the tensor axis only: over the batch (dp,
// microbatches accumulate by sums) the op reads the whole batch instead of
// summing maxima. A body that is not a sum, a maximumf or a minimumf of
// the accumulator (an unsigned maximum, as the importer's ReduceMax on
// unsigned types) is not split over its reduction loops either.
// RUN: distir-opt %s '--dist-dtp=dp=2 report=true' -o %t.mlir 2>&1 | FileCheck %s --check-prefix=DP
// RUN: FileCheck %s --check-prefix=DPIR < %t.mlir
// RUN: %python %distir_src_root/scripts/check-dtp-equivalence.py --program %s --entry main --work %t.eq --degrees 1,2 --tp-degrees 1 --pp-degrees 1 --microbatches 1,2 | FileCheck %s --check-prefix=EQ

!x = tensor<4x8xf32, #dist.device<0>>
!v = tensor<8xf32, #dist.device<0>>
func.func @main(%x: !x {dist.batch_dim = 0 : i64}, %y: tensor<4x8xi32, #dist.device<0>> {dist.batch_dim = 0 : i64}) -> (!v, !v, tensor<8xi32, #dist.device<0>>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !v
  %z = linalg.fill ins(%zero : f32) outs(%e : !v) -> !v
  // DP: dist-dtp-reduction-kinds.mlir:[[@LINE+1]]:8: remark: dp=2 microbatches=1: the batch (dim 0 of 'tensor<2x8xf32, #dist.device<0>>' per piece) is gathered for this op
  %m = linalg.generic {
      indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>],
      iterator_types = ["reduction", "parallel"]}
      ins(%x : !x) outs(%z : !v) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> !v
  %s = linalg.generic {
      indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>],
      iterator_types = ["reduction", "parallel"]}
      ins(%x : !x) outs(%z : !v) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  } -> !v
  %ez = tensor.empty() : tensor<8xi32, #dist.device<0>>
  %zi = arith.constant 0 : i32
  %zz = linalg.fill ins(%zi : i32) outs(%ez : tensor<8xi32, #dist.device<0>>) -> tensor<8xi32, #dist.device<0>>
  // DP: dist-dtp-reduction-kinds.mlir:[[@LINE+1]]:9: remark: dp=2 microbatches=1: the batch (dim 0 of 'tensor<2x8xi32, #dist.device<0>>' per piece) is gathered for this op
  %mu = linalg.generic {
      indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (j)>],
      iterator_types = ["reduction", "parallel"]}
      ins(%y : tensor<4x8xi32, #dist.device<0>>) outs(%zz : tensor<8xi32, #dist.device<0>>) {
  ^bb0(%in: i32, %acc: i32):
    %r = arith.maxui %in, %acc : i32
    linalg.yield %r : i32
  } -> tensor<8xi32, #dist.device<0>>
  return %m, %s, %mu : !v, !v, tensor<8xi32, #dist.device<0>>
}
// DP-NOT: is gathered
// The maxima read the gathered batch; the sum adds the replicas' partial
// sums.
// DPIR-LABEL: func.func @main_dtp
// DPIR: dist.all_gather
// DPIR-NOT: dist.all_reduce max
// DPIR: dist.all_reduce sum
// DPIR-NOT: dist.all_reduce
// DPIR: dist.all_gather {{.*}} : tensor<2x8xi32
// DPIR-NOT: dist.all_reduce
// DPIR: return
// EQ-NOT: DIFFERENT
// EQ: 4 configurations, 4 equal, 0 different
