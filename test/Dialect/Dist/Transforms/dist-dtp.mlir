// RUN: distir-opt %s --dist-dtp=tp=2 --dist-verify-placement | FileCheck %s --check-prefix=TP
// RUN: distir-opt %s --dist-dtp=dp=2 --dist-verify-placement | FileCheck %s --check-prefix=DP
// RUN: distir-opt %s '--dist-dtp=dp=2 tp=2 mapping=dp-inner' --dist-verify-placement | FileCheck %s --check-prefix=MAP

// A two-layer MLP forward pass: x (batch 4) through W0 (column-split under
// tensor parallelism) and W1 (row-split).
!x = tensor<4x8xf32, #dist.device<0>>
!w = tensor<8x8xf32, #dist.device<0>>

// Megatron: one all-reduce for the column/row pair, no gathers.
// TP-LABEL: func.func @mlp_dtp
// TP-SAME: %arg0: tensor<4x8xf32, #dist.device<0>> {dist.batch_dim = 0 : i64}, %arg1: tensor<4x8xf32, #dist.device<1>> {dist.batch_dim = 0 : i64}
// TP-SAME: %arg2: tensor<8x4xf32, #dist.device<0>>, %arg3: tensor<8x4xf32, #dist.device<1>>
// TP-SAME: %arg4: tensor<4x8xf32, #dist.device<0>>, %arg5: tensor<4x8xf32, #dist.device<1>>
// TP: linalg.matmul {{.*}} -> tensor<4x4xf32, #dist.device<0>>
// TP: linalg.matmul {{.*}} -> tensor<4x4xf32, #dist.device<1>>
// TP-NOT: dist.all_gather
// TP: dist.all_reduce sum %{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
// TP-NOT: dist.all_
// TP: return
// The wrapper keeps the sequential signature: broadcast, slice, call, and
// the result of device 0.
// TP-LABEL: func.func @mlp(
// TP: dist.broadcast
// TP: tensor.extract_slice
// TP: call @mlp_dtp
// TP: return %{{.*}}#0 : tensor<4x8xf32, #dist.device<0>>

// Data parallelism: batch shards, no communication in the forward pass;
// the wrapper gathers the batch back.
// DP-LABEL: func.func @mlp_dtp
// DP-SAME: %arg0: tensor<2x8xf32, #dist.device<0>> {dist.batch_dim = 0 : i64}, %arg1: tensor<2x8xf32, #dist.device<1>> {dist.batch_dim = 0 : i64}
// DP-NOT: dist.{{[a-z_]+}} %
// DP-LABEL: func.func @mlp(
// DP: dist.all_gather %{{.*}}, %{{.*}} dim 0 : tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<1>>

// dp-inner: the data-parallel axis varies fastest in device ids, so the
// tensor-parallel pairs are devices {0, 2} and {1, 3}.
// MAP-LABEL: func.func @mlp_dtp
// MAP: dist.all_reduce sum %{{.*}}, %{{.*}} : tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<2>>
// MAP: dist.all_reduce sum %{{.*}}, %{{.*}} : tensor<2x8xf32, #dist.device<1>>, tensor<2x8xf32, #dist.device<3>>
func.func @mlp(%x: !x {dist.batch_dim = 0 : i64}, %w0: !w {dist.layer = 0 : i64},
               %w1: !w {dist.layer = 1 : i64}) -> !x {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !x
  %z = linalg.fill ins(%zero : f32) outs(%e : !x) -> !x
  %h = linalg.matmul ins(%x, %w0 : !x, !w) outs(%z : !x) -> !x
  %r = linalg.max ins(%h, %z : !x, !x) outs(%e : !x) -> !x
  %y = linalg.matmul ins(%r, %w1 : !x, !w) outs(%z : !x) -> !x
  return %y : !x
}
