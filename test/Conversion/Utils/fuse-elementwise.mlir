// RUN: distir-opt --dist-fuse-elementwise -split-input-file %s | FileCheck %s
// RUN: distir-opt --dist-fuse-elementwise=max-fusions=0 -split-input-file %s | FileCheck %s --check-prefix=NONE

#id = affine_map<(d0, d1) -> (d0, d1)>

// A bias add followed by an exponential: one loop nest computes both, no
// intermediate tensor.
// CHECK-LABEL: func.func @chain(
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: math.exp
// CHECK-NOT: linalg.generic
// CHECK: return
// NONE-LABEL: func.func @chain(
// NONE-COUNT-2: linalg.generic
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A producer with a second user stays: fusing it would compute it twice.
// CHECK-LABEL: func.func @shared(
// CHECK-COUNT-3: linalg.generic
func.func @shared(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.sqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %t, %u : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A gradient accumulated in place (`acc + g`, reading its init) feeding a
// scatter into a table (rows v are a loop the producer lacks) stays apart:
// upstream's fusion would keep the accumulation in the fused op and add g
// once per row of the table.
// CHECK-LABEL: func.func @accumulation(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]
func.func @accumulation(%acc: tensor<4x8xf32>, %g: tensor<4x8xf32>, %ids: tensor<4xi64>) -> tensor<16x8xf32> {
  %sum = linalg.generic {indexing_maps = [affine_map<(i, e) -> (i, e)>, affine_map<(i, e) -> (i, e)>], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(i, v, e) -> (i, e)>, affine_map<(i, v, e) -> (i)>, affine_map<(i, v, e) -> (v, e)>], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%sum, %ids : tensor<4x8xf32>, tensor<4xi64>) outs(%z : tensor<16x8xf32>) {
  ^bb0(%a: f32, %id: i64, %o: f32):
    %v = linalg.index 1 : index
    %vi = arith.index_cast %v : index to i64
    %hit = arith.cmpi eq, %id, %vi : i64
    %x = arith.select %hit, %a, %zero : f32
    %r = arith.addf %o, %x : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %t : tensor<16x8xf32>
}

// -----

// An elementwise producer of a sum over rows stays apart: fused, it would be
// computed once per iteration of the reduced loop in some fusions, and the
// consumer would stop being a
// plain reduction (or contraction) for later passes.
// CHECK-LABEL: func.func @into_reduction(
// CHECK-COUNT-2: linalg.generic
func.func @into_reduction(%x: tensor<4x8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j)>], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %t : tensor<8xf32>
}
