// Padding that would change what the program computes, or that the pass
// cannot express, is refused with the op and the reason; the module is left
// as it was.
// RUN: not distir-opt %s --split-input-file --dist-pad-dimension="arg=w dim=1 size=12" -o /dev/null 2>&1 | FileCheck %s
// Options.
// RUN: not distir-opt %s --split-input-file --dist-pad-dimension="arg=nope dim=1 size=12" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOARG
// RUN: not distir-opt %s --split-input-file --dist-pad-dimension="arg=w dim=2 size=12" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NODIM
// RUN: not distir-opt %s --split-input-file --dist-pad-dimension="arg=w dim=1 size=9" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not distir-opt %s --split-input-file --dist-pad-dimension="arg=w dim=1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSIZE
// NOARG: error: dist-pad-dimension: @sum_plus_one has no argument 'nope' (a dist.name or an argument number)
// NODIM: error: dist-pad-dimension: argument 'w' has no static dimension 2
// SMALL: error: dist-pad-dimension: cannot pad dimension 1 of 'w' to 9: the padded size 9 does not exceed the dimension's size 9
// NOSIZE: error: dist-pad-dimension: give size=N or multiple=M

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A sum of x + 1 over the classes: padded positions would add 1 each, with
// zeros as with -inf.
func.func @sum_plus_one(%x: tensor<4x8xf32>, %w: tensor<8x9xf32> {dist.name = "w"}) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x9xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x9xf32>) outs(%f0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: error: dist-pad-dimension: cannot pad dimension 1 of 'w' to 12: 'linalg.generic' reduces over the padded dimension, and its padded positions would change the result
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<4x9xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %p = arith.addf %a, %one : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A reshape that merges the padded dimension with the rows.
func.func @merged(%x: tensor<4x8xf32>, %w: tensor<8x9xf32> {dist.name = "w"}) -> tensor<36xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x9xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x9xf32>) outs(%f0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: error: dist-pad-dimension: cannot pad dimension 1 of 'w' to 12: 'tensor.collapse_shape' merges the padded dimension with another
  %c = tensor.collapse_shape %y [[0, 1]] : tensor<4x9xf32> into tensor<36xf32>
  return %c : tensor<36xf32>
}

// -----

// A slice of part of the padded dimension.
func.func @sliced(%x: tensor<4x8xf32>, %w: tensor<8x9xf32> {dist.name = "w"}) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x9xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x9xf32>) outs(%f0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: error: dist-pad-dimension: cannot pad dimension 1 of 'w' to 12: 'tensor.extract_slice' slices the padded dimension
  %s = tensor.extract_slice %y[0, 0] [4, 4] [1, 1] : tensor<4x9xf32> to tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// The weight read inside a body at a loop's index (a lookup by a data
// index reads an old row and is allowed), not through the loop.
func.func @gathered(%i: tensor<4xindex>, %w: tensor<8x9xf32> {dist.name = "w"}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%i : tensor<4xindex>) outs(%e : tensor<4xf32>) {
  ^bb0(%k: index, %o: f32):
    %c0 = arith.constant 0 : index
    %l = linalg.index 0 : index
    // CHECK: :[[@LINE+1]]:{{[0-9]+}}: error: dist-pad-dimension: cannot pad dimension 1 of 'w' to 12: 'tensor.extract' reads the padded dimension inside another op's region (no padding rule for it)
    %v = tensor.extract %w[%k, %l] : tensor<8x9xf32>
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// A body that reads a table by the padded index would read past its end.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @table(%x: tensor<4x8xf32>, %w: tensor<8x9xf32> {dist.name = "w"}, %t: tensor<9xf32>) -> tensor<4x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x9xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x9xf32>) outs(%f0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  %e1 = tensor.empty() : tensor<4x9xf32>
  // CHECK: :[[@LINE+1]]:{{[0-9]+}}: error: dist-pad-dimension: cannot pad dimension 1 of 'w' to 12: 'linalg.generic' reads a tensor inside its body
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<4x9xf32>) outs(%e1 : tensor<4x9xf32>) {
  ^bb0(%a: f32, %o: f32):
    %j = linalg.index 1 : index
    %v = tensor.extract %t[%j] : tensor<9xf32>
    %r = arith.addf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x9xf32>
  return %s : tensor<4x9xf32>
}
