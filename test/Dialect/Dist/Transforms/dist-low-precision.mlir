// RUN: distir-opt %s --dist-low-precision=type=bf16 -split-input-file | FileCheck %s
// RUN: distir-opt %s --dist-low-precision=type=f32 -split-input-file | FileCheck %s --check-prefix=SAME
// RUN: not distir-opt %s --dist-low-precision=type=f8 2>&1 | FileCheck %s --check-prefix=BADTYPE

// Float arguments (inputs and weights), constants, every value and the
// results become the low type, without casts; integer arguments stay.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %{{.*}}: tensor<4x8xbf16> {dist.batch_dim = 0 : i64}, %{{.*}}: tensor<8x8xbf16>, %{{.*}}: tensor<4xi64>) -> (tensor<4x8xbf16>, tensor<4xi64>)
// CHECK: arith.constant 0.000000e+00 : bf16
// CHECK: arith.constant dense<1.000000e+00> : tensor<8xbf16>
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x8xbf16>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK: ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: bf16):
// CHECK: return %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<4xi64>
// SAME-LABEL: func.func @mlp(
// SAME-SAME: tensor<4x8xf32>
func.func @mlp(%x: tensor<4x8xf32> {dist.batch_dim = 0 : i64}, %w: tensor<8x8xf32>, %ids: tensor<4xi64>) -> (tensor<4x8xf32>, tensor<4xi64>) {
  %zero = arith.constant 0.0 : f32
  %bias = arith.constant dense<1.0> : tensor<8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%y, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %b, %ids : tensor<4x8xf32>, tensor<4xi64>
}

// -----

// A private callee is lowered with its caller.
// CHECK-LABEL: func.func private @double(
// CHECK-SAME: tensor<4xbf16>) -> tensor<4xbf16>
// CHECK-LABEL: func.func @caller(
// CHECK: call @double(%{{.*}}) : (tensor<4xbf16>) -> tensor<4xbf16>
func.func private @double(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.add ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
func.func @caller(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @double(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// BADTYPE: for the --type option: Cannot find option named 'f8'!
