// RUN: not distir-opt %s --dist-pase='devices=2' -split-input-file 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// RUN: not distir-opt %s --dist-pase='devices=9 cluster=dgx-h100' -split-input-file 2>&1 | FileCheck %s --check-prefix=DEVICES
// RUN: not distir-opt %s --dist-pase='devices=2 cluster=dgx-h100 order=random' -split-input-file 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not distir-opt %s --dist-pase='devices=2 cluster=no-such-cluster' -split-input-file 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not distir-opt %s --dist-pase='devices=4 cluster=dgx-h100 max-table=2' -split-input-file 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not distir-opt %s --dist-pase='devices=4 cluster=dgx-h100 max-configs=0' -split-input-file 2>&1 | FileCheck %s --check-prefix=CONFIGS

// Every error of dist-pase is one line naming the cause.

// NOCLUSTER: error: no cluster: pass cluster=NAME or cluster=path.json to dist-pase, or attach one with dist-attach-cluster
// DEVICES: error: dist-pase: devices=9 must be between 1 and the 8 devices of cluster 'dgx-h100'
// ORDER: for the --order option: Cannot find option named 'random'!
// UNKNOWN: error: {{.*}}no-such-cluster
// CONFIGS: error: dist-pase: max-configs must be positive, got 0
// BUDGET: error: dist-pase: the dependent set of vertex {{[0-9]+}} (1 vertices) needs a table of more than 2 entries
func.func @two(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %a = linalg.add ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = linalg.add ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %b : tensor<8x8xf32>
}
