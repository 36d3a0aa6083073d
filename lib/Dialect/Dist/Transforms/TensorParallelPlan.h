//===- TensorParallelPlan.h - Weight splits for tensor parallelism -*- C++ -*-//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Chooses which weights of an untagged program (an imported model) dist-dtp
// splits over the tensor-parallel axis, from the program's data flow.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_DIALECT_DIST_TRANSFORMS_TENSORPARALLELPLAN_H
#define DISTIR_LIB_DIALECT_DIST_TRANSFORMS_TENSORPARALLELPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <string>
#include <vector>

namespace distir::dist {

/// How one weight argument is split over the tensor axis.
struct WeightSplit {
  int64_t dim;    // dimension of the argument
  int64_t groups; // > 1: [groups, tp, rest] (fused Q/K/V)
  bool operator==(const WeightSplit &o) const {
    return dim == o.dim && groups == o.groups;
  }
};

/// One decision of the plan, for the report.
struct TensorParallelDecision {
  mlir::Operation *op; // a linalg op reading a weight
  std::string what;    // e.g. "column split of 'w' (dim 1)", or the reason
};

struct TensorParallelPlan {
  llvm::DenseMap<unsigned, WeightSplit> splits; // by argument number
  std::vector<TensorParallelDecision> decisions;
  /// Projection weights whose dist.sharding the plan cannot follow:
  /// argument number, "'name': why".
  std::vector<std::pair<unsigned, std::string>> refused;
};

/// Megatron's column/row pairing, derived from the program: a linalg op
/// reading a weight argument (directly, through a float cast or through a
/// transpose) is a *projection*. Splitting one of its weight's parallel
/// output dims (a column split) splits its result; the split follows the
/// data flow through every op that keeps it free (loops that stay parallel,
/// reshapes, slices, pads, softmax over another dim) up to projections that
/// contract over it (row splits: partial sums, one all-reduce). A column
/// candidate is rejected when its split would need other communication (a
/// reduction over it such as a normalization, a program result) or when
/// `tp` does not divide it (e.g. the attention heads). Candidates that meet
/// (Q, K and V feeding one attention) form one group; groups are kept
/// greedily by split work (the simulator's flops of the ops that run split),
/// then by the least all-reduced data, when they agree with the groups kept
/// before. Every weight-reading op left replicated is a decision with its
/// reason. A projection weight that carries `dist.sharding` (a user's, or
/// from dist-propagate-sharding) over a mesh of `tp` positions is a
/// constraint: split along the one dimension it splits, or not at all when
/// it is replicated; one the plan cannot follow is in `refused`.
TensorParallelPlan planTensorParallel(mlir::func::FuncOp func, int64_t tp);

} // namespace distir::dist

#endif // DISTIR_LIB_DIALECT_DIST_TRANSFORMS_TENSORPARALLELPLAN_H
