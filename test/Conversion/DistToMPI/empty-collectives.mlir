// Collectives on empty tensors lower to valid per-rank code: an empty
// tensor has no in-bounds offset to slice at, so its pieces are not
// inserted or extracted (MLIR's verifier rejected the lowering's offset 0
// of a 0-sized dim). The all-to-all of an empty split dim still
// concatenates along concat_dim (0x4 -> 0x8 on 2 ranks).
// RUN: distir-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=TYPES
// RUN: distir-opt %s --dist-lower-to-llvm=project -o /dev/null

!t0 = tensor<0x4xf32, #dist.device<0>>
!t1 = tensor<0x4xf32, #dist.device<1>>

// TYPES: "dist.all_gather"{{.*}} -> (tensor<0x4xf32, #dist.device<0>>, tensor<0x4xf32, #dist.device<1>>)
// TYPES: "dist.all_gather"{{.*}} -> (tensor<0x8xf32, #dist.device<0>>, tensor<0x8xf32, #dist.device<1>>)
// TYPES: "dist.all_to_all"{{.*}} -> (tensor<0x8xf32, #dist.device<0>>, tensor<0x8xf32, #dist.device<1>>)
// TYPES: "dist.reduce_scatter"{{.*}} -> (tensor<0x4xf32, #dist.device<0>>, tensor<0x4xf32, #dist.device<1>>)
func.func @empty(%a: !t0, %b: !t1) {
  %g0:2 = dist.all_gather %a, %b dim 0 : !t0, !t1
  %g1:2 = dist.all_gather %a, %b dim 1 : !t0, !t1
  %x:2 = dist.all_to_all %a, %b split_dim 0 concat_dim 1 : !t0, !t1
  %r:2 = dist.reduce_scatter sum %a, %b dim 0 : !t0, !t1
  %s:2 = dist.all_reduce sum %a, %b : !t0, !t1
  return
}
