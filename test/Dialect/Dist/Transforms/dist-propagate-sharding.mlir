// RUN: distir-opt %s --dist-propagate-sharding -o %t.mlir 2>&1 | FileCheck %s --check-prefix=REMARK --implicit-check-not='see current operation'
// RUN: FileCheck %s < %t.mlir

// One annotation, on the first layer's weight (split by output features over
// a named 4-device mesh): upstream's rules spread it through the matmul, the
// ReLU and the second matmul's reduction (Megatron's pairing: the second
// weight splits by rows, the output is summed, i.e. replicated). The mesh
// comes back with its name and devices.

// REMARK: remark: dist-propagate-sharding: 6 of 7 ops sharded (4 split, 0 of them ops upstream has no rule for), 0 values resharded for a consumer; 3 of 3 arguments sharded; 1 rounds; not propagated through: none; not reached: tensor.empty
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %arg0: tensor<8x16xf32> {dist.sharding = #dist.sharding<mesh = <name = "tp", shape = [4], devices = [4, 5, 6, 7]>, split = {{\[\[\]\]}}>}
// CHECK-SAME: %arg1: tensor<16x32xf32> {dist.sharding = #dist.sharding<mesh = <name = "tp", shape = [4], devices = [4, 5, 6, 7]>, split = {{\[\[\], \[0\]\]}}>}
// CHECK-SAME: %arg2: tensor<32x16xf32> {dist.sharding = #dist.sharding<mesh = <name = "tp", shape = [4], devices = [4, 5, 6, 7]>, split = {{\[\[0\]\]}}>}
// CHECK: tensor.empty() {dist.sharding = {{.*}}split = {{\[\[\], \[0\]\]}}>}
// CHECK: linalg.fill {dist.sharding = {{.*}}split = {{\[\[\], \[0\]\]}}>}
// CHECK: linalg.matmul {dist.sharding = {{.*}}split = {{\[\[\], \[0\]\]}}>}
// CHECK: linalg.generic
// CHECK-SAME: dist.sharding = {{.*}}split = {{\[\[\], \[0\]\]}}>
// CHECK: tensor.empty() : tensor<8x16xf32>
// CHECK: linalg.fill {dist.sharding = {{.*}}split = {{\[\[\]\]}}>}
// CHECK: linalg.matmul {dist.sharding = {{.*}}split = {{\[\[\]\]}}>}
// CHECK-NOT: shard.
func.func @mlp(%x: tensor<8x16xf32>,
               %w1: tensor<16x32xf32> {dist.sharding = #dist.sharding<mesh = <name = "tp", shape = [4], devices = [4, 5, 6, 7]>, split = [[], [0]]>},
               %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%init : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%init2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// A reshape has no sharding rule upstream; DistIR's carries a split of the
// outer dimension of a merged group across it (and back), between rounds of
// upstream's propagation.

// REMARK: remark: dist-propagate-sharding: 5 of 5 ops sharded (5 split, 1 of them ops upstream has no rule for), 0 values resharded for a consumer; 1 of 1 arguments sharded; 2 rounds; not propagated through: none; not reached: none
// CHECK-LABEL: func.func @outer(
// CHECK: linalg.generic {{.*}}dist.sharding = {{.*}}split = {{\[\[0\]\]}}>
// CHECK: tensor.collapse_shape {{.*}}{dist.sharding = {{.*}}split = {{\[\[0\]\]}}>}
// CHECK: linalg.generic {{.*}}dist.sharding = {{.*}}split = {{\[\[0\]\]}}>
func.func @outer(%x: tensor<4x8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]]>}) -> tensor<32xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %c = tensor.collapse_shape %n [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e2 = tensor.empty() : tensor<32xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%c : tensor<32xf32>) outs(%e2 : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// A split of the inner dimension of a merged group would need data
// movement: nothing propagates through (the op keeps no sharding and the
// remark says so), the far side is not reached.

// REMARK: remark: dist-propagate-sharding: 2 of 5 ops sharded (2 split, 0 of them ops upstream has no rule for), 0 values resharded for a consumer; 1 of 1 arguments sharded; 1 rounds; not propagated through: tensor.collapse_shape; not reached: linalg.generic, tensor.empty
// CHECK-LABEL: func.func @inner(
// CHECK: linalg.generic {{.*}}dist.sharding = {{.*}}split = {{\[\[\], \[0\]\]}}>
// CHECK: tensor.collapse_shape
// CHECK-NOT: dist.sharding
// CHECK: return
func.func @inner(%x: tensor<4x8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>}) -> tensor<32xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %c = tensor.collapse_shape %n [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %e2 = tensor.empty() : tensor<32xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%c : tensor<32xf32>) outs(%e2 : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<32xf32>
  return %o : tensor<32xf32>
}

