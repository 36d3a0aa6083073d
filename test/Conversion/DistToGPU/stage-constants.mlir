// RUN: distir-opt --dist-gpu-stage-constants %s | FileCheck %s

memref.global "private" constant @bias : memref<4xf32> = dense<1.0>
memref.global "private" constant @ranks : memref<2xi64> = dense<[0, 1]>

// A constant that compute reads gets a device buffer filled from the global;
// an address taken for a runtime call stays the host global's.
// CHECK-LABEL: func.func @f(
// CHECK: %[[G:.*]] = memref.get_global @bias
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[G]], %[[B]]
// CHECK: linalg.add ins(%arg0, %[[B]] :
// CHECK: %[[R:.*]] = memref.get_global @ranks
// CHECK-NOT: memref.alloc
// CHECK: memref.extract_aligned_pointer_as_index %[[R]]
func.func @f(%x: memref<4xf32>, %y: memref<4xf32>) -> index {
  %b = memref.get_global @bias : memref<4xf32>
  linalg.add ins(%x, %b : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>)
  %r = memref.get_global @ranks : memref<2xi64>
  %p = memref.extract_aligned_pointer_as_index %r : memref<2xi64> -> index
  return %p : index
}
