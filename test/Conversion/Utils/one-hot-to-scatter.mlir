// RUN: distir-opt --dist-one-hot-to-scatter -split-input-file %s | FileCheck %s

// dist-autodiff's embedding gradient: rows (v) x tokens (b, s) x width (e)
// becomes loops over tokens and width that compute the row from the token
// id (with ONNX's negative wrap), skip ids outside the table and accumulate
// into that row: a scatter-add.
// CHECK-LABEL: func.func @embedding_grad(
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[DY:.*]] = memref.load %arg0[%[[B]], %[[S]], %[[E]]]
// CHECK: %[[ID:.*]] = memref.load %arg1[%[[B]], %[[S]]]
// CHECK: %[[I:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[ROW:.*]] = arith.select %{{.*}}, %{{.*}}, %[[I]] : index
// CHECK: scf.if %{{.*}} {
// CHECK: %[[ACC:.*]] = memref.load %arg2[%[[ROW]], %[[E]]]
// CHECK: arith.addf %[[ACC]]
// CHECK: memref.store %{{.*}}, %arg2[%[[ROW]], %[[E]]]
func.func @embedding_grad(%dy: memref<2x3x4xf32>, %ids: memref<2x3xi64>, %dt: memref<10x4xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(b, s, v, e) -> (b, s, e)>,
                       affine_map<(b, s, v, e) -> (b, s)>,
                       affine_map<(b, s, v, e) -> (v, e)>],
      iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%dy, %ids : memref<2x3x4xf32>, memref<2x3xi64>) outs(%dt : memref<10x4xf32>) {
  ^bb0(%g: f32, %id: i64, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %c0 = arith.constant 0 : index
    %c10 = arith.constant 10 : index
    %neg = arith.cmpi slt, %i, %c0 : index
    %w = arith.addi %i, %c10 : index
    %row = arith.select %neg, %w, %i : index
    %v = linalg.index 2 : index
    %hit = arith.cmpi eq, %row, %v : index
    %zero = arith.constant 0.0 : f32
    %x = arith.select %hit, %g, %zero : f32
    %sum = arith.addf %acc, %x : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// Kept: the row loop also indexes an input (a real contraction over v), and
// a test whose index depends on the row loop itself.
// CHECK-LABEL: func.func @kept(
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: scf.for
func.func @kept(%dy: memref<3x4xf32>, %ids: memref<3xi64>, %w: memref<10x4xf32>, %dt: memref<10x4xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(s, v, e) -> (s, e)>,
                       affine_map<(s, v, e) -> (s)>,
                       affine_map<(s, v, e) -> (v, e)>,
                       affine_map<(s, v, e) -> (v, e)>],
      iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%dy, %ids, %w : memref<3x4xf32>, memref<3xi64>, memref<10x4xf32>) outs(%dt : memref<10x4xf32>) {
  ^bb0(%g: f32, %id: i64, %x0: f32, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %v = linalg.index 1 : index
    %hit = arith.cmpi eq, %i, %v : index
    %zero = arith.constant 0.0 : f32
    %p = arith.mulf %g, %x0 : f32
    %x = arith.select %hit, %p, %zero : f32
    %sum = arith.addf %acc, %x : f32
    linalg.yield %sum : f32
  }
  linalg.generic {
      indexing_maps = [affine_map<(s, v, e) -> (s, e)>,
                       affine_map<(s, v, e) -> (v, e)>],
      iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%dy : memref<3x4xf32>) outs(%dt : memref<10x4xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %v = linalg.index 1 : index
    %c1 = arith.constant 1 : index
    %vv = arith.addi %v, %c1 : index
    %hit = arith.cmpi eq, %vv, %v : index
    %zero = arith.constant 0.0 : f32
    %x = arith.select %hit, %g, %zero : f32
    %sum = arith.addf %acc, %x : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A shard of a table split by rows (dist-dtp's vocabulary-parallel
// embedding, block 1 of 2): the test compares the global row `v + 5`, so
// the row updated is `id - 5`, and ids of the other block are skipped.
// CHECK-LABEL: func.func @shifted_shard(
// CHECK-NOT: linalg.generic
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[ROW:.*]] = arith.subi %[[I]], %[[C5]] : index
// CHECK: %[[LO:.*]] = arith.cmpi sge, %[[ROW]]
// CHECK: %[[HI:.*]] = arith.cmpi slt, %[[ROW]]
// CHECK: %[[IN:.*]] = arith.andi %[[LO]], %[[HI]]
// CHECK: scf.if %[[IN]] {
// CHECK: memref.load %arg2[%[[ROW]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %arg2[%[[ROW]], %{{.*}}]
func.func @shifted_shard(%dy: memref<3x4xf32>, %ids: memref<3xi64>, %dt: memref<5x4xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(s, v, e) -> (s, e)>,
                       affine_map<(s, v, e) -> (s)>,
                       affine_map<(s, v, e) -> (v, e)>],
      iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%dy, %ids : memref<3x4xf32>, memref<3xi64>) outs(%dt : memref<5x4xf32>) {
  ^bb0(%g: f32, %id: i64, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %v = linalg.index 1 : index
    %c5 = arith.constant 5 : index
    %global = arith.addi %v, %c5 : index
    %hit = arith.cmpi eq, %i, %global : index
    %zero = arith.constant 0.0 : f32
    %x = arith.select %hit, %g, %zero : f32
    %sum = arith.addf %acc, %x : f32
    linalg.yield %sum : f32
  }
  return
}
