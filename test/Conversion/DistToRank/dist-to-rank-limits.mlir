// RUN: not distir-opt --dist-to-rank=num-ranks=4611686018427387904 %s 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not distir-opt --dist-to-rank=num-ranks=-3 %s 2>&1 | FileCheck %s --check-prefix=NEG
// HUGE: error: 'func.func' op num-ranks=4611686018427387904: dist-to-rank builds one function per rank, for 1 to 65536 ranks
// NEG: error: 'func.func' op num-ranks=-3: dist-to-rank builds one function per rank, for 1 to 65536 ranks
!t = tensor<4xf32, #dist.device<0>>
func.func @f(%x: !t) -> !t {
  return %x : !t
}
