// RUN: distir-opt %s '--dist-dtp=dp=2 report=true' -o %t.mlir 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=IR < %t.mlir
// RUN: distir-opt %s '--dist-dtp=dp=2' -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=QUIET

// A softmax over the batch dimension reads the whole batch: dist-dtp
// gathers it there, and with report=true says so at the op (once per op).
!t = tensor<4x8xf32, #dist.device<0>>
func.func @main(%x: !t {dist.batch_dim = 0 : i64}) -> (!t, !t) {
  %e = tensor.empty() : !t
  // CHECK: dist-dtp-batch-gather.mlir:[[@LINE+1]]:8: remark: dp=2 microbatches=1: the batch (dim 0 of 'tensor<2x8xf32, #dist.device<0>>' per piece) is gathered for this op
  %s = linalg.softmax dimension(0) ins(%x : !t) outs(%e : !t) -> !t
  %e2 = tensor.empty() : !t
  %r = linalg.softmax dimension(1) ins(%x : !t) outs(%e2 : !t) -> !t
  return %s, %r : !t, !t
}
// CHECK-NOT: is gathered
// IR-LABEL: func.func @main_dtp
// IR-COUNT-1: dist.all_gather
// IR-NOT: dist.all_gather
// IR: return
// QUIET-NOT: remark
