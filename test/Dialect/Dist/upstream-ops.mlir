// RUN: distir-opt %s --dist-verify-placement --canonicalize --cse --dist-verify-placement | FileCheck %s
// RUN: distir-opt %s --verify-roundtrip --dist-verify-placement > /dev/null

// Placement spike (docs/design/placement.md): upstream ops accept tensors
// whose encoding is #dist.device, verify unchanged, and keep the encoding
// through --canonicalize --cse. Ops and patterns that lose the encoding are
// in upstream-ops-limits.mlir.

!d0 = tensor<4x8xf32, #dist.device<0>>
!d1 = tensor<4x8xf32, #dist.device<1>>
#id = affine_map<(d0, d1) -> (d0, d1)>

//===----------------------------------------------------------------------===//
// linalg named ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @linalg_matmul_fill
func.func @linalg_matmul_fill(%a: tensor<4x16xf32, #dist.device<0>>,
                              %b: tensor<16x8xf32, #dist.device<0>>) -> !d0 {
  %zero = arith.constant 0.0 : f32
  // CHECK: tensor.empty() : tensor<4x8xf32, #dist.device<0>>
  %e = tensor.empty() : !d0
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %f = linalg.fill ins(%zero : f32) outs(%e : !d0) -> !d0
  // CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x16xf32, #dist.device<0>>, tensor<16x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %m = linalg.matmul ins(%a, %b : tensor<4x16xf32, #dist.device<0>>, tensor<16x8xf32, #dist.device<0>>)
                     outs(%f : !d0) -> !d0
  return %m : !d0
}

