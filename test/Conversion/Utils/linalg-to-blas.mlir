// RUN: distir-opt --dist-linalg-to-blas -split-input-file %s | FileCheck %s
// RUN: distir-opt --dist-linalg-to-blas=library=cublas -split-input-file %s | FileCheck %s --check-prefix=CUBLAS
// RUN: not distir-opt --dist-linalg-to-blas=library=mkl -split-input-file %s 2>&1 | FileCheck %s --check-prefix=BADLIB

// With library=cublas the same calls go to the CUDA runtime's row-major GEMM
// on device buffers.
// CUBLAS-NOT: cblas_
// CUBLAS: func.call @distir_cublas_sgemm(
// CUBLAS: func.func private @distir_cublas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
// BADLIB: for the --library option: Cannot find option named 'mkl'!

// A matmul on contiguous buffers: one cblas_sgemm (row-major, no
// transposes, M N K = 4 16 8, alpha = beta = 1, leading dimensions from the
// strides), guarded by the leading-dimension check; the else branch keeps
// the loops' op.
// CHECK-LABEL: func.func @matmul(
// CHECK: memref.extract_strided_metadata %arg0
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ROW:.*]] = arith.constant 101 : i32
// CBLAS sizes are 32-bit: larger ones keep the loops.
// CHECK: %[[MAX:.*]] = arith.constant 2147483647 : index
// CHECK: arith.cmpi sle, %{{.*}}, %[[MAX]] : index
// CHECK: scf.if %{{.*}} {
// CHECK: %[[PA:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr
// CHECK: func.call @cblas_sgemm(%[[ROW]], %c111_i32{{.*}}, %c111_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %[[PA]], %{{.*}}, %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}) : (i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32) -> ()
// CHECK: } else {
// CHECK: linalg.matmul
// CHECK: func.func private @cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, !llvm.ptr, i32, !llvm.ptr, i32, f32, !llvm.ptr, i32)
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A generic contraction reading A as (k, m) and B as (n, k), in f64: both
// transposes go to cblas_dgemm (112 = CblasTrans).
// CHECK-LABEL: func.func @transposed(
// CHECK: func.call @cblas_dgemm(%{{.*}}, %c112_i32{{.*}}, %c112_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32, i32, i32, f64,
func.func @transposed(%a: memref<8x4xf64>, %b: memref<16x8xf64>, %c: memref<4x16xf64>) {
  linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (k, m)>,
                       affine_map<(m, n, k) -> (n, k)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x4xf64>, memref<16x8xf64>) outs(%c : memref<4x16xf64>) {
  ^bb0(%x: f64, %y: f64, %z: f64):
    %p = arith.mulf %x, %y : f64
    %s = arith.addf %z, %p : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// The output stored as [n][m] (attention's key gradient: dK[j, d] summed
// over queries i from dS[i, j] and Q[i, d] comes out as C[b, h, j, d] with
// m = d after n = j): C^T = B^T A^T, so the operands trade places (B's
// buffer is read first) and B is read transposed (112); values are checked
// by the GPT-2 training step in test/Conversion/Exec/dtp-gpt2-training.test.
// CHECK-LABEL: func.func @output_transposed(
// CHECK: memref.extract_strided_metadata %arg1
// CHECK: memref.extract_strided_metadata %arg0
// CHECK: func.call @cblas_sgemm(%{{.*}}, %c112_i32{{.*}}, %c111_i32{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: } else {
// CHECK: linalg.generic
func.func @output_transposed(%a: memref<2x3x8x4xf32>, %b: memref<2x3x8x5xf32>, %c: memref<2x3x5x4xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(b, h, k, m, n) -> (b, h, k, m)>,
                       affine_map<(b, h, k, m, n) -> (b, h, k, n)>,
                       affine_map<(b, h, k, m, n) -> (b, h, n, m)>],
      iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]}
      ins(%a, %b : memref<2x3x8x4xf32>, memref<2x3x8x5xf32>) outs(%c : memref<2x3x5x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %z, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Attention scores: batch and heads are batch loops (two nested loops, one
// call per (b, h)); the key is read transposed (112).
// CHECK-LABEL: func.func @batched(
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step
// CHECK: func.call @cblas_sgemm(%{{.*}}, %c111_i32{{.*}}, %c112_i32
// CHECK-NOT: linalg.generic
// CHECK: } else {
// CHECK: linalg.generic
func.func @batched(%q: memref<2x3x4x8xf32>, %k: memref<2x3x5x8xf32>, %s: memref<2x3x4x5xf32>) {
  linalg.generic {
      indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>,
                       affine_map<(b, h, i, j, d) -> (b, h, j, d)>,
                       affine_map<(b, h, i, j, d) -> (b, h, i, j)>],
      iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x3x4x8xf32>, memref<2x3x5x8xf32>) outs(%s : memref<2x3x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %z, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left to the loops: an inner stride that is not 1, mixed element types, a
// result indexed (n, m), and an op that is no contraction.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: cblas
// CHECK: linalg.matmul ins(%arg0
// CHECK: linalg.matmul ins(%arg3
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: cblas
func.func @kept(%a: memref<4x8xf32, strided<[1, 4]>>, %b: memref<8x16xf32>, %c: memref<4x16xf32>,
                %h: memref<4x8xbf16>, %g: memref<8x16xbf16>,
                %ct: memref<16x4xf32>, %e: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32, strided<[1, 4]>>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%h, %g : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>)
  linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (n, m)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32, strided<[1, 4]>>, memref<8x16xf32>) outs(%ct : memref<16x4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {
      indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x16xf32>) outs(%e : memref<4x16xf32>) {
  ^bb0(%x: f32, %z: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A zero fill of C right before the product is BLAS's beta = 0 (C is not
// read); the fill moves to the loops' branch. A fill with a store in between
// stays (beta = 1).
// CHECK-LABEL: func.func @zero_init(
// CHECK-NOT: linalg.fill
// CHECK: arith.constant 2147483647 : index
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.if
// CHECK: func.call @cblas_sgemm({{.*}}, %[[ZERO]], %{{.*}}, %{{.*}}) :
// CHECK: } else {
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.matmul
func.func @zero_init(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @store_between(
// CHECK: linalg.fill
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: func.call @cblas_sgemm({{.*}}, %[[ONE]], %{{.*}}, %{{.*}}) :
func.func @store_between(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>, %v: f32) {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 1 : index
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  memref.store %v, %c[%i, %i] : memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}
