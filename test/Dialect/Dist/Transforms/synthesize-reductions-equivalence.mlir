// The reference executor gives the same outputs before and after
// dist-synthesize-reductions (random inputs, NumPy allclose), for sum, max,
// avg and integer reductions, shuffled operand orders, a dimension 0 that
// does not divide by the group, two and three hierarchy levels, and ring and
// tree pricing.
// RUN: rm -rf %t && mkdir -p %t
// RUN: distir-opt %s --dist-synthesize-reductions=cluster=gcp-a100x16:nodes=2 --dist-verify-placement -o %t/ring.mlir
// RUN: distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16:nodes=2 algo=tree" --dist-verify-placement -o %t/tree.mlir
// RUN: distir-opt %s --dist-synthesize-reductions=cluster=gcp-v100x8:nodes=4 --dist-verify-placement -o %t/v100.mlir
// RUN: FileCheck %s --check-prefix=RING < %t/ring.mlir
// RUN: FileCheck %s --check-prefix=V100 < %t/v100.mlir
// RUN: %python -c "import subprocess as s, numpy as np; T='%t'; E=['sum8', 'max_shuffled', 'avg_odd', 'int_sum', 'three_levels']; F={'orig': '%s', 'ring': T + '/ring.mlir', 'tree': T + '/tree.mlir', 'v100': T + '/v100.mlir'}; [s.run(['distir-run', f, '--entry', e, '--random-inputs', '7', '--output-dir', f'{T}/{c}/{e}'], check=True, stdout=s.DEVNULL) for c, f in F.items() for e in E]; L=lambda c, e, i: np.load(f'{T}/{c}/{e}/output_{i}.npy'); N={'sum8': 8, 'max_shuffled': 4, 'avg_odd': 4, 'int_sum': 4, 'three_levels': 8}; [print(c, e, all(L('orig', e, i).shape == L(c, e, i).shape and np.allclose(L('orig', e, i), L(c, e, i), rtol=1e-5, atol=1e-5) for i in range(N[e]))) for c in F if c != 'orig' for e in E]" | FileCheck %s

// CHECK-COUNT-15: {{(ring|tree|v100) [a-z0-9_]+ True}}
// CHECK-NOT: False

// On two gcp-a100x16 nodes (ring) every all_reduce across nodes is replaced;
// @three_levels lies inside node 0 and keeps its all_reduce.
// RING-LABEL: func.func @sum8
// RING: dist.reduce_scatter sum
// RING-LABEL: func.func @max_shuffled
// RING: dist.reduce_scatter max
// RING-LABEL: func.func @avg_odd
// RING: dist.reduce avg
// RING-LABEL: func.func @int_sum
// RING: dist.reduce_scatter sum
// RING-LABEL: func.func @three_levels
// RING-NEXT: dist.all_reduce sum

// On gcp-v100x8 (node:4, cpu:2, gpu:4) @three_levels spans three levels.
// V100-LABEL: func.func @three_levels
// V100-NOT: dist.all_reduce sum {{.*}}, {{.*}}, {{.*}}, {{.*}}, {{.*}} :
// V100: dist.reduce_scatter sum
// V100: return

