// RUN: not distir-opt %s --dist-low-precision=type=f16 -split-input-file 2>&1 | FileCheck %s

// A program that already mixes float types is refused at the cast.
func.func @mixed(%x: tensor<4xf32>) -> tensor<4xf16> {
  %e = tensor.empty() : tensor<4xf16>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf16>) {
  ^bb0(%a: f32, %o: f16):
    // CHECK: :[[@LINE+1]]:10: error: 'arith.truncf' op dist-low-precision expects a program in one floating-point type (f32), not one with casts
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// An external function's types cannot change with the program's.
// CHECK: :[[@LINE+1]]:1: error: 'func.func' op dist-low-precision cannot change the types of an external function
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// -----

// CHECK: :[[@LINE+1]]:1: error: 'func.func' op dist-low-precision expects functions of one block
func.func @branches(%x: tensor<4xf32>) -> tensor<4xf32> {
  cf.br ^next
^next:
  return %x : tensor<4xf32>
}
