//===- PadDimension.h - Pad a dimension through a program -------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_DIALECT_DIST_TRANSFORMS_PADDIMENSION_H
#define DISTIR_LIB_DIALECT_DIST_TRANSFORMS_PADDIMENSION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>

namespace distir::dist {

/// What padding a dimension changes (or would change) in a function.
struct DimensionPadding {
  /// Arguments padded with zeros on entry (argument numbers).
  llvm::SmallVector<unsigned> args;
  /// Results cut back to their size before the return (result numbers).
  llvm::SmallVector<unsigned> results;
  /// Values that carry the dimension (arguments, op results).
  int64_t values = 0;
  /// Values whose padded positions are set to -inf (the padded logits
  /// before a maximum or a softmax over them).
  int64_t masked = 0;
};

/// Pads dimension `dim` of argument `arg` of `func` to `size`, and with it
/// every dimension the program ties to it: the *class* of (value,
/// dimension) pairs joined by the structured-op interface (operand
/// dimensions indexed by the same loop of a `linalg` op, its results with
/// their inits), reshapes that keep the dimension whole, full slices and
/// pads of other dimensions, `linalg.softmax`. Arguments of the class are
/// padded with zeros on entry, constants with zeros, and results are cut
/// back to their size, so the function computes what it computed before:
/// a Megatron-style padded vocabulary (50257 -> 50264) for an LM head and
/// its loss, gradient and optimizer state.
///
/// The padded positions must not leak into the real ones. An abstract
/// interpretation tracks what every value of the class holds at its padded
/// positions (zero, -inf, finite, unknown): ops that run over the padded
/// loop as a parallel loop compute it from their body, and every op that
/// reduces over it must provably leave its accumulator unchanged there
/// (adding zeros, taking the maximum with -inf, a select whose condition
/// compares the padded index for equality with a value: indices compared so
/// are taken to be in range, as a gather's must be). Where a maximum or a
/// softmax over the dimension reads padded zeros, its input is masked
/// (padded positions set to -inf: for every use of the value, else for that
/// use only) and the check restarts. A lookup (a `tensor.extract` in a
/// structured op's body at a row computed from data, not from a loop
/// index) reads one of the old rows, as valid gather indices do, and is
/// unchanged. Any op outside
/// these rules (an op that reads the dimension other than by a loop, a
/// reduction that would change) makes the padding fail, with the reason in
/// `why` (naming the op's kind) and `func` unchanged (a padded function that
/// does not verify, a bug, is an error too, with `func` changed: callers
/// that must keep it try a copy first). Values of the program itself are
/// taken to be finite.
///
/// With `apply` false, only checks: returns what padding would change.
/// With `zeroResults`, every result of the class must also hold zeros at
/// its padded positions (a caller that returns them padded and feeds them
/// back: updated weights and optimizer state stay zero-padded).
/// On failure, `failedOp` (when given) is the op the reason is about, or
/// null.
llvm::FailureOr<DimensionPadding>
padDimension(mlir::func::FuncOp func, unsigned arg, int64_t dim, int64_t size,
             bool apply, bool zeroResults, std::string &why,
             mlir::Operation **failedOp = nullptr);

} // namespace distir::dist

#endif // DISTIR_LIB_DIALECT_DIST_TRANSFORMS_PADDIMENSION_H
