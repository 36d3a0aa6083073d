// Memory under --cost-model distir-compat follows DistIR's simulator: every
// op output and every collective result is a new allocation (no in-place
// all-reduce, no result written over a dead argument), except the
// optimizer's updates (`dist.phase = "update"`), which DistIR applies in
// place. The analytic model of the same programs, for comparison.
// RUN: distir-sim %s --entry all_reduce --cluster distir-uniform:devices=2 --cost-model distir-compat | FileCheck %s --check-prefix=COMPAT-AR
// RUN: distir-sim %s --entry all_reduce --cluster distir-uniform:devices=2 | FileCheck %s --check-prefix=ANALYTIC-AR
// RUN: distir-sim %s --entry returned --cluster distir-uniform:devices=2 --cost-model distir-compat | FileCheck %s --check-prefix=COMPAT-RET
// RUN: distir-sim %s --entry returned --cluster distir-uniform:devices=2 | FileCheck %s --check-prefix=ANALYTIC-RET
// RUN: distir-sim %s --entry update --cluster distir-uniform:devices=2 --cost-model distir-compat | FileCheck %s --check-prefix=COMPAT-UPDATE

!t0 = tensor<1024xf32, #dist.device<0>>       // 4096 bytes
!t1 = tensor<1024xf32, #dist.device<1>>

// Resident %x 4096, %a 4096, the all-reduce's result 4096 more before %a is
// freed: 12288 (in place: 8192).
// COMPAT-AR: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 12288 {{[0-9]+}} 4096
// ANALYTIC-AR: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 8192 {{[0-9]+}} 4096
func.func @all_reduce(%x: !t0, %y: !t1) -> (!t0, !t1) {
  %a = arith.addf %x, %x : !t0
  %b = arith.addf %y, %y : !t1
  %r:2 = dist.all_reduce sum %a, %b : !t0, !t1
  return %r#0, %r#1 : !t0, !t1
}

#id = affine_map<(d0) -> (d0)>
// A returned element-wise result of the dead argument %x: a new buffer in
// DistIR (8192), the argument's own buffer for the analytic model (4096).
// COMPAT-RET: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 8192 {{[0-9]+}} 4096
// ANALYTIC-RET: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 4096 {{[0-9]+}} 4096
func.func @returned(%x: !t0, %y: !t1) -> (!t0, !t1) {
  %e = tensor.empty() : !t0
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : !t0) outs(%e : !t0) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> !t0
  return %r, %y : !t0, !t1
}

// The same op tagged as an optimizer update writes over %x: 4096.
// COMPAT-UPDATE: 0 {{[^ ]+ +[^ ]+ +[^ ]+}} 4096 {{[0-9]+}} 4096
func.func @update(%x: !t0, %y: !t1) -> (!t0, !t1) {
  %e = tensor.empty() : !t0
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : !t0) outs(%e : !t0) attrs = {dist.phase = "update"} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> !t0
  return %r, %y : !t0, !t1
}
