// RUN: distir-opt --dist-autodiff %s | FileCheck %s

// Where a value has several readers, its gradient is the sum of their
// contributions. The sum is emitted with a reader's adjoint (each reader
// after the first the backward sweep visits adds its own) but belongs to
// the value's producer: its
// adjoint reads the sum, and dist-pase ties the sum to the producer's
// configuration instead of joining the readers. The sum of a weight's
// gradient belongs to no forward op and carries no dist.vjp_of.
!x = tensor<4x8xf32, #dist.device<0>>
!w = tensor<8x8xf32, #dist.device<0>>
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: !x {dist.batch_dim = 0 : i64, dist.name = "x"},
                %w: !w {dist.name = "w"}, %v: !w {dist.name = "v"}) -> !x {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !x
  %init = linalg.fill ins(%zero : f32) outs(%e : !x) -> !x
  // h has two readers (the squares and the sum below); w has two readers
  // (this matmul and the next).
  %h = linalg.matmul ins(%x, %w : !x, !w) outs(%init : !x) -> !x
  %sq = linalg.generic {indexing_maps = [#id, #id],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h : !x) outs(%e : !x) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> !x
  %g = linalg.matmul ins(%sq, %w : !x, !w) outs(%init : !x) -> !x
  %out = linalg.generic {indexing_maps = [#id, #id, #id],
                         iterator_types = ["parallel", "parallel"]}
      ins(%g, %h : !x, !x) outs(%e : !x) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> !x
  %y = linalg.matmul ins(%out, %v : !x, !w) outs(%init : !x) -> !x
  return %y : !x
}

// CHECK-LABEL: func.func @main(
// CHECK: linalg.matmul {dist.layer = 0 : i64, dist.phase = "forward", dist.vjp_id = [[HID:[0-9]+]] : i64} ins(%arg0, %[[W:arg[0-9]+]] :
// h's two contributions (the squares' and the add's) summed: tagged with
// h's producer, not with the squares, whose adjoint emitted the sum.
// CHECK: %[[DH:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : {{.*}}) outs({{.*}}) attrs = {dist.layer = 1 : i64, dist.phase = "backward", dist.vjp_of = [[HID]] : i64} {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.matmul {dist.layer = 0 : i64, dist.phase = "backward", dist.vjp_of = [[HID]] : i64} ins(%{{.*}}, %[[DH]] :
// w's two contributions summed: no forward op owns the sum.
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} attrs = {dist.layer = 0 : i64, dist.phase = "backward"} {
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[DW]] :
