// Two pipeline stages: stage 0 computes, sends to stage 1, which computes
// and sends back; inputs from .npy files; reference executor equality.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(3); np.save('%t/x.npy', r.standard_normal((4, 8)).astype(np.float32)); np.save('%t/w.npy', r.standard_normal((8, 8)).astype(np.float32)); np.save('%t/v.npy', r.standard_normal((8, 4)).astype(np.float32))"
// RUN: distir-run %s --input x=%t/x.npy --input 1=%t/w.npy --input 2=%t/v.npy --output-dir %t/ref > /dev/null
// RUN: mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %s --input x=%t/x.npy --input 1=%t/w.npy --input 2=%t/v.npy --output-dir %t/mpi | FileCheck %s
// RUN: %python %S/Inputs/compare.py %t/ref %t/mpi | FileCheck %s --check-prefix=CMP
// CHECK-DAG: rank 0: output #0: tensor<4x4xf32, #dist.device<0>>
// CHECK-DAG: rank 1: output #1: tensor<4x8xf32, #dist.device<1>>
// CMP: OK 2 outputs

func.func @stages(%x: tensor<4x8xf32, #dist.device<0>> {dist.name = "x"},
                  %w: tensor<8x8xf32, #dist.device<0>>,
                  %v: tensor<8x4xf32, #dist.device<1>>)
    -> (tensor<4x4xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x8xf32, #dist.device<0>>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %h = linalg.matmul ins(%x, %w : tensor<4x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>) outs(%z0 : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %h1 = dist.send %h : tensor<4x8xf32, #dist.device<0>> -> tensor<4x8xf32, #dist.device<1>>
  %e1 = tensor.empty() : tensor<4x4xf32, #dist.device<1>>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x4xf32, #dist.device<1>>) -> tensor<4x4xf32, #dist.device<1>>
  %y = linalg.matmul ins(%h1, %v : tensor<4x8xf32, #dist.device<1>>, tensor<8x4xf32, #dist.device<1>>) outs(%z1 : tensor<4x4xf32, #dist.device<1>>) -> tensor<4x4xf32, #dist.device<1>>
  %y0 = dist.send %y : tensor<4x4xf32, #dist.device<1>> -> tensor<4x4xf32, #dist.device<0>>
  return %y0, %h1 : tensor<4x4xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
}
