// How much communication the step waits for: each communication op's time
// summed over its events, and the exposed part (on the critical path and
// not overlapped by compute on the device where the path goes on). An
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

// OVERLAP: communication by op (summed over its events; exposed: on the critical path and not overlapped by compute on the device where the path goes on):
// OVERLAP-NEXT: dist.all_reduce 1 events 3.355443e-04 s, exposed 0.000000e+00 s
// SYNC: communication by op (summed over its events; exposed: on the critical path and not overlapped by compute on the device where the path goes on):
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

// An all-reduce whose result the next op needs is on the critical path; a
// 512^3 matmul (3.1504130e-05 s) runs meanwhile on the device where the
// path goes on, so that much of it is overlapped:
// 3.3554432e-04 - 3.1504130e-05 = 3.0404019e-04 s exposed.
// RUN: distir-sim %s --entry partly --cluster distir-uniform --cost-model distir-compat --overlap | FileCheck %s --check-prefix=PARTLY
// PARTLY: critical path (2 ops):
// PARTLY-NEXT: dist.all_reduce
// PARTLY-NEXT: arith.addf
// PARTLY: dist.all_reduce 1 events 3.355443e-04 s, exposed 3.040402e-04 s
!s0 = tensor<512x512xf32, #dist.device<0>>
!s1 = tensor<512x512xf32, #dist.device<1>>
func.func @partly(%g0: !g0, %g1: !g1, %x0: !s0, %x1: !s1) -> (!g0, !g1, !s0, !s1) {
  %r:2 = dist.all_reduce sum %g0, %g1 : !g0, !g1
  %e0 = tensor.empty() : !s0
  %p0 = linalg.matmul ins(%x0, %x0 : !s0, !s0) outs(%e0 : !s0) -> !s0
  %e1 = tensor.empty() : !s1
  %p1 = linalg.matmul ins(%x1, %x1 : !s1, !s1) outs(%e1 : !s1) -> !s1
  %a0 = arith.addf %r#0, %r#0 : !g0
  %a1 = arith.addf %r#1, %r#1 : !g1
  return %a0, %a1, %p0, %p1 : !g0, !g1, !s0, !s1
}
