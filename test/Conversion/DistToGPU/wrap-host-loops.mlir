// RUN: distir-opt --dist-gpu-wrap-host-loops --split-input-file --verify-diagnostics %s | FileCheck %s

// A sequential loop over buffers (a scatter-add) runs as one GPU thread,
// where it was; allocation and runtime calls stay on the host, and so does
// bookkeeping on the stack.
// CHECK-LABEL: func.func @scatter(
// CHECK: %[[B:.*]] = memref.alloc()
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE:.*]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) {
// CHECK-NEXT: scf.for
// CHECK: memref.load %arg0
// CHECK: memref.store {{.*}}, %[[B]]
// CHECK: gpu.terminator
// CHECK: call @use(%[[B]])
// CHECK: memref.load %[[S:.*]][
// CHECK-NOT: gpu.launch
// CHECK: return
func.func private @use(memref<4xf32>)
func.func @scatter(%ids: memref<8xindex>, %x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %b = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %ids[%i] : memref<8xindex>
    %a = memref.load %x[%i] : memref<8xf32>
    %o = memref.load %b[%v] : memref<4xf32>
    %s = arith.addf %a, %o : f32
    memref.store %s, %b[%v] : memref<4xf32>
  }
  call @use(%b) : (memref<4xf32>) -> ()
  %stack = memref.alloca() : memref<1xf32>
  %r = memref.load %stack[%c0] : memref<1xf32>
  return %r : f32
}

// -----

func.func @escapes(%x: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @below {{device=gpu: this access to a buffer runs on the host, which cannot read device memory}}
  %v = memref.load %x[%c0] : memref<4xf32>
  return %v : f32
}
