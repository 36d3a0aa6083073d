//===- UnflattenReshapes.h - Keep merged dimensions apart ------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_DIALECT_DIST_TRANSFORMS_UNFLATTENRESHAPES_H
#define DISTIR_LIB_DIALECT_DIST_TRANSFORMS_UNFLATTENRESHAPES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace distir::dist {

/// Counts of what unflattenReshapes changed.
struct UnflattenStats {
  /// Reshapes (a collapse then an expand) rewritten through their finest
  /// common shape.
  int64_t refined = 0;
  /// Ops (generics, transposes, softmaxes) a merging collapse was sunk
  /// through: they now read the merged dimensions apart.
  int64_t sunk = 0;
};

/// Rewrites `func` so that dimensions a reshape merges only to split them
/// again stay apart in between: nn.MultiheadAttention's `[S, B, E] ->
/// [S, B * H, E / H]` becomes `[S, B, H, E / H]` through the attention's
/// transposes, batched contractions, softmax and element-wise ops, up to the
/// reshape back to `[S * B, E]`. A `tensor.expand_shape` of a
/// `tensor.collapse_shape` (the importer's form of an ONNX Reshape) is
/// rewritten as an expand to the finest shape both sides agree on, then a
/// collapse; the collapse is then sunk through its consumers (upstream
/// linalg's fold-by-expansion for `linalg.generic`, and patterns for
/// `linalg.transpose` and `linalg.softmax`; a `linalg.matmul` reading
/// merged rows becomes a `linalg.generic` first; a weight or bias gradient
/// sums over merged rows as two reductions and keeps its weight's
/// dimensions merged) until it meets the expand that
/// splits it again (folded away) or an op that needs it merged. Semantics
/// are unchanged; new ops take `dist.layer` / `dist.phase` from the op the
/// rewrite replaced. Fails (with an error) if the rewrite does not
/// converge, or is not done after `maxRewrites` pattern applications
/// (-1: no limit).
llvm::FailureOr<UnflattenStats> unflattenReshapes(mlir::func::FuncOp func,
                                                  int64_t maxRewrites = -1);

} // namespace distir::dist

#endif // DISTIR_LIB_DIALECT_DIST_TRANSFORMS_UNFLATTENRESHAPES_H
