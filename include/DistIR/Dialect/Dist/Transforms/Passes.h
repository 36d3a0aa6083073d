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
};

/// The decisions `dist-dtp{tp=N report=true}` reports for `func`: one per
/// op that reads an untagged weight. Empty when tp <= 1 or when the
/// weights carry `dist.layer` (the built-in MLP's tagged Megatron split,
/// which splits every layer).
std::vector<TensorParallelDecisionInfo>
getTensorParallelDecisions(mlir::func::FuncOp func, int64_t tp);

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PASSES_H
