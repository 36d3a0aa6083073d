// With separate compute and communication streams, the all-reduce of the
// first gradient overlaps the compute of the second (data parallelism with
// gradient bucketing); without them it waits. Overlap is never slower.
// RUN: distir-sim %s --cluster distir-uniform --cost-model distir-compat | FileCheck %s --check-prefix=SYNC
// RUN: distir-sim %s --cluster distir-uniform --cost-model distir-compat --overlap | FileCheck %s --check-prefix=OVERLAP

!g0 = tensor<262144xf32, #dist.device<0>>  // 1 MiB
!g1 = tensor<262144xf32, #dist.device<1>>

// add: 1e-5 + 2*1048576/9e11 + 262144/1.4e13 = 1.2348894e-05 s.
// all_reduce (n=2): 1048576/3.125e9 = 3.3554432e-04 s.
// Sync: add0 || add1, ar1, add0' || add1', ar2:
//   2*1.2348894e-05 + 2*3.3554432e-04 = 6.9578643e-04.
// SYNC: latency: 6.957864269e-04 s
// Overlap: the second adds run during the first all-reduce; the second
// all-reduce starts when the first ends: 1.2348894e-05 + 2*3.3554432e-04.
// OVERLAP: compute/communication overlap
// OVERLAP: latency: 6.834375335e-04 s
func.func @dp_step(%a0: !g0, %a1: !g1, %b0: !g0, %b1: !g1) -> (!g0, !g1, !g0, !g1) {
  %ga0 = arith.addf %a0, %a0 : !g0
  %ga1 = arith.addf %a1, %a1 : !g1
  %ra:2 = dist.all_reduce sum %ga0, %ga1 : !g0, !g1
  %gb0 = arith.addf %b0, %b0 : !g0
  %gb1 = arith.addf %b1, %b1 : !g1
  %rb:2 = dist.all_reduce sum %gb0, %gb1 : !g0, !g1
  return %ra#0, %ra#1, %rb#0, %rb#1 : !g0, !g1, !g0, !g1
}
