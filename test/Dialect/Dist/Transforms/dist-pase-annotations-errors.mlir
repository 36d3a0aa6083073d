// RUN: not distir-opt %s --dist-pase='devices=2 cluster=dgx-h100' -split-input-file --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s

// An annotation dist-pase cannot follow is one error at the op.

!t = tensor<8x8xf32, #dist.device<0>>
func.func @partial(%x: !t, %w: !t) -> !t {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %z = linalg.fill ins(%cst : f32) outs(%e : !t) -> !t
  // CHECK: :[[@LINE+1]]:8: error: dist-pase: cannot follow the dist.sharding of result #0: it has partial axes (per-op strategies sum a split reduction at once; annotate the summed value)
  %y = linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [], partial = [0]>}
      ins(%x, %w : !t, !t) outs(%z : !t) -> !t
  return %y : !t
}

// -----

!t = tensor<8x8xf32, #dist.device<0>>
func.func @mesh(%x: !t, %w: !t) -> !t {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %z = linalg.fill ins(%cst : f32) outs(%e : !t) -> !t
  // CHECK: :[[@LINE+1]]:8: error: dist-pase: cannot follow the dist.sharding of result #0: its mesh has 4 positions, and dist-pase distributes over 2 devices
  %y = linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [4]>, split = [[0]]>}
      ins(%x, %w : !t, !t) outs(%z : !t) -> !t
  return %y : !t
}

// -----

!t = tensor<8x8xf32, #dist.device<0>>
func.func @placement(%x: !t, %w: !t) -> !t {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %z = linalg.fill ins(%cst : f32) outs(%e : !t) -> !t
  // CHECK: :[[@LINE+1]]:8: error: dist-pase: cannot follow the dist.sharding of result #0: its mesh does not place one position on each of devices 0 .. 1
  %y = linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [2], devices = [1, 2]>, split = [[0]]>}
      ins(%x, %w : !t, !t) outs(%z : !t) -> !t
  return %y : !t
}

// -----

// Seven rows split 1 + 6 by explicit offsets: configurations split
// unevenly only as balanced tiles (3 + 4).
!x = tensor<7x8xf32, #dist.device<0>>
!w = tensor<8x8xf32, #dist.device<0>>
func.func @uneven(%x: !x, %w: !w) -> !x {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : !x
  %z = linalg.fill ins(%cst : f32) outs(%e : !x) -> !x
  // CHECK: :[[@LINE+1]]:8: error: dist-pase: cannot follow the dist.sharding of result #0: it has explicit offsets (dist-pase splits a loop only into balanced tiles)
  %y = linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], offsets = [0, 1, 7]>}
      ins(%x, %w : !x, !w) outs(%z : !x) -> !x
  return %y : !x
}

// -----

// Strided tiles (groups) are not a loop split.
!xs = tensor<8x8xf32, #dist.device<0>>
func.func @strided(%x: !xs, %w: !xs) -> !xs {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : !xs
  %z = linalg.fill ins(%cst : f32) outs(%e : !xs) -> !xs
  // CHECK: :[[@LINE+1]]:8: error: dist-pase: cannot follow the dist.sharding of result #0: it is strided (groups; dist-pase splits a loop only into contiguous tiles)
  %y = linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]], groups = [1, 2]>}
      ins(%x, %w : !xs, !xs) outs(%z : !xs) -> !xs
  return %y : !xs
}

// -----

// The input is split along the reduction, the result along its columns:
// no configuration does both.
!t = tensor<8x8xf32, #dist.device<0>>
func.func @conflict(%x: !t {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>}, %w: !t) -> !t {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : !t
  %z = linalg.fill ins(%cst : f32) outs(%e : !t) -> !t
  // CHECK: :[[@LINE+1]]:8: error: dist-pase: no configuration of this op holds its results as its dist.sharding says
  %y = linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>}
      ins(%x, %w : !t, !t) outs(%z : !t) -> !t
  return %y : !t
}

// -----

// An argument split along a max-reduction, which does not split: its only
// reader cannot read it in place.
!t = tensor<8x8xf32, #dist.device<0>>
!v = tensor<8xf32, #dist.device<0>>
func.func @argument(%x: !t {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>}) -> !v {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : !v
  %z = linalg.fill ins(%cst : f32) outs(%e : !v) -> !v
  // CHECK: :[[@LINE+1]]:8: error: dist-pase: no configuration of this op reads argument #0 as its dist.sharding distributes it (arguments are not moved; a split must divide the loop that reads it)
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : !t) outs(%z : !v) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.maximumf %in, %out : f32
    linalg.yield %s : f32
  } -> !v
  return %y : !v
}
