//===- PerOp.h - PaSE's per-operator strategies for linalg programs -*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Builds PaSE's cost graph from a function of linalg ops on tensors: a vertex
// per structured op, a configuration per way to split its loops over the
// devices, vertex costs (compute of one tile + the all-reduce of a split
// reduction) and edge costs (moving the tensor between the producer's and the
// consumer's tiles), all priced by the simulator's cost model. The chosen
// strategy is recorded as `dist.sharding` on each op. Design:
// docs/design/pase.md.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SEARCH_PEROP_H
#define DISTIR_SEARCH_PEROP_H

#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Search/PerOpSolver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <map>
#include <string>
#include <vector>

namespace distir::pase {

struct PerOpOptions {
  /// Devices 0 .. devices-1 of the cluster share the work.
  int64_t devices = 1;
  CostModelKind model = CostModelKind::Analytic;
  /// Configurations kept per op (the cheapest by vertex cost beyond this).
  int64_t maxConfigsPerOp = 1024;
  /// Largest dynamic-programming table.
  int64_t maxTableSize = int64_t(1) << 24;
  /// Ops that carry `dist.sharding` keep only the configurations that hold
  /// their results that way, and the readers of an argument that carries
  /// it read it in place (the search fills in the rest).
  bool followAnnotations = true;
  /// Linalg loops may be split by factors that do not divide them
  /// (balanced tiles: a 50257-word vocabulary over 4 devices is
  /// 12564 + 12564 + 12564 + 12565 columns), priced by the largest tile.
  bool unevenSplits = true;
  /// When adjoint ops follow their forward op's configuration
  /// (tieAdjoints): Auto ties them only when the search with a vertex per
  /// op needs a table over maxTableSize (the tied space is smaller: its
  /// optimum can be higher).
  enum class Tie { Auto, Always, Never };
  Tie tieAdjoints = Tie::Auto;
};

/// One configuration of an op: a split factor per loop (product divides the
/// device count; the rest of the devices replicate the tile). Tile c of a
/// loop of n split by f is [floor(c n / f), floor((c + 1) n / f)).
struct LoopSplit {
  llvm::SmallVector<int64_t> factors;
  int64_t replicas = 1;
};

/// A function's cost graph with the ops and configurations behind it.
/// Linalg ops split their loops; every other op with tensor results
/// (reshapes, pads, slices, concats, linalg.softmax, ...) has one
/// configuration: the whole op on every device (replicated, and reported).
struct PerOpProblem {
  std::vector<mlir::Operation *> ops;
  std::vector<std::vector<LoopSplit>> configs;
  CostGraph graph;
  /// Ops without a split rule, replicated on every device, by op name.
  std::map<std::string, int64_t> replicatedOps;
  /// Ops whose configurations were cut to maxConfigsPerOp.
  int64_t truncatedOps = 0;
  /// Adjoint ops the search tied to their forward op, and kept apart.
  int64_t tiedOps = 0, untiedAdjoints = 0;
  /// Adjoint ops searched each as a vertex of its own because tying was
  /// not chosen (tie-adjoints=never, or auto with tables that fit).
  int64_t adjointsNotTied = 0;
};

/// Builds the problem for the linalg ops of `function` (static shapes).
mlir::FailureOr<PerOpProblem> buildPerOpProblem(mlir::func::FuncOp function,
                                                const Cluster &cluster,
                                                const PerOpOptions &options,
                                                ErrorFn error);

/// The sharding of `op`'s result `index` under `split`: a mesh of the split
/// loops' factors (loop order) then the replicas, over devices 0..N-1.
dist::ShardingAttr getResultSharding(mlir::Operation *op,
                                     const LoopSplit &split, unsigned index);

/// Records the strategy as `dist.sharding` on every op of the problem.
void annotateStrategy(const PerOpProblem &problem, const Strategy &strategy);

/// Hand-written strategies in the same cost graph.
enum class BaselineKind {
  /// Every op splits the loop the batch flows through (from the arguments'
  /// dist.batch_dim) by all devices; ops the batch does not reach run whole.
  DataParallel,
  /// Krizhevsky's "one weird trick": data-parallel, except contractions
  /// with a 2-D weight (fully connected layers), which split their output
  /// features.
  OneWeirdTrick,
};

struct BaselineStrategy {
  Strategy strategy;
  /// Ops whose wanted split is not a configuration (run whole instead).
  int64_t fallbacks = 0;
  /// One weird trick: the fully connected layers split by features.
  int64_t parameterParallelOps = 0;
};

mlir::FailureOr<BaselineStrategy> baselineStrategy(const PerOpProblem &problem,
                                                   BaselineKind kind,
                                                   int64_t devices);

/// Whether `op` accumulates into its one output by `out + x`, so that its
/// reduction loops may be split and the partial results summed.
bool isSumReduction(mlir::linalg::LinalgOp op);

/// Rewrites `function` into the explicit dist program of the strategy:
/// `<name>_pase` takes each argument's tiles on the devices that read them
/// and returns the results' distinct tiles; `function` keeps its signature
/// (placed on device 0), scatters the arguments, calls it and reassembles
/// the results. Fails with one error naming an op it cannot emit.
mlir::LogicalResult emitStrategy(mlir::func::FuncOp function,
                                 const PerOpProblem &problem,
                                 const Strategy &strategy, ErrorFn error);

/// "[2, 1, 4]" (and "x2" replicas when there are any).
std::string formatSplit(const LoopSplit &split);

/// dist-autodiff's adjoint ops tied to their forward op, as PaSE's paper
/// counts an op's forward and backward as one vertex: a tied op's
/// configuration follows the forward op's through the dimensions they share
/// (a loop of the adjoint that runs along a dimension of a forward operand,
/// result or incoming gradient takes the forward loop's factor).
struct Tying {
  /// Per op of the problem: the op it follows, or -1.
  std::vector<int64_t> leaderOf;
  /// Per tied op: its configuration for each of its leader's.
  std::vector<std::vector<int64_t>> follow;
  /// Adjoint ops tied, and those kept apart (their forward op is not a
  /// vertex, or they have no configuration for some of the forward op's).
  int64_t tied = 0, apart = 0;
};

/// Ties the adjoint ops (`dist.vjp_of`) of `problem` to their forward op
/// (`dist.vjp_id`). Loops are a linalg op's or a data-movement op's result
/// dimensions; an op without a split rule has one configuration and follows
/// trivially.
Tying tieAdjoints(const PerOpProblem &problem);

/// The cost graph with each tied op folded into its leader's vertex (its
/// vertex cost, and its edges re-pointed; an edge inside a group becomes
/// vertex cost). `vertexOf` maps each op to its vertex.
struct TiedGraph {
  CostGraph graph;
  std::vector<unsigned> vertexOf;
};
TiedGraph contract(const CostGraph &graph, const Tying &tying);

/// Each op's configuration under `tied`'s configuration of every vertex.
std::vector<int64_t> expandConfig(const Tying &tying, const TiedGraph &tied,
                                  llvm::ArrayRef<int64_t> vertexConfig);

} // namespace distir::pase

#endif // DISTIR_SEARCH_PEROP_H
