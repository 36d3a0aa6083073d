// Index tensors have no bit width of their own: they count 8 bytes per
// element (as on the 64-bit targets we lower to) instead of crashing the
// simulator (asking an index type for its width is undefined).
// RUN: distir-sim %s --cluster distir-uniform --cost-model distir-compat | FileCheck %s

!i = tensor<512xindex, #dist.device<0>>      // 4096 bytes
#id = affine_map<(d0) -> (d0)>

// resident: %x = 512 x 8 = 4096 bytes; the result, a new buffer under
// distir-compat (as in DistIR), 4096 more.
// CHECK: latency:
// CHECK: 0 {{.*}} 8192 8192 4096
func.func @f(%x: !i) -> !i {
  %e = tensor.empty() : !i
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : !i) outs(%e : !i) {
  ^bb0(%a: index, %o: index):
    %s = arith.addi %a, %a : index
    linalg.yield %s : index
  } -> !i
  return %y : !i
}
