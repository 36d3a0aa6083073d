// Every error of dist-synthesize-reductions: one diagnostic and a failing
// exit code.
// RUN: not distir-opt %s --dist-synthesize-reductions 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not distir-opt %s --dist-synthesize-reductions=cluster=dgx-z100 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not distir-opt %s --dist-synthesize-reductions=cluster=%t.missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16 algo=butterfly" 2>&1 | FileCheck %s --check-prefix=ALGO
// RUN: not distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16 master-collectives=some" 2>&1 | FileCheck %s --check-prefix=MASTERS
// RUN: not distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16 max-size=0" 2>&1 | FileCheck %s --check-prefix=SIZE0
// RUN: not distir-opt %s --dist-synthesize-reductions="cluster=gcp-a100x16 max-size=9" 2>&1 | FileCheck %s --check-prefix=SIZE9
// RUN: not distir-opt %s --dist-synthesize-reductions=cluster=gcp-a100x16 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// RUN: not distir-opt %s --dist-attach-cluster=cluster=gcp-a100x16 --dist-synthesize-reductions 2>&1 | FileCheck %s --check-prefix=OUTSIDE

// NONE: error: no cluster: pass cluster=NAME or cluster=path.json to dist-synthesize-reductions, or attach one with dist-attach-cluster
// NONE-NOT: error:
// UNKNOWN: error: unknown cluster preset 'dgx-z100'
// UNKNOWN-NOT: error:
// MISSING: error: cannot open cluster file '{{.*}}missing.json'
// MISSING-NOT: error:
// ALGO: for the --algo option: Cannot find option named 'butterfly'!
// MASTERS: for the --master-collectives option: Cannot find option named 'some'!
// SIZE0: error: max-size must be in 1..8, got 0
// SIZE9: error: max-size must be in 1..8, got 9

// One gcp-a100x16 node has 16 GPUs: device 16 is outside it.
// OUTSIDE: error: 'dist.all_reduce' op device 16 of the group is outside cluster 'gcp-a100x16' (16 devices)
// OUTSIDE-NOT: error:

!t0 = tensor<64xf32, #dist.device<0>>
!t1 = tensor<64xf32, #dist.device<1>>
!t16 = tensor<64xf32, #dist.device<16>>
!t17 = tensor<64xf32, #dist.device<17>>
func.func @f(%a: !t0, %b: !t1, %c: !t16, %d: !t17) -> (!t0, !t1, !t16, !t17) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t16, !t17
  return %r#0, %r#1, %r#2, %r#3 : !t0, !t1, !t16, !t17
}