// Ops upstream has no rule for, crossed by DistIR's: a linalg op reading a
// broadcast dimension at a constant index (its loops from the indexing
// maps), a softmax over the unsplit dimension, a pad and a slice that keep
// the split dimension whole. The row split of %x reaches every op but the
// destinations of the cut ops.

// REMARK: remark: dist-propagate-sharding: 6 of 8 ops sharded (6 split, 4 of them ops upstream has no rule for), 0 values resharded for a consumer; 2 of 2 arguments sharded; {{[0-9]+}} rounds; not propagated through: none; not reached: tensor.empty x2
// CHECK-LABEL: func.func @rules(
// CHECK-SAME: %arg1: tensor<4x1xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = {{\[\[0\]\]}}>}
// CHECK: linalg.generic {{.*}}dist.sharding = {{.*}}split = {{\[\[0\]\]}}>
// CHECK: linalg.softmax {{.*}}dist.sharding = {{.*}}split = {{\[\[0\]\]}}>
// CHECK: tensor.pad
// CHECK: } {dist.sharding = {{.*}}split = {{\[\[0\]\]}}>}
// CHECK: tensor.extract_slice {{.*}}dist.sharding = {{.*}}split = {{\[\[0\]\]}}>
func.func @rules(%x: tensor<4x8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]]>}, %mean: tensor<4x1xf32>) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, 0)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x, %mean : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %b: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %p = linalg.softmax dimension(1) ins(%c : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %p low[0, 1] high[0, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x8xf32> to tensor<4x10xf32>
  %s = tensor.extract_slice %padded[0, 2] [4, 6] [1, 1] : tensor<4x10xf32> to tensor<4x6xf32>
  %e3 = tensor.empty() : tensor<4x6xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%e3 : tensor<4x6xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<4x6xf32>
  return %o : tensor<4x6xf32>
}

// Backward across a reshape: the last op's annotation reaches the
// expand_shape's result from its user, and DistIR's rule gives its source
// (the outer dimension of the group, split evenly), so the first op and the
// argument are split too.

// REMARK: remark: dist-propagate-sharding: 5 of 5 ops sharded (5 split, 1 of them ops upstream has no rule for), 0 values resharded for a consumer; 1 of 1 arguments sharded; {{[0-9]+}} rounds; not propagated through: none; not reached: none
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %arg0: tensor<32xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = {{\[\[0\]\]}}>}
// CHECK: linalg.generic {{.*}}dist.sharding = {{.*}}split = {{\[\[0\]\]}}>
// CHECK: tensor.expand_shape {{.*}}{dist.sharding = {{.*}}split = {{\[\[0\]\]}}>}
// CHECK: linalg.generic {{.*}}dist.sharding = {{.*}}split = {{\[\[0\]\]}}>
func.func @backward(%x: tensor<32xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<32xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<32xf32>) outs(%e : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<32xf32>
  %c = tensor.expand_shape %n [[0, 1]] output_shape [4, 8] : tensor<32xf32> into tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) attrs = {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]]>} {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}

// A split that does not divide the merged group's outer dimension evenly
// (6 rows over 4 devices) has no contiguous form in the merged dimension:
// the propagation stops at the reshape.

// REMARK: remark: dist-propagate-sharding: 2 of 5 ops sharded (2 split, 0 of them ops upstream has no rule for), 0 values resharded for a consumer; 1 of 1 arguments sharded; 1 rounds; not propagated through: tensor.collapse_shape; not reached: linalg.generic, tensor.empty
// CHECK-LABEL: func.func @uneven(
// CHECK: tensor.collapse_shape
// CHECK-NOT: dist.sharding
// CHECK: return
func.func @uneven(%x: tensor<6x4xf32> {dist.sharding = #dist.sharding<mesh = <shape = [4]>, split = [[0]]>}) -> tensor<24xf32> {
  %e = tensor.empty() : tensor<6x4xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<6x4xf32>) outs(%e : tensor<6x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<6x4xf32>
  %c = tensor.collapse_shape %n [[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  %e2 = tensor.empty() : tensor<24xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%c : tensor<24xf32>) outs(%e2 : tensor<24xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<24xf32>
  return %o : tensor<24xf32>
}

// Nothing of the pass's own scaffolding is left: no copy, no shard ops.
// CHECK-NOT: module {
// CHECK-NOT: shard.
