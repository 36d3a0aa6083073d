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

#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

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
  /// Length of the prefix of `what` that says the decision (the rest: the
  /// prices that chose it).
  size_t outcome = std::string::npos;
};

/// A column-split weight whose split dimension tp does not divide: zero
/// columns pad it to `size` (a multiple of tp), as Megatron pads its
/// vocabulary. The projection computes the padded columns, and its result
/// is gathered and cut back right after it.
struct WeightPadding {
  unsigned arg;                // argument number
  int64_t dim;                 // padded dimension of the argument
  int64_t size;                // padded size
  mlir::Operation *projection; // the one op that reads the weight
};

/// What prices the plan's cost-based choices (a column split that ends in a
/// gather, a padded split) against replication: the simulator's analytic
/// compute and collective costs on `cluster`, over the devices `group` of
/// one tensor-parallel group.
struct TensorParallelPricing {
  Cluster cluster;
  llvm::SmallVector<int64_t> group;
  /// The batch is cut into this many pieces (dp x microbatches): a final
  /// projection runs on one piece at a time, and is priced on one. The
  /// choice then depends on the microbatch size only, not on how many
  /// microbatches a step has.
  int64_t rowsDivisor = 1;
  /// The cluster is a default, not the module's (said in the decisions).
  bool defaulted = false;
};

struct TensorParallelPlan {
  llvm::DenseMap<unsigned, WeightSplit> splits; // by argument number
  std::vector<WeightPadding> padded;
  /// Projections left replicated because tp does not divide their width:
  /// the first projection of a pair, or a final projection whose weight
  /// other ops (a gradient, an update) read. Padding the weight's whole
  /// dimension class (padDimension in PadDimension.h) would make them
  /// divisible; the caller may pad and plan again.
  std::vector<WeightPadding> classPadding;
  std::vector<TensorParallelDecision> decisions;
  /// Lookups of split tables (a tied head's token embedding, getLookupOf):
  /// each device reads the rows it holds, the results are partial sums. The
  /// rewriter splits exactly these.
  llvm::DenseSet<mlir::Operation *> lookups;
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
/// reason. A projection weight whose `dist.sharding` (a user's, from
/// dist-propagate-sharding or dist-dtp's annotate-shardings) splits one
/// dimension into `tp` shards, over any mesh, is a constraint: split along
/// that dimension, or not at all when it is replicated; one the plan cannot
/// follow is in `refused`.
///
/// A column candidate that reaches no row-split partner before an op that
/// needs its split dimension whole (a normalization or reduction over it, a
/// program result) is a *terminal* split, Megatron's column-parallel layer
/// with a gathered output (an LM head, a classifier): split, it runs 1/tp
/// of the projection and then gathers (a result is returned split and
/// gathered by the caller); one whose width tp does not divide (a
/// vocabulary of 50257 words) is padded to a multiple of tp when it is read
/// by nothing but its projection (inference) and gathered right after it.
/// Each is kept when `pricing` says it is faster than running the
/// projection replicated, and the decision shows both times; one whose
/// weight's dist.sharding asks for that column split is split regardless.
TensorParallelPlan planTensorParallel(mlir::func::FuncOp func, int64_t tp,
                                      const TensorParallelPricing &pricing);

/// A plan after padding the widths tp does not divide (`classPadding`).
struct PaddedTensorParallelPlan {
  TensorParallelPlan plan;
  /// Arguments padded on entry (a `tensor.pad`, their only use): the padded
  /// types.
  llvm::DenseMap<unsigned, mlir::RankedTensorType> args;
  /// Results of a padded class, cut back before the return by a
  /// `tensor.extract_slice` of the padded value.
  llvm::SmallVector<unsigned> results;
};

/// planTensorParallel, then, for each weight of `classPadding`: padDimension
/// of its dimension class to a multiple of tp, tried on a copy of `func`
/// and kept (applied to `func`) when the padded program's plan splits the
/// weight; the plan is then made again. Each such weight gets a decision
/// saying what was padded, or why it stays replicated (the padded plan's
/// reason, or why the padding would not compute the same).
PaddedTensorParallelPlan
planTensorParallelWithPadding(mlir::func::FuncOp func, int64_t tp,
                              const TensorParallelPricing &pricing);

/// The cluster that prices a plan when the module has no dist.cluster.
inline constexpr const char *kDefaultPricingCluster = "dgx-h100";

/// Pricing over devices 0 .. tp-1 (the group mapping=tp-inner places): on
/// `cluster` when given, else the module's dist.cluster, else
/// kDefaultPricingCluster (marked defaulted).
TensorParallelPricing getTensorParallelPricing(mlir::func::FuncOp func,
                                               int64_t tp,
                                               const Cluster *cluster,
                                               int64_t rowsDivisor);

/// The reduction `op`'s body applies to its single init: the yield of
/// `arith.addf`/`arith.addi` (a sum), `arith.maximumf` (a maximum) or
/// `arith.minimumf` (a minimum) of the init's block argument, used nowhere
/// else, and another value (casts between float types around it allowed);
/// none for any other body. Split reduction loops leave partial results of
/// this kind; a maximum or minimum needs no particular init (each shard's
/// partial result includes it, and so does theirs).
std::optional<ReductionKind> getReductionCombiner(mlir::Operation *op);

/// The `tensor.extract` through which the body of `op` (a linalg op with
/// one float result and no reduction loops) reads `table`, a tensor from
/// outside it, when that read is its only use of `table` and the body
/// yields it unchanged: an embedding lookup. Split by rows over tp, the
/// table is then read where it lies, as Megatron's vocabulary-parallel
/// embedding: each device yields the rows it holds and zero for the others,
/// and the results add up to the lookup (partial sums, one all-reduce).
/// Null for any other op.
mlir::tensor::ExtractOp getLookupOf(mlir::linalg::LinalgOp op,
                                    mlir::Value table);

} // namespace distir::dist

#endif // DISTIR_LIB_DIALECT_DIST_TRANSFORMS_TENSORPARALLELPLAN_H
