// A reduction loop split over devices leaves partial results, reduced by the
// collective of the body's combiner: partial sums (zero init) by a sum, and
// partial maxima by a max, whatever the init (each shard's maximum includes
// it). Maxima are reduced over the tensor axis only: over the batch (dp,
// microbatches accumulate by sums) the op reads the whole batch instead of
// summing maxima.
// RUN: distir-opt %s '--dist-dtp=dp=2 report=true' -o %t.mlir 2>&1 | FileCheck %s --check-prefix=DP
// RUN: FileCheck %s --check-prefix=DPIR < %t.mlir
// RUN: %python %distir_src_root/scripts/check-dtp-equivalence.py --program %s --entry main --work %t.eq --degrees 1,2 --tp-degrees 1 --pp-degrees 1 --microbatches 1,2 | FileCheck %s --check-prefix=EQ

!x = tensor<4x8xf32, #dist.device<0>>
!v = tensor<8xf32, #dist.device<0>>
func.func @main(%x: !x {dist.batch_dim = 0 : i64}) -> (!v, !v) {
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
  return %m, %s : !v, !v
}
// DP-NOT: is gathered
// The maximum reads the gathered batch; the sum adds the replicas' partial
// sums.
// DPIR-LABEL: func.func @main_dtp
// DPIR: dist.all_gather
// DPIR-NOT: dist.all_reduce max
// DPIR: dist.all_reduce sum
// DPIR-NOT: dist.all_reduce
// DPIR: return
// EQ-NOT: DIFFERENT
// EQ: 4 configurations, 4 equal, 0 different
