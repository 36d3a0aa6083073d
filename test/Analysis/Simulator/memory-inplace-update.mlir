// An optimizer updates a weight in place: an element-wise op (parallel
// loops, identity maps) that reads an argument for the last time writes over
// it, so the new weight takes no memory beside the old one. A result of an
// argument's type that is not such an update (here a matmul) needs a buffer
// of its own. docs/design/memory.md, rule 9.
// RUN: distir-sim %s --entry update --cluster distir-uniform:devices=1 | FileCheck %s --check-prefix=UPDATE
// RUN: distir-sim %s --entry other --cluster distir-uniform:devices=1 | FileCheck %s --check-prefix=OTHER

!t = tensor<32x32xf32, #dist.device<0>>       // 4096 bytes
#map = affine_map<(d0, d1) -> (d0, d1)>

// Resident %w and %g: 8192. The update writes over %w (and its
// tensor.empty is never allocated): the peak stays 8192.
// UPDATE: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 8192 {{[0-9]+}} 8192
func.func @update(%w: !t, %g: !t) -> !t {
  %e = tensor.empty() : !t
  %u = linalg.generic {indexing_maps = [#map, #map, #map],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : !t, !t) outs(%e : !t) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> !t
  return %u : !t
}

// A matmul reads %w and %g (both live until it ends) and writes a new
// buffer: 8192 + 4096.
// OTHER: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 12288 {{[0-9]+}} 8192
func.func @other(%w: !t, %g: !t) -> !t {
  %e = tensor.empty() : !t
  %m = linalg.matmul ins(%w, %g : !t, !t) outs(%e : !t) -> !t
  return %m : !t
}
