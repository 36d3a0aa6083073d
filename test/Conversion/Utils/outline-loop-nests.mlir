// RUN: distir-opt --dist-outline-loop-nests -split-input-file %s | FileCheck %s

// Each outermost loop nest without results becomes a private noinline
// function called in its place; the constants it uses are cloned into it,
// the buffers and the bound defined outside become arguments. A nest is
// outlined once, with its inner loops; a loop with results stays.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<4x8xf32>, %[[N:.*]]: index
// CHECK-NOT: scf.for
// CHECK: call @step_loop(%[[A]], %[[B]]) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
// CHECK: call @step_loop_0(%[[B]], %[[N]]) : (memref<4x8xf32>, index) -> ()
// CHECK-NEXT: %{{.*}} = scf.for
// CHECK: func.func private @step_loop(%[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<4x8xf32>) attributes {passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 4 : index
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load %[[X]]
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: func.func private @step_loop_0(%{{.*}}: memref<4x8xf32>, %{{.*}}: index) attributes {passthrough = ["noinline"]}
func.func @step(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %a[%i, %j] : memref<4x8xf32>
      %y = math.exp %x : f32
      memref.store %y, %b[%i, %j] : memref<4x8xf32>
    }
  }
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    memref.store %zero, %b[%i, %c0] : memref<4x8xf32>
  }
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %b[%i, %c0] : memref<4x8xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  return %sum : f32
}

// -----

// A nest inside a branch is outlined where it is, with the branch's value
// and the function's block argument passed; an existing symbol named like
// the outlined function is not reused.
// CHECK-LABEL: func.func @branch(
// CHECK: scf.if
// CHECK-NEXT: %[[V:.*]] = arith.addf
// CHECK-NEXT: func.call @branch_loop_{{[0-9]+}}(%[[V]], %arg0)
// CHECK: func.func private @branch_loop() {
// CHECK: func.func private @branch_loop_{{[0-9]+}}(%{{.*}}: f32, %{{.*}}: memref<4xf32>) attributes {passthrough = ["noinline"]}
func.func @branch(%b: memref<4xf32>, %flag: i1, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.if %flag {
    %v = arith.addf %x, %x : f32
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %v, %b[%i] : memref<4xf32>
    }
  }
  return
}
func.func private @branch_loop() {
  return
}
