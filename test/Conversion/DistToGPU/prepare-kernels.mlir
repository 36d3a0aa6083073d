// RUN: distir-opt --dist-gpu-prepare-kernels --split-input-file --verify-diagnostics %s | FileCheck %s

memref.global "private" constant @w : memref<2x3xf32> = dense<1.0>

// A copy out of a constant global is a host-to-device upload (a runtime
// call on the buffers' addresses, the target's offset included); a copy
// between buffers becomes linalg.copy (a kernel).
// CHECK-LABEL: func.func @copies(
// CHECK: %[[G:.*]] = memref.get_global @w
// CHECK: memref.alloca_scope {
// CHECK: %[[D:.*]] = memref.extract_aligned_pointer_as_index %[[A:.*]] :
// CHECK: %[[S:.*]] = memref.extract_aligned_pointer_as_index %[[G]] :
// CHECK: %[[BYTES:.*]] = arith.constant 24 : i64
// CHECK: call @distir_cuda_copy({{.*}}, {{.*}}, %[[BYTES]]) : (i64, i64, i64) -> ()
// CHECK: linalg.copy ins(%[[A]] : memref<2x3xf32>) outs(%arg0 : memref<2x3xf32>)
// CHECK-NOT: memref.copy
// CHECK: func.func private @distir_cuda_copy(i64, i64, i64)
func.func @copies(%out: memref<2x3xf32>) {
  %g = memref.get_global @w : memref<2x3xf32>
  %a = memref.alloc() : memref<2x3xf32>
  memref.copy %g, %a : memref<2x3xf32> to memref<2x3xf32>
  memref.copy %a, %out : memref<2x3xf32> to memref<2x3xf32>
  memref.dealloc %a : memref<2x3xf32>
  return
}

// -----

// A 0-d copy (a scalar result returned through a strided view) becomes a
// linalg.copy without loops, which then also runs in a one-iteration
// parallel loop (not as a host load and store).
// CHECK-LABEL: func.func @scalar_copy(
// CHECK: scf.parallel
// CHECK-NEXT: linalg.copy ins(%arg0 : memref<f32, strided<[], offset: ?>>) outs(%arg1 : memref<f32>)
func.func @scalar_copy(%x: memref<f32, strided<[], offset: ?>>, %y: memref<f32>) {
  memref.copy %x, %y : memref<f32, strided<[], offset: ?>> to memref<f32>
  return
}

// -----

// A structured op without loops runs in a one-iteration parallel loop.
// CHECK-LABEL: func.func @scalar(
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1) {
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = []
#s = affine_map<() -> ()>
func.func @scalar(%x: memref<f32>, %y: memref<f32>) {
  linalg.generic {indexing_maps = [#s, #s], iterator_types = []}
      ins(%x : memref<f32>) outs(%y : memref<f32>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    linalg.yield %c : f32
  }
  return
}

// -----

// The deallocation lowering's bookkeeping arrays live on the host stack.
// CHECK-LABEL: func.func @bookkeeping(
// CHECK: %[[P:.*]] = memref.alloca() : memref<2xindex>
// CHECK: %[[F:.*]] = memref.alloca() : memref<2xi1>
// CHECK: call @dealloc_helper
// CHECK: call @dealloc_helper
// CHECK: memref.load %[[F]]
// CHECK-NOT: memref.dealloc %[[P]]
// CHECK-NOT: memref.dealloc %[[F]]
func.func private @dealloc_helper(memref<?xindex>, memref<?xi1>)
func.func @bookkeeping(%i: index, %b: i1) -> i1 {
  %c0 = arith.constant 0 : index
  %p = memref.alloc() : memref<2xindex>
  %f = memref.alloc() : memref<2xi1>
  memref.store %i, %p[%c0] : memref<2xindex>
  %pc = memref.cast %p : memref<2xindex> to memref<?xindex>
  %fc = memref.cast %f : memref<2xi1> to memref<?xi1>
  call @dealloc_helper(%pc, %fc) : (memref<?xindex>, memref<?xi1>) -> ()
  // The same arrays in a second call are replaced once.
  call @dealloc_helper(%pc, %fc) : (memref<?xindex>, memref<?xi1>) -> ()
  %r = memref.load %f[%c0] : memref<2xi1>
  memref.dealloc %p : memref<2xindex>
  memref.dealloc %f : memref<2xi1>
  return %r : i1
}

// -----

memref.global "private" constant @v : memref<4xf32> = dense<1.0>

func.func @strided_target(%out: memref<8xf32>) {
  %g = memref.get_global @v : memref<4xf32>
  %s = memref.subview %out[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  // expected-error @below {{device=gpu: a constant is copied into a buffer that is not contiguous}}
  memref.copy %g, %s : memref<4xf32> to memref<4xf32, strided<[2]>>
  return
}

// -----

// A sum over the batch (reduction loop first) gets its parallel loop first,
// so that it becomes one kernel whose threads each reduce a column.
// CHECK: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sums(
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
#in = affine_map<(b, n) -> (b, n)>
#out = affine_map<(b, n) -> (n)>
func.func @column_sums(%x: memref<8x16xf32>, %y: memref<16xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<8x16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.addf %a, %b : f32
    linalg.yield %c : f32
  }
  return
}
