// RUN: distir-opt --dist-to-rank=num-ranks=2 -split-input-file -verify-diagnostics %s
// RUN: distir-opt --dist-to-rank=num-ranks=4 %s | FileCheck %s

// CHECK: func.func @f_rank3() attributes {{{.*}}dist_rank.num_ranks = 4
!t2 = tensor<4xf32, #dist.device<2>>
// expected-error @+1 {{argument #0 is on device 2 but the program has 2 ranks}}
func.func @f(%x: !t2) -> !t2 {
  return %x : !t2
}

