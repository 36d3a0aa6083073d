// distir-sim --peak-buffers N lists what holds a device's memory at its
// peak: the N largest live buffers, largest first, with the op that
// allocated each (or the argument's dist.name) and its location.
// RUN: distir-sim %s --entry main --cluster distir-uniform:devices=1 --peak-buffers 4 | FileCheck %s
// RUN: distir-sim %s --entry main --cluster distir-uniform:devices=1 --peak-buffers 1 --format json | FileCheck %s --check-prefix=JSON
// RUN: not distir-sim %s --entry main --cluster distir-uniform:devices=1 --peak-buffers -1 2>&1 | FileCheck %s --check-prefix=NEG

!w = tensor<64x64xf32, #dist.device<0>>   // 16384 bytes
!a = tensor<16x64xf32, #dist.device<0>>   // 4096 bytes

// Resident: %w (16384) and %x (4096). The peak is reached when the second
// matmul allocates %h while it reads %t (16384): 20480 + 16384 + 4096.
// After it %t is dead, so %y's matmul peaks lower (28672).
// CHECK:      peak mem (B)
// CHECK-NEXT: 0 {{.*}} 40960 {{[0-9-]+}} 20480
// CHECK:      largest buffers live at the peak of device 0:
// CHECK-NEXT: 16384 weights       w loc(
func.func @main(%w: !w {dist.name = "w"}, %x: !a {dist.name = "x"}) -> !a {
  // CHECK-NEXT: 16384 activations   tensor.empty loc("{{.*}}peak-buffers.mlir":[[#@LINE+2]]:
  // CHECK-NEXT: 4096 weights       x loc(
  %t0 = tensor.empty() : !w
  %t = linalg.matmul ins(%w, %w : !w, !w) outs(%t0 : !w) -> !w
  // CHECK-NEXT: 4096 activations   tensor.empty loc("{{.*}}peak-buffers.mlir":[[#@LINE+2]]:
  // CHECK-NEXT: critical path
  %e = tensor.empty() : !a
  %h = linalg.matmul ins(%x, %t : !a, !w) outs(%e : !a) -> !a
  %e2 = tensor.empty() : !a
  %y = linalg.matmul ins(%h, %w : !a, !w) outs(%e2 : !a) -> !a
  return %y : !a
}

// JSON:      "peak_buffers": [
// JSON-NEXT:   {
// JSON-NEXT:     "bytes": 16384,
// JSON-NEXT:     "definer": "w",
// JSON-NEXT:     "kind": "weights",
// JSON-NEXT:     "location": "loc(
// JSON-NEXT:   }
// JSON-NEXT: ],
// NEG: error: --peak-buffers must not be negative
