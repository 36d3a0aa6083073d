// RUN: distir-opt --dist-autodiff %s -split-input-file -verify-diagnostics
// RUN: not distir-opt --dist-autodiff=loss=l1 %S/Inputs/autodiff-scalar-output.mlir 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not distir-opt --dist-autodiff=optimizer=lamb %S/Inputs/autodiff-scalar-output.mlir 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not distir-opt --dist-autodiff=lr=0 %S/Inputs/autodiff-scalar-output.mlir 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not distir-opt --dist-autodiff=beta2=1 %S/Inputs/autodiff-scalar-output.mlir 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not distir-opt --dist-autodiff=compute=f8 %S/Inputs/autodiff-scalar-output.mlir 2>&1 | FileCheck %s --check-prefix=COMPUTE
// COMPUTE: for the --compute option: Cannot find option named 'f8'!
// RUN: not distir-opt --dist-autodiff=compute=bf16 %S/Inputs/autodiff-mixed-types.mlir 2>&1 | FileCheck %s --check-prefix=MIXED
// MIXED: autodiff-mixed-types.mlir:10:10: error: 'arith.extf' op dist-autodiff: compute= expects a program in one floating-point type (f32), not one with casts
// RUN: not distir-opt --dist-autodiff=frozen=nothing %S/Inputs/autodiff-scalar-output.mlir 2>&1 | FileCheck %s --check-prefix=FROZEN
// LOSS: for the --loss option: Cannot find option named 'l1'!
// OPT: for the --optimizer option: Cannot find option named 'lamb'!
// LR: error: dist-autodiff: need lr > 0, 0 <= beta1, beta2 < 1, eps >= 0, weight-decay >= 0 and momentum >= 0
// FROZEN: error: dist-autodiff: frozen=nothing: no argument has this dist.name
// RUN: not distir-opt --dist-autodiff=loss=cross-entropy %S/Inputs/autodiff-scalar-output.mlir 2>&1 | FileCheck %s --check-prefix=CE
// CE: autodiff-scalar-output.mlir:3:1: error: dist-autodiff: cross-entropy needs logits with a class axis (the last), got 'tensor<f32, #dist.device<0>>'

!v = tensor<4xf32, #dist.device<0>>
// expected-error @below {{dist-autodiff: @two has 2 results; the loss needs exactly one (the model output)}}
func.func @two(%x: !v {dist.batch_dim = 0 : i64}, %w: !v) -> (!v, !v) {
  return %x, %w : !v, !v
}

// -----

!v = tensor<4xf32, #dist.device<0>>
// expected-error @below {{dist-autodiff: @noweights has no weights (floating-point arguments without dist.batch_dim) to train}}
func.func @noweights(%x: !v {dist.batch_dim = 0 : i64}) -> !v {
  return %x : !v
}

// -----

!v = tensor<4xf32, #dist.device<0>>
// expected-error @below {{dist-autodiff: argument #1 is an input after a weight; the inputs must come first}}
func.func @order(%w: !v, %x: !v {dist.batch_dim = 0 : i64}) -> !v {
  return %w : !v
}

// -----

!i = tensor<4xi32, #dist.device<0>>
// expected-error @below {{dist-autodiff: the output of @ints must be a floating-point tensor, got 'tensor<4xi32, #dist.device<0>>'}}
func.func @ints(%x: !i {dist.batch_dim = 0 : i64}, %w: tensor<4xf32, #dist.device<0>>) -> !i {
  return %x : !i
}

// -----

!v = tensor<4xf32, #dist.device<0>>
// expected-error @below {{dist-autodiff: the output of @constant does not depend on any weight}}
func.func @constant(%x: !v {dist.batch_dim = 0 : i64}, %w: !v) -> !v {
  return %x : !v
}

// -----

!v = tensor<4xf32, #dist.device<0>>
func.func @trained(%x: !v {dist.batch_dim = 0 : i64}, %w: !v) -> !v {
  %e = tensor.empty() : !v
  // expected-error @below {{dist-autodiff: @trained is already a training step (it has backward ops)}}
  %r = linalg.add {dist.phase = "backward"} ins(%x, %w : !v, !v) outs(%e : !v) -> !v
  return %r : !v
}

// -----

!v = tensor<4xf32, #dist.device<0>>
!s = tensor<f32, #dist.device<0>>
func.func @product(%x: !v {dist.batch_dim = 0 : i64}, %w: !v) -> !s {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : !s
  %init = linalg.fill ins(%one : f32) outs(%e : !s) -> !s
  // expected-error @below {{'linalg.generic' op has no gradient rule: a reduction body must combine each point into the accumulator with arith.addf, maximumf or minimumf}}
  %p = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%w : !v) outs(%init : !s) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %acc, %a : f32
    linalg.yield %m : f32
  } -> !s
  return %p : !s
}

// -----

!v = tensor<4xf32, #dist.device<0>>
func.func @atan(%x: !v {dist.batch_dim = 0 : i64}, %w: !v) -> !v {
  %e = tensor.empty() : !v
  // expected-error @below {{'linalg.generic' op has no gradient rule: 'math.atan' in its body has no derivative}}
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%w : !v) outs(%e : !v) {
  ^bb0(%a: f32, %o: f32):
    %t = math.atan %a : f32
    linalg.yield %t : f32
  } -> !v
  return %r : !v
}

// -----

!v = tensor<4xf32, #dist.device<0>>
!c = tensor<8xf32, #dist.device<0>>
func.func @concat(%x: !v {dist.batch_dim = 0 : i64}, %w: !v) -> !c {
  // expected-error @below {{'tensor.concat' op has no gradient rule}}
  %c = tensor.concat dim(0) %x, %w : (!v, !v) -> !c
  return %c : !c
}

// -----

!v = tensor<4xf32, #dist.device<0>>
!s = tensor<f32, #dist.device<0>>
func.func @gathersum(%x: tensor<4xindex, #dist.device<0>> {dist.batch_dim = 0 : i64}, %w: !v) -> !s {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !s
  %init = linalg.fill ins(%zero : f32) outs(%e : !s) -> !s
  // expected-error @below {{'linalg.generic' op has no gradient rule for this read of a value that depends on the weights inside its body}}
  %p = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%x : tensor<4xindex, #dist.device<0>>) outs(%init : !s) {
  ^bb0(%i: index, %acc: f32):
    %v = tensor.extract %w[%i] : !v
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> !s
  return %p : !s
}