// CHECK-LABEL: func.func @linalg_batch_matmul
func.func @linalg_batch_matmul(%a: tensor<2x4x16xf32, #dist.device<1>>,
                               %b: tensor<2x16x8xf32, #dist.device<1>>,
                               %o: tensor<2x4x8xf32, #dist.device<1>>) -> tensor<2x4x8xf32, #dist.device<1>> {
  // CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x16xf32, #dist.device<1>>, tensor<2x16x8xf32, #dist.device<1>>) outs(%{{.*}} : tensor<2x4x8xf32, #dist.device<1>>) -> tensor<2x4x8xf32, #dist.device<1>>
  %m = linalg.batch_matmul ins(%a, %b : tensor<2x4x16xf32, #dist.device<1>>, tensor<2x16x8xf32, #dist.device<1>>)
                           outs(%o : tensor<2x4x8xf32, #dist.device<1>>) -> tensor<2x4x8xf32, #dist.device<1>>
  return %m : tensor<2x4x8xf32, #dist.device<1>>
}

// CHECK-LABEL: func.func @linalg_broadcast_reduce_transpose
func.func @linalg_broadcast_reduce_transpose(%x: tensor<8xf32, #dist.device<0>>, %y: !d0)
    -> (!d0, tensor<8xf32, #dist.device<0>>, tensor<8x4xf32, #dist.device<0>>) {
  %e = tensor.empty() : !d0
  // CHECK: linalg.broadcast ins(%{{.*}} : tensor<8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) dimensions = [0]
  %b = linalg.broadcast ins(%x : tensor<8xf32, #dist.device<0>>) outs(%e : !d0) dimensions = [0]
  %e8 = tensor.empty() : tensor<8xf32, #dist.device<0>>
  // CHECK: linalg.reduce ins(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<8xf32, #dist.device<0>>) dimensions = [0]
  // CHECK: arith.addf %{{.*}}, %{{.*}} : f32
  %r = linalg.reduce ins(%y : !d0) outs(%e8 : tensor<8xf32, #dist.device<0>>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %et = tensor.empty() : tensor<8x4xf32, #dist.device<0>>
  // CHECK: linalg.transpose ins(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<8x4xf32, #dist.device<0>>) permutation = [1, 0]
  %t = linalg.transpose ins(%y : !d0) outs(%et : tensor<8x4xf32, #dist.device<0>>) permutation = [1, 0]
  return %b, %r, %t : !d0, tensor<8xf32, #dist.device<0>>, tensor<8x4xf32, #dist.device<0>>
}

// Canonicalization of linalg ops that builds new ops keeps the encoding:
// transpose(transpose) folds away, transpose(broadcast) becomes a broadcast
// into a new tensor.empty.
// CHECK-LABEL: func.func @linalg_transpose_folds
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32, #dist.device<0>>, %{{.*}}: tensor<8xf32, #dist.device<0>>)
func.func @linalg_transpose_folds(%x: !d0, %v: tensor<8xf32, #dist.device<0>>)
    -> (!d0, tensor<8x4xf32, #dist.device<0>>) {
  %e = tensor.empty() : tensor<8x4xf32, #dist.device<0>>
  %t = linalg.transpose ins(%x : !d0) outs(%e : tensor<8x4xf32, #dist.device<0>>) permutation = [1, 0]
  %e2 = tensor.empty() : !d0
  %t2 = linalg.transpose ins(%t : tensor<8x4xf32, #dist.device<0>>) outs(%e2 : !d0) permutation = [1, 0]
  %b = linalg.broadcast ins(%v : tensor<8xf32, #dist.device<0>>) outs(%e2 : !d0) dimensions = [0]
  %bt = linalg.transpose ins(%b : !d0) outs(%e : tensor<8x4xf32, #dist.device<0>>) permutation = [1, 0]
  // CHECK-NOT: linalg.transpose
  // CHECK: %[[E:.*]] = tensor.empty() : tensor<8x4xf32, #dist.device<0>>
  // CHECK: %[[B:.*]] = linalg.broadcast ins(%{{.*}} : tensor<8xf32, #dist.device<0>>) outs(%[[E]] : tensor<8x4xf32, #dist.device<0>>) dimensions = [1]
  // CHECK: return %[[X]], %[[B]] : tensor<4x8xf32, #dist.device<0>>, tensor<8x4xf32, #dist.device<0>>
  return %t2, %bt : !d0, tensor<8x4xf32, #dist.device<0>>
}

// CHECK-LABEL: func.func @linalg_elementwise_softmax
func.func @linalg_elementwise_softmax(%x: !d0, %y: !d0) -> (!d0, !d0, !d0, !d0) {
  %e = tensor.empty() : !d0
  // CHECK: linalg.add ins(%{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %a = linalg.add ins(%x, %y : !d0, !d0) outs(%e : !d0) -> !d0
  // CHECK: linalg.mul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %m = linalg.mul ins(%a, %y : !d0, !d0) outs(%e : !d0) -> !d0
  // CHECK: linalg.elementwise kind=#linalg.elementwise_kind<sub> ins(%{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %s = linalg.elementwise kind=#linalg.elementwise_kind<sub> ins(%m, %x : !d0, !d0) outs(%e : !d0) -> !d0
  // CHECK: linalg.softmax dimension(1) ins(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %sm = linalg.softmax dimension(1) ins(%s : !d0) outs(%e : !d0) -> !d0
  return %a, %m, %s, %sm : !d0, !d0, !d0, !d0
}

//===----------------------------------------------------------------------===//
// linalg.generic
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @linalg_generic
func.func @linalg_generic(%x: !d0, %y: !d0) -> !d0 {
  %e = tensor.empty() : !d0
  // CHECK: linalg.generic
  // CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<0>>) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>)
  // CHECK: arith.mulf
  // CHECK: math.exp
  // CHECK: } -> tensor<4x8xf32, #dist.device<0>>
  %r = linalg.generic {indexing_maps = [#id, #id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : !d0, !d0) outs(%e : !d0) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    %t = math.exp %s : f32
    linalg.yield %t : f32
  } -> !d0
  return %r : !d0
}

//===----------------------------------------------------------------------===//
// tensor ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @tensor_ops
func.func @tensor_ops(%x: !d0, %y: tensor<2x8xf32, #dist.device<0>>, %i: index, %f: f32)
    -> (tensor<2x8xf32, #dist.device<0>>, !d0, tensor<32xf32, #dist.device<0>>,
        tensor<2x2x4xf32, #dist.device<0>>, tensor<6x10xf32, #dist.device<0>>, f32, !d0,
        tensor<2xf32, #dist.device<0>>, tensor<4xf32, #dist.device<0>>, tensor<8xf32, #dist.device<0>>) {
  // CHECK: tensor.extract_slice %{{.*}}[0, 0] [2, 8] [1, 1] : tensor<4x8xf32, #dist.device<0>> to tensor<2x8xf32, #dist.device<0>>
  %s = tensor.extract_slice %x[0, 0] [2, 8] [1, 1] : !d0 to tensor<2x8xf32, #dist.device<0>>
  // CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[2, 0] [2, 8] [1, 1] : tensor<2x8xf32, #dist.device<0>> into tensor<4x8xf32, #dist.device<0>>
  %ins = tensor.insert_slice %y into %x[2, 0] [2, 8] [1, 1] : tensor<2x8xf32, #dist.device<0>> into !d0
  // CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x8xf32, #dist.device<0>> into tensor<32xf32, #dist.device<0>>
  %c = tensor.collapse_shape %x [[0, 1]] : !d0 into tensor<32xf32, #dist.device<0>>
  // CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 2, 4] : tensor<2x8xf32, #dist.device<0>> into tensor<2x2x4xf32, #dist.device<0>>
  %ex = tensor.expand_shape %s [[0], [1, 2]] output_shape [2, 2, 4]
      : tensor<2x8xf32, #dist.device<0>> into tensor<2x2x4xf32, #dist.device<0>>
  %cst = arith.constant 0.0 : f32
  // CHECK: tensor.pad %{{.*}} low[1, 1] high[1, 1]
  // CHECK: } : tensor<4x8xf32, #dist.device<0>> to tensor<6x10xf32, #dist.device<0>>
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%a: index, %b: index):
    tensor.yield %cst : f32
  } : !d0 to tensor<6x10xf32, #dist.device<0>>
  // CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32, #dist.device<0>>
  %v = tensor.extract %x[%i, %i] : !d0
  // CHECK: tensor.insert %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}] : tensor<4x8xf32, #dist.device<0>>
  %w = tensor.insert %f into %x[%i, %i] : !d0
  // CHECK: tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xf32, #dist.device<0>>
  %fe = tensor.from_elements %f, %v : tensor<2xf32, #dist.device<0>>
  // CHECK: tensor.splat %{{.*}} : tensor<4xf32, #dist.device<0>>
  %sp = tensor.splat %f : tensor<4xf32, #dist.device<0>>
  // Rank-reducing slice.
  // CHECK: tensor.extract_slice %{{.*}}[1, 0] [1, 8] [1, 1] : tensor<4x8xf32, #dist.device<0>> to tensor<8xf32, #dist.device<0>>
  %rr = tensor.extract_slice %x[1, 0] [1, 8] [1, 1] : !d0 to tensor<8xf32, #dist.device<0>>
  return %s, %ins, %c, %ex, %p, %v, %w, %fe, %sp, %rr
      : tensor<2x8xf32, #dist.device<0>>, !d0, tensor<32xf32, #dist.device<0>>,
        tensor<2x2x4xf32, #dist.device<0>>, tensor<6x10xf32, #dist.device<0>>, f32, !d0,
        tensor<2xf32, #dist.device<0>>, tensor<4xf32, #dist.device<0>>, tensor<8xf32, #dist.device<0>>
}

// Canonicalizations that make dynamic shapes static rebuild the result type
// from the old one and keep the encoding; the inserted tensor.cast is placed.
// CHECK-LABEL: func.func @tensor_static_shape_folds
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x8xf32, #dist.device<0>>
// CHECK-NEXT: %[[EC:.*]] = tensor.cast %[[E]] : tensor<4x8xf32, #dist.device<0>> to tensor<?x8xf32, #dist.device<0>>
// CHECK-NEXT: %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 0] [2, 8] [1, 1] : tensor<4x8xf32, #dist.device<0>> to tensor<2x8xf32, #dist.device<0>>
// CHECK-NEXT: %[[SC:.*]] = tensor.cast %[[S]] : tensor<2x8xf32, #dist.device<0>> to tensor<?x8xf32, #dist.device<0>>
// CHECK-NEXT: %[[G:.*]] = tensor.generate
// CHECK:      } : tensor<4x8xf32, #dist.device<0>>
// CHECK-NEXT: %[[GC:.*]] = tensor.cast %[[G]] : tensor<4x8xf32, #dist.device<0>> to tensor<?x8xf32, #dist.device<0>>
// The cast of the input folds into linalg.add, which becomes static.
// CHECK-NEXT: %[[A:.*]] = linalg.add ins(%{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<0>>) outs(%[[E]] : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
// CHECK-NEXT: %[[AC:.*]] = tensor.cast %[[A]] : tensor<4x8xf32, #dist.device<0>> to tensor<?x8xf32, #dist.device<0>>
// CHECK-NEXT: return %[[EC]], %[[SC]], %[[GC]], %[[AC]]
func.func @tensor_static_shape_folds(%x: !d0, %f: f32)
    -> (tensor<?x8xf32, #dist.device<0>>, tensor<?x8xf32, #dist.device<0>>,
        tensor<?x8xf32, #dist.device<0>>, tensor<?x8xf32, #dist.device<0>>) {
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty(%c4) : tensor<?x8xf32, #dist.device<0>>
  %s = tensor.extract_slice %x[0, 0] [%c2, 8] [1, 1] : !d0 to tensor<?x8xf32, #dist.device<0>>
  %g = tensor.generate %c4 {
  ^bb0(%i: index, %j: index):
    tensor.yield %f : f32
  } : tensor<?x8xf32, #dist.device<0>>
  %xc = tensor.cast %x : !d0 to tensor<?x8xf32, #dist.device<0>>
  %a = linalg.add ins(%xc, %xc : tensor<?x8xf32, #dist.device<0>>, tensor<?x8xf32, #dist.device<0>>)
                  outs(%e : tensor<?x8xf32, #dist.device<0>>) -> tensor<?x8xf32, #dist.device<0>>
  return %e, %s, %g, %a : tensor<?x8xf32, #dist.device<0>>, tensor<?x8xf32, #dist.device<0>>,
                          tensor<?x8xf32, #dist.device<0>>, tensor<?x8xf32, #dist.device<0>>
}

// Folding linalg.fill through a reshape keeps the encoding.
// CHECK-LABEL: func.func @fill_collapse
func.func @fill_collapse(%f: f32) -> tensor<32xf32, #dist.device<0>> {
  %e = tensor.empty() : !d0
  %fl = linalg.fill ins(%f : f32) outs(%e : !d0) -> !d0
  // CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x8xf32, #dist.device<0>> into tensor<32xf32, #dist.device<0>>
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32xf32, #dist.device<0>>) -> tensor<32xf32, #dist.device<0>>
  %c = tensor.collapse_shape %fl [[0, 1]] : !d0 into tensor<32xf32, #dist.device<0>>
  return %c : tensor<32xf32, #dist.device<0>>
}

// Two pads on different dims merge into one placed pad.
// CHECK-LABEL: func.func @pad_pad
func.func @pad_pad(%x: !d0, %f: f32) -> tensor<6x10xf32, #dist.device<0>> {
  // CHECK: tensor.pad %{{.*}} low[1, 1] high[1, 1]
  // CHECK: } : tensor<4x8xf32, #dist.device<0>> to tensor<6x10xf32, #dist.device<0>>
  // CHECK-NOT: tensor.pad
  %p = tensor.pad %x low[1, 0] high[1, 0] {
  ^bb0(%a: index, %b: index):
    tensor.yield %f : f32
  } : !d0 to tensor<6x8xf32, #dist.device<0>>
  %q = tensor.pad %p low[0, 1] high[0, 1] {
  ^bb0(%a: index, %b: index):
    tensor.yield %f : f32
  } : tensor<6x8xf32, #dist.device<0>> to tensor<6x10xf32, #dist.device<0>>
  return %q : tensor<6x10xf32, #dist.device<0>>
}

//===----------------------------------------------------------------------===//
// arith and math on placed tensors
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @arith_math
func.func @arith_math(%x: !d0, %y: !d0) -> (tensor<4x8xi1, #dist.device<0>>, !d0) {
  // CHECK: arith.addf %{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>
  %a = arith.addf %x, %y : !d0
  // CHECK: arith.mulf %{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>
  %m = arith.mulf %a, %x : !d0
  // CHECK: arith.cmpf ogt, %{{.*}}, %{{.*}} : tensor<4x8xf32, #dist.device<0>>
  %c = arith.cmpf ogt, %m, %y : !d0
  // CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xi1, #dist.device<0>>, tensor<4x8xf32, #dist.device<0>>
  %s = arith.select %c, %m, %y : tensor<4x8xi1, #dist.device<0>>, !d0
  // CHECK: math.exp %{{.*}} : tensor<4x8xf32, #dist.device<0>>
  %e = math.exp %s : !d0
  // CHECK: math.tanh %{{.*}} : tensor<4x8xf32, #dist.device<0>>
  %t = math.tanh %e : !d0
  // CHECK: math.sqrt %{{.*}} : tensor<4x8xf32, #dist.device<0>>
  %q = math.sqrt %t : !d0
  return %c, %q : tensor<4x8xi1, #dist.device<0>>, !d0
}

//===----------------------------------------------------------------------===//
// Dense constants: DenseElementsAttr accepts an encoded tensor type, and
// constant folding builds placed constants.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dense_constants
func.func @dense_constants() -> (!d0, tensor<2xi32, #dist.device<1>>) {
  // CHECK-DAG: arith.constant dense<1.000000e+00> : tensor<4x8xf32, #dist.device<0>>
  // CHECK-DAG: arith.constant dense<[1, 2]> : tensor<2xi32, #dist.device<1>>
  %c = arith.constant dense<1.0> : !d0
  %d = arith.constant dense<[1, 2]> : tensor<2xi32, #dist.device<1>>
  return %c, %d : !d0, tensor<2xi32, #dist.device<1>>
}

// CHECK-LABEL: func.func @constant_folding
func.func @constant_folding() -> (!d0, tensor<2xf32, #dist.device<0>>, tensor<4xf32, #dist.device<0>>,
                                  tensor<2xf32, #dist.device<0>>, f32, tensor<32xf32, #dist.device<0>>,
                                  tensor<2x8xf32, #dist.device<0>>) {
  %a = arith.constant dense<1.0> : !d0
  %b = arith.constant dense<2.0> : !d0
  %sum = arith.addf %a, %b : !d0
  %v = arith.constant dense<[1.0, 2.0]> : tensor<2xf32, #dist.device<0>>
  %w = arith.constant dense<[3.0, 4.0]> : tensor<2xf32, #dist.device<0>>
  %vw = arith.addf %v, %w : tensor<2xf32, #dist.device<0>>
  %f3 = arith.constant 3.0 : f32
  %f4 = arith.constant 4.0 : f32
  %sp = tensor.splat %f3 : tensor<4xf32, #dist.device<0>>
  %fe = tensor.from_elements %f3, %f4 : tensor<2xf32, #dist.device<0>>
  %c1 = arith.constant 1 : index
  %x = tensor.extract %v[%c1] : tensor<2xf32, #dist.device<0>>
  %col = tensor.collapse_shape %b [[0, 1]] : !d0 into tensor<32xf32, #dist.device<0>>
  %sl = tensor.extract_slice %b[0, 0] [2, 8] [1, 1] : !d0 to tensor<2x8xf32, #dist.device<0>>
  // CHECK-DAG: %[[SUM:.*]] = arith.constant dense<3.000000e+00> : tensor<4x8xf32, #dist.device<0>>
  // CHECK-DAG: %[[VW:.*]] = arith.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32, #dist.device<0>>
  // CHECK-DAG: %[[SP:.*]] = arith.constant dense<3.000000e+00> : tensor<4xf32, #dist.device<0>>
  // CHECK-DAG: %[[FE:.*]] = arith.constant dense<[3.000000e+00, 4.000000e+00]> : tensor<2xf32, #dist.device<0>>
  // CHECK-DAG: %[[X:.*]] = arith.constant 2.000000e+00 : f32
  // CHECK-DAG: %[[COL:.*]] = arith.constant dense<2.000000e+00> : tensor<32xf32, #dist.device<0>>
  // CHECK-DAG: %[[SL:.*]] = arith.constant dense<2.000000e+00> : tensor<2x8xf32, #dist.device<0>>
  // CHECK-NOT: arith.addf
  // CHECK: return %[[SUM]], %[[VW]], %[[SP]], %[[FE]], %[[X]], %[[COL]], %[[SL]]
  return %sum, %vw, %sp, %fe, %x, %col, %sl
      : !d0, tensor<2xf32, #dist.device<0>>, tensor<4xf32, #dist.device<0>>,
        tensor<2xf32, #dist.device<0>>, f32, tensor<32xf32, #dist.device<0>>,
        tensor<2x8xf32, #dist.device<0>>
}

// CSE does not merge equal constants or empties on different devices: the
// device is part of the type.
// CHECK-LABEL: func.func @cse_respects_devices
func.func @cse_respects_devices() -> (!d0, !d1, !d0, !d1) {
  // CHECK-DAG: arith.constant dense<1.000000e+00> : tensor<4x8xf32, #dist.device<0>>
  // CHECK-DAG: arith.constant dense<1.000000e+00> : tensor<4x8xf32, #dist.device<1>>
  // CHECK-DAG: tensor.empty() : tensor<4x8xf32, #dist.device<0>>
  // CHECK-DAG: tensor.empty() : tensor<4x8xf32, #dist.device<1>>
  %a = arith.constant dense<1.0> : !d0
  %b = arith.constant dense<1.0> : !d1
  %e0 = tensor.empty() : !d0
  %e1 = tensor.empty() : !d1
  // CHECK: return {{.*}} : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>, tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
  return %a, %b, %e0, %e1 : !d0, !d1, !d0, !d1
}

//===----------------------------------------------------------------------===//
// func.call and scf.for
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @callee
// CHECK-SAME: (%{{.*}}: tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
func.func @callee(%x: !d0) -> !d0 {
  %a = arith.addf %x, %x : !d0
  return %a : !d0
}

// CHECK-LABEL: func.func @caller
func.func @caller(%x: !d0) -> !d0 {
  // CHECK: call @callee(%{{.*}}) : (tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
  %r = func.call @callee(%x) : (!d0) -> !d0
  return %r : !d0
}

// CHECK-LABEL: func.func @scf_for
func.func @scf_for(%x: !d0) -> !d0 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<4x8xf32, #dist.device<0>>)
  // CHECK: arith.addf %[[ACC]], %{{.*}} : tensor<4x8xf32, #dist.device<0>>
  // CHECK: scf.yield %{{.*}} : tensor<4x8xf32, #dist.device<0>>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (!d0) {
    %n = arith.addf %acc, %x : !d0
    scf.yield %n : !d0
  }
  return %r : !d0
}

// The loop canonicalizer moves a placed tensor.cast out of the iter_args;
// the casts it creates stay placed.
// CHECK-LABEL: func.func @scf_for_cast
func.func @scf_for_cast(%x: !d0) -> tensor<?x8xf32, #dist.device<0>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %xc = tensor.cast %x : !d0 to tensor<?x8xf32, #dist.device<0>>
  // CHECK: scf.for {{.*}} -> (tensor<4x8xf32, #dist.device<0>>)
  // CHECK: tensor.cast %{{.*}} : tensor<4x8xf32, #dist.device<0>> to tensor<?x8xf32, #dist.device<0>>
  // CHECK: tensor.cast %{{.*}} : tensor<?x8xf32, #dist.device<0>> to tensor<4x8xf32, #dist.device<0>>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %xc) -> (tensor<?x8xf32, #dist.device<0>>) {
    %n = arith.addf %acc, %acc : tensor<?x8xf32, #dist.device<0>>
    scf.yield %n : tensor<?x8xf32, #dist.device<0>>
  }
  return %r : tensor<?x8xf32, #dist.device<0>>
}

//===----------------------------------------------------------------------===//
// Two devices: compute on 0 and 1, move data with dist ops.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @two_devices
func.func @two_devices(%a0: tensor<4x16xf32, #dist.device<0>>, %w0: tensor<16x8xf32, #dist.device<0>>,
                       %a1: tensor<4x16xf32, #dist.device<1>>, %w1: tensor<16x8xf32, #dist.device<1>>)
    -> (!d0, !d1) {
  %z = arith.constant 0.0 : f32
  // CHECK: %[[P0:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32, #dist.device<0>>
  %e0 = tensor.empty() : !d0
  %f0 = linalg.fill ins(%z : f32) outs(%e0 : !d0) -> !d0
  %p0 = linalg.matmul ins(%a0, %w0 : tensor<4x16xf32, #dist.device<0>>, tensor<16x8xf32, #dist.device<0>>)
                      outs(%f0 : !d0) -> !d0
  // CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x8xf32, #dist.device<1>>
  // CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x8xf32, #dist.device<1>>)
  // CHECK: %[[P1:.*]] = linalg.matmul {{.*}} -> tensor<4x8xf32, #dist.device<1>>
  %e1 = tensor.empty() : !d1
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : !d1) -> !d1
  %p1 = linalg.matmul ins(%a1, %w1 : tensor<4x16xf32, #dist.device<1>>, tensor<16x8xf32, #dist.device<1>>)
                      outs(%f1 : !d1) -> !d1
  // CHECK: %[[R:.*]]:2 = dist.all_reduce sum %[[P0]], %[[P1]] : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
  %r:2 = dist.all_reduce sum %p0, %p1 : !d0, !d1
  // CHECK: %[[S:.*]] = dist.send %[[R]]#0 : tensor<4x8xf32, #dist.device<0>> -> tensor<4x8xf32, #dist.device<1>>
  %s = dist.send %r#0 : !d0 -> !d1
  // CHECK: %[[O1:.*]] = arith.addf %[[S]], %[[R]]#1 : tensor<4x8xf32, #dist.device<1>>
  %o1 = arith.addf %s, %r#1 : !d1
  // CHECK: %[[O0:.*]] = math.tanh %[[R]]#0 : tensor<4x8xf32, #dist.device<0>>
  %o0 = math.tanh %r#0 : !d0
  // CHECK: return %[[O0]], %[[O1]] : tensor<4x8xf32, #dist.device<0>>, tensor<4x8xf32, #dist.device<1>>
  return %o0, %o1 : !d0, !d1
}
