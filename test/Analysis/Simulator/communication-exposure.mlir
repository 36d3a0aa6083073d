// How much communication the step waits for: each communication op's time
// summed over its events, and the part on the critical path (exposed). An
// all-reduce of 1 MiB (3.3554432e-04 s) next to an independent 2048^3
// matmul (longer) is hidden with separate compute and communication
// streams, and fully exposed when each device runs one op at a time.
// RUN: distir-sim %s --entry step --cluster distir-uniform --cost-model distir-compat --overlap | FileCheck %s --check-prefix=OVERLAP
// RUN: distir-sim %s --entry step --cluster distir-uniform --cost-model distir-compat | FileCheck %s --check-prefix=SYNC
// RUN: distir-sim %s --entry step --cluster distir-uniform --cost-model distir-compat --overlap --format json | FileCheck %s --check-prefix=JSON

!g0 = tensor<262144xf32, #dist.device<0>>
!g1 = tensor<262144xf32, #dist.device<1>>
!m0 = tensor<2048x2048xf32, #dist.device<0>>
!m1 = tensor<2048x2048xf32, #dist.device<1>>

// OVERLAP: communication by op (summed over its events; exposed: on the critical path, not hidden behind compute):
// OVERLAP-NEXT: dist.all_reduce 1 events 3.355443e-04 s, exposed 0.000000e+00 s
// SYNC: communication by op (summed over its events; exposed: on the critical path, not hidden behind compute):
// SYNC-NEXT: dist.all_reduce 1 events 3.355443e-04 s, exposed 3.355443e-04 s
// JSON: "communication": [
// JSON-NEXT: {
// JSON-NEXT: "events": 1,
// JSON-NEXT: "exposed_s": 0,
// JSON-NEXT: "op": "dist.all_reduce",
// JSON-NEXT: "total_s": 0.0003355443{{[0-9]*}}
func.func @step(%g0: !g0, %g1: !g1, %x0: !m0, %x1: !m1) -> (!g0, !g1, !m0, !m1) {
  %r:2 = dist.all_reduce sum %g0, %g1 : !g0, !g1
  %e0 = tensor.empty() : !m0
  %p0 = linalg.matmul ins(%x0, %x0 : !m0, !m0) outs(%e0 : !m0) -> !m0
  %e1 = tensor.empty() : !m1
  %p1 = linalg.matmul ins(%x1, %x1 : !m1, !m1) outs(%e1 : !m1) -> !m1
  return %r#0, %r#1, %p0, %p1 : !g0, !g1, !m0, !m1
}

// A program without communication prints no such section.
// RUN: distir-sim %s --entry compute_only --cluster distir-uniform | FileCheck %s --check-prefix=NONE
// NONE: critical path
// NONE-NOT: communication by op
func.func @compute_only(%x0: !m0) -> !m0 {
  %e0 = tensor.empty() : !m0
  %p0 = linalg.matmul ins(%x0, %x0 : !m0, !m0) outs(%e0 : !m0) -> !m0
  return %p0 : !m0
}
