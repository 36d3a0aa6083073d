//===- PerOpSearch.h - PaSE's search over a program's two forms -*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The search behind dist-pase and `distir-search --strategy per-op`: PaSE's
// optimum on the program as written and, where dist-unflatten-reshapes
// changes it, on the program with merged dimensions kept apart; the cheaper
// form is kept.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_TRANSFORMS_PEROPSEARCH_H
#define DISTIR_DIALECT_DIST_TRANSFORMS_PEROPSEARCH_H

#include "DistIR/Search/PerOp.h"

#include <optional>
#include <string>

namespace distir::dist {

struct PerOpSearch {
  pase::PerOpProblem problem;
  pase::Strategy strategy;
  /// Whether the function now reads merged dimensions apart (the
  /// unflattened form was cheaper and replaced its body).
  bool unflattened = false;
  /// The optimum of the form not kept, when both were searched.
  std::optional<double> otherCost;
  /// Why the unflattened form was not searched or has no strategy (its
  /// table too large, annotations on the program, ...); the program as
  /// written is kept.
  std::string unflattenError;
  /// Why the program as written has no strategy, when the unflattened form
  /// has one (and is kept).
  std::string writtenError;
};

/// PaSE's optimum for `function` (GenerateSeq order, or breadth-first).
/// With `tryUnflatten`, a copy of `function` is rewritten by
/// dist-unflatten-reshapes; when that changes it, the copy is searched too
/// and its body replaces `function`'s if its optimum is lower or the
/// program as written has none. Not tried when `options` follow
/// annotations and the function carries `dist.sharding` (they name its
/// dimensions as written). Fails only when no form has a strategy, with
/// the errors of the program as written (through `error` and at its ops).
mlir::FailureOr<PerOpSearch> searchPerOp(mlir::func::FuncOp function,
                                         const Cluster &cluster,
                                         const pase::PerOpOptions &options,
                                         bool breadthFirst, bool tryUnflatten,
                                         pase::ErrorFn error);

/// The remark clause on the form kept: empty when only the program as
/// written was searched, else "; merged dimensions read apart
/// (dist-unflatten-reshapes; as written: COST s | no strategy, REASON)",
/// "; as written (merged dimensions read apart: COST s)" or "; as written
/// (merged dimensions read apart: not searched, REASON)".
std::string describeForm(const PerOpSearch &search);

/// How a training step's adjoint ops were searched, one clause each (none
/// without adjoints): "adjoint ops following their forward op: N (M apart)"
/// and/or "adjoint ops searched on their own: N (REASON)", the reason from
/// `tie` (never, or auto with tables that fit).
llvm::SmallVector<std::string, 2>
describeAdjoints(const pase::PerOpProblem &problem,
                 pase::PerOpOptions::Tie tie);

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PEROPSEARCH_H
