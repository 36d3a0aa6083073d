// Upstream behaviour that does NOT preserve #dist.device placement
// (docs/design/placement.md). Each RUN line pins the current behaviour; if
// upstream fixes a pattern, the corresponding check fails and the pattern can
// move to upstream-ops.mlir.

// RUN: rm -rf %t && split-file %s %t

// 1. Before canonicalization every op here is placed and verifies.
// RUN: distir-opt %t/canonicalize.mlir --dist-verify-placement | FileCheck %s --check-prefix=INPUT

// 2. --canonicalize produces unplaced tensor types.
// RUN: distir-opt %t/canonicalize.mlir --canonicalize | FileCheck %s --check-prefix=CANON

// 3. --dist-verify-placement reports every unplaced value after it.
// RUN: not distir-opt %t/canonicalize.mlir --canonicalize --dist-verify-placement 2>&1 | FileCheck %s --check-prefix=VERIFY

//--- canonicalize.mlir

!d0 = tensor<4x8xf32, #dist.device<0>>

// tensor.concat: the canonicalizer (presumably InferConcatOperandTypes /
// InferConcatResultType; names not checked in the source) casts the operands and the result to types
// without the encoding and casts back.
// INPUT-LABEL: func.func @concat
// INPUT: tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
// CANON-LABEL: func.func @concat
// CANON: %[[A:.*]] = tensor.cast %{{.*}} : tensor<2x8xf32, #dist.device<0>> to tensor<2x8xf32>
// CANON: %[[B:.*]] = tensor.cast %{{.*}} : tensor<2x8xf32, #dist.device<0>> to tensor<2x8xf32>
// CANON: %[[C:.*]] = tensor.concat dim(0) %[[A]], %[[B]] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CANON: tensor.cast %[[C]] : tensor<4x8xf32> to tensor<4x8xf32, #dist.device<0>>
// VERIFY: error: 'tensor.cast' op result #0 of type 'tensor<2x8xf32>' has no placement
// VERIFY: error: 'tensor.cast' op result #0 of type 'tensor<2x8xf32>' has no placement
// VERIFY: error: 'tensor.concat' op result #0 of type 'tensor<4x8xf32>' has no placement
func.func @concat(%a: tensor<2x8xf32, #dist.device<0>>, %b: tensor<2x8xf32, #dist.device<0>>) -> !d0 {
  %c = tensor.concat dim(0) %a, %b : (tensor<2x8xf32, #dist.device<0>>, tensor<2x8xf32, #dist.device<0>>) -> !d0
  return %c : !d0
}

// tensor.pad with constant dynamic padding: the static-padding fold rebuilds
// the result type from the shape only and drops the encoding.
// INPUT-LABEL: func.func @pad_constant_dynamic_low
// INPUT: } : tensor<4x8xf32, #dist.device<0>> to tensor<?x8xf32, #dist.device<0>>
// CANON-LABEL: func.func @pad_constant_dynamic_low
// CANON: %[[P:.*]] = tensor.pad %{{.*}} low[1, 0] high[0, 0]
// CANON: } : tensor<4x8xf32, #dist.device<0>> to tensor<5x8xf32>
// CANON: tensor.cast %[[P]] : tensor<5x8xf32> to tensor<?x8xf32, #dist.device<0>>
// VERIFY: error: 'tensor.pad' op result #0 of type 'tensor<5x8xf32>' has no placement
func.func @pad_constant_dynamic_low(%x: !d0) -> tensor<?x8xf32, #dist.device<0>> {
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %p = tensor.pad %x low[%c1, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : !d0 to tensor<?x8xf32, #dist.device<0>>
  return %p : tensor<?x8xf32, #dist.device<0>>
}

// linalg.fill followed by tensor.pad with the same value: FoldFillWithPad
// creates an unplaced tensor.empty and fill.
// INPUT-LABEL: func.func @fill_pad
// INPUT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8xf32, #dist.device<0>>) -> tensor<4x8xf32, #dist.device<0>>
// CANON-LABEL: func.func @fill_pad
// CANON: %[[E:.*]] = tensor.empty() : tensor<6x10xf32>
// CANON: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<6x10xf32>) -> tensor<6x10xf32>
// CANON: tensor.cast %[[F]] : tensor<6x10xf32> to tensor<6x10xf32, #dist.device<0>>
// VERIFY: error: 'tensor.empty' op result #0 of type 'tensor<6x10xf32>' has no placement
// VERIFY: error: 'linalg.fill' op result #0 of type 'tensor<6x10xf32>' has no placement
func.func @fill_pad(%f: f32) -> tensor<6x10xf32, #dist.device<0>> {
  %e = tensor.empty() : !d0
  %fl = linalg.fill ins(%f : f32) outs(%e : !d0) -> !d0
  %p = tensor.pad %fl low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %f : f32
  } : !d0 to tensor<6x10xf32, #dist.device<0>>
  return %p : tensor<6x10xf32, #dist.device<0>>
}
// VERIFY-NOT: error:
