//===- Passes.h - dist dialect passes ---------------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_H
#define DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_H

#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/Transforms/PassEnums.h"
#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"
#include "DistIR/Synthesis/Synthesis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace distir::dist {

#define GEN_PASS_DECL
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"

/// 1 + the largest `dist.layer` on `func`'s ops and arguments (0 when none):
/// the layers `dist-dtp` cuts into stages (layer l in stage l * pp / n).
int64_t getNumLayers(mlir::func::FuncOp func);

/// One tensor-parallel decision of `dist-dtp`: a weight-reading op and what
/// happens to it (its split, or "replicated: <reason>").
struct TensorParallelDecisionInfo {
  mlir::Location loc;
  std::string what;
  /// `what` without the prices that chose it: two programs with the same
  /// outcomes made the same decisions.
  std::string outcome;
};

/// The decisions `dist-dtp{tp=N report=true}` reports for `func`: one per
/// op that reads an untagged weight. Empty when tp <= 1 or when the
/// weights carry `dist.layer` (the built-in MLP's tagged Megatron split,
/// which splits every layer). Choices by cost are priced on `cluster` (or
/// the module's dist.cluster, or dist-dtp's default) over the first
/// tensor-parallel group of dist-dtp's default device order, for a batch cut
/// into `rowsDivisor` pieces (dp x microbatches). Paddings are planned on a
/// copy of `func`, inserted into its module for the time of the call (not
/// thread-safe against other users of the module).
std::vector<TensorParallelDecisionInfo>
getTensorParallelDecisions(mlir::func::FuncOp func, int64_t tp,
                           const Cluster *cluster = nullptr,
                           int64_t rowsDivisor = 1);

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_H
