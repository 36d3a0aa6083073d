// A final projection whose split ends in an integer sum with a zero init
// (how many classes score above zero, per row) is split by columns and
// the partial counts all-reduced, as float sums are: no gather of the
// logits.
// RUN: distir-opt %s --dist-attach-cluster=cluster=%S/Inputs/slow-compute.json '--dist-dtp=tp=2 report=true' -o %t.mlir 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: distir-opt %s --dist-attach-cluster=cluster=%S/Inputs/slow-compute.json -o %t.seq.mlir
// RUN: %python %distir_src_root/scripts/check-dtp-equivalence.py --program %t.seq.mlir --entry main --work %t.eq --degrees 1,2 --tp-degrees 2 --pp-degrees 1 --microbatches 1,2 | FileCheck %s --check-prefix=EQ

!x = tensor<64x256xf32, #dist.device<0>>
!w = tensor<256x512xf32, #dist.device<0>>
!l = tensor<64x512xf32, #dist.device<0>>
!c = tensor<64xi32, #dist.device<0>>
func.func @main(%x: !x {dist.batch_dim = 0 : i64}, %w: !w {dist.name = "head"}) -> !c {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !l
  %z = linalg.fill ins(%zero : f32) outs(%e : !l) -> !l
  // CHECK: remark: tp=2: column split of 'head' (dim 1), 1 reductions over it all-reduced
  %logits = linalg.matmul ins(%x, %w : !x, !w) outs(%z : !l) -> !l
  %ec = tensor.empty() : !c
  %zi = arith.constant 0 : i32
  %zc = linalg.fill ins(%zi : i32) outs(%ec : !c) -> !c
  %count = linalg.generic {
      indexing_maps = [affine_map<(b, j) -> (b, j)>, affine_map<(b, j) -> (b)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%logits : !l) outs(%zc : !c) {
  ^bb0(%in: f32, %acc: i32):
    %pos = arith.cmpf ogt, %in, %zero : f32
    %one = arith.extui %pos : i1 to i32
    %r = arith.addi %acc, %one : i32
    linalg.yield %r : i32
  } -> !c
  return %count : !c
}
// IR-LABEL: func.func @main_dtp
// IR-NOT: dist.all_gather
// IR: dist.all_reduce sum {{.*}} : tensor<64xi32
// IR-NOT: dist.all_gather
// IR: return
// EQ: 4 configurations, 4 equal, 0 different
