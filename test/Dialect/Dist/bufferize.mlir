// Upstream one-shot bufferization accepts placed tensors. By default it
// drops the placement (harmless once a program is projected to one rank);
// with use-encoding-for-memory-space the device becomes the memref's memory
// space.
// RUN: distir-opt %s --one-shot-bufferize=bufferize-function-boundaries | FileCheck %s --check-prefix=DROP
// RUN: distir-opt %s '--one-shot-bufferize=bufferize-function-boundaries use-encoding-for-memory-space' | FileCheck %s --check-prefix=SPACE

!t = tensor<4x8xf32, #dist.device<1>>

// DROP-LABEL: func.func @add
// DROP: memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
// DROP: linalg.add
// SPACE-LABEL: func.func @add
// SPACE-SAME: memref<4x8xf32, strided<[?, ?], offset: ?>, #dist.device<1>>
// SPACE: memref.alloc() {alignment = 64 : i64} : memref<4x8xf32, #dist.device<1>>
// SPACE: linalg.add
func.func @add(%x: !t, %y: !t) -> !t {
  %e = tensor.empty() : !t
  %a = linalg.add ins(%x, %y : !t, !t) outs(%e : !t) -> !t
  return %a : !t
}
