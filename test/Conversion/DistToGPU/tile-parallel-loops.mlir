// RUN: distir-opt --dist-gpu-tile-parallel-loops=block-size=32 %s | FileCheck %s
// RUN: not distir-opt --dist-gpu-tile-parallel-loops=block-size=0 %s 2>&1 | FileCheck %s --check-prefix=BAD

// The innermost dimension is tiled by the block size, the others by 1; the
// inner loop has fixed bounds and a guard (no min/max bounds), so that it
// maps to the threads of a block.
// CHECK-LABEL: func.func @f(
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[S0:.*]] = arith.muli %c1, %{{.*}} : index
// CHECK: %[[S1:.*]] = arith.muli %c1, %[[C32]] : index
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%c7, %c100) step (%[[S0]], %[[S1]]) {
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[S0]], %[[S1]]) step
// CHECK: scf.if
// CHECK: memref.store
// BAD: error: dist-gpu-tile-parallel-loops: block-size must be positive
func.func @f(%x: memref<7x100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c100 = arith.constant 100 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c7, %c100) step (%c1, %c1) {
    memref.store %z, %x[%i, %j] : memref<7x100xf32>
  }
  return
}
