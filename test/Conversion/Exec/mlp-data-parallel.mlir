// The data-parallel example under mpirun -np 2 equals the reference executor.
// RUN: rm -rf %t && mkdir -p %t
// RUN: distir-run %distir_src_root/examples/mlp-data-parallel.mlir --random-inputs 7 --output-dir %t/ref > /dev/null
// RUN: mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %distir_src_root/examples/mlp-data-parallel.mlir --random-inputs 7 --output-dir %t/mpi --timeout 60 | FileCheck %s
// RUN: %python %S/Inputs/compare.py %t/ref %t/mpi | FileCheck %s --check-prefix=CMP
// CHECK-DAG: rank 0: output #0: tensor<4x8xf32, #dist.device<0>>
// CHECK-DAG: rank 0: output #2: tensor<16x8xf32, #dist.device<0>>
// CHECK-DAG: rank 1: output #1: tensor<4x8xf32, #dist.device<1>>
// CHECK-DAG: rank 1: output #3: tensor<16x8xf32, #dist.device<1>>
// CMP: OK 4 outputs