func.func @sum8(%a0: tensor<64x8xf32, #dist.device<0>>, %a1: tensor<64x8xf32, #dist.device<1>>, %a2: tensor<64x8xf32, #dist.device<2>>, %a3: tensor<64x8xf32, #dist.device<3>>, %a4: tensor<64x8xf32, #dist.device<16>>, %a5: tensor<64x8xf32, #dist.device<17>>, %a6: tensor<64x8xf32, #dist.device<18>>, %a7: tensor<64x8xf32, #dist.device<19>>)
    -> (tensor<64x8xf32, #dist.device<0>>, tensor<64x8xf32, #dist.device<1>>, tensor<64x8xf32, #dist.device<2>>, tensor<64x8xf32, #dist.device<3>>, tensor<64x8xf32, #dist.device<16>>, tensor<64x8xf32, #dist.device<17>>, tensor<64x8xf32, #dist.device<18>>, tensor<64x8xf32, #dist.device<19>>) {
  %r:8 = dist.all_reduce sum %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7
      : tensor<64x8xf32, #dist.device<0>>, tensor<64x8xf32, #dist.device<1>>, tensor<64x8xf32, #dist.device<2>>, tensor<64x8xf32, #dist.device<3>>, tensor<64x8xf32, #dist.device<16>>, tensor<64x8xf32, #dist.device<17>>, tensor<64x8xf32, #dist.device<18>>, tensor<64x8xf32, #dist.device<19>>
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : tensor<64x8xf32, #dist.device<0>>, tensor<64x8xf32, #dist.device<1>>, tensor<64x8xf32, #dist.device<2>>, tensor<64x8xf32, #dist.device<3>>, tensor<64x8xf32, #dist.device<16>>, tensor<64x8xf32, #dist.device<17>>, tensor<64x8xf32, #dist.device<18>>, tensor<64x8xf32, #dist.device<19>>
}
func.func @max_shuffled(%a0: tensor<64x8xf32, #dist.device<0>>, %a1: tensor<64x8xf32, #dist.device<1>>, %a2: tensor<64x8xf32, #dist.device<16>>, %a3: tensor<64x8xf32, #dist.device<17>>)
    -> (tensor<64x8xf32, #dist.device<17>>, tensor<64x8xf32, #dist.device<0>>, tensor<64x8xf32, #dist.device<16>>, tensor<64x8xf32, #dist.device<1>>) {
  %r:4 = dist.all_reduce max %a3, %a0, %a2, %a1
      : tensor<64x8xf32, #dist.device<17>>, tensor<64x8xf32, #dist.device<0>>, tensor<64x8xf32, #dist.device<16>>, tensor<64x8xf32, #dist.device<1>>
  return %r#0, %r#1, %r#2, %r#3 : tensor<64x8xf32, #dist.device<17>>, tensor<64x8xf32, #dist.device<0>>, tensor<64x8xf32, #dist.device<16>>, tensor<64x8xf32, #dist.device<1>>
}
func.func @avg_odd(%a0: tensor<63x5xf32, #dist.device<0>>, %a1: tensor<63x5xf32, #dist.device<1>>, %a2: tensor<63x5xf32, #dist.device<16>>, %a3: tensor<63x5xf32, #dist.device<17>>)
    -> (tensor<63x5xf32, #dist.device<0>>, tensor<63x5xf32, #dist.device<1>>, tensor<63x5xf32, #dist.device<16>>, tensor<63x5xf32, #dist.device<17>>) {
  %r:4 = dist.all_reduce avg %a0, %a1, %a2, %a3
      : tensor<63x5xf32, #dist.device<0>>, tensor<63x5xf32, #dist.device<1>>, tensor<63x5xf32, #dist.device<16>>, tensor<63x5xf32, #dist.device<17>>
  return %r#0, %r#1, %r#2, %r#3 : tensor<63x5xf32, #dist.device<0>>, tensor<63x5xf32, #dist.device<1>>, tensor<63x5xf32, #dist.device<16>>, tensor<63x5xf32, #dist.device<17>>
}
func.func @int_sum(%a0: tensor<32x4xi32, #dist.device<0>>, %a1: tensor<32x4xi32, #dist.device<1>>, %a2: tensor<32x4xi32, #dist.device<16>>, %a3: tensor<32x4xi32, #dist.device<17>>)
    -> (tensor<32x4xi32, #dist.device<0>>, tensor<32x4xi32, #dist.device<1>>, tensor<32x4xi32, #dist.device<16>>, tensor<32x4xi32, #dist.device<17>>) {
  %r:4 = dist.all_reduce sum %a0, %a1, %a2, %a3
      : tensor<32x4xi32, #dist.device<0>>, tensor<32x4xi32, #dist.device<1>>, tensor<32x4xi32, #dist.device<16>>, tensor<32x4xi32, #dist.device<17>>
  return %r#0, %r#1, %r#2, %r#3 : tensor<32x4xi32, #dist.device<0>>, tensor<32x4xi32, #dist.device<1>>, tensor<32x4xi32, #dist.device<16>>, tensor<32x4xi32, #dist.device<17>>
}
func.func @three_levels(%a0: tensor<64x4xf32, #dist.device<0>>, %a1: tensor<64x4xf32, #dist.device<1>>, %a2: tensor<64x4xf32, #dist.device<4>>, %a3: tensor<64x4xf32, #dist.device<5>>, %a4: tensor<64x4xf32, #dist.device<8>>, %a5: tensor<64x4xf32, #dist.device<9>>, %a6: tensor<64x4xf32, #dist.device<12>>, %a7: tensor<64x4xf32, #dist.device<13>>)
    -> (tensor<64x4xf32, #dist.device<0>>, tensor<64x4xf32, #dist.device<1>>, tensor<64x4xf32, #dist.device<4>>, tensor<64x4xf32, #dist.device<5>>, tensor<64x4xf32, #dist.device<8>>, tensor<64x4xf32, #dist.device<9>>, tensor<64x4xf32, #dist.device<12>>, tensor<64x4xf32, #dist.device<13>>) {
  %r:8 = dist.all_reduce sum %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7
      : tensor<64x4xf32, #dist.device<0>>, tensor<64x4xf32, #dist.device<1>>, tensor<64x4xf32, #dist.device<4>>, tensor<64x4xf32, #dist.device<5>>, tensor<64x4xf32, #dist.device<8>>, tensor<64x4xf32, #dist.device<9>>, tensor<64x4xf32, #dist.device<12>>, tensor<64x4xf32, #dist.device<13>>
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : tensor<64x4xf32, #dist.device<0>>, tensor<64x4xf32, #dist.device<1>>, tensor<64x4xf32, #dist.device<4>>, tensor<64x4xf32, #dist.device<5>>, tensor<64x4xf32, #dist.device<8>>, tensor<64x4xf32, #dist.device<9>>, tensor<64x4xf32, #dist.device<12>>, tensor<64x4xf32, #dist.device<13>>
}
