//===- GraphEdit.h - What-if rewrites of a traced job's graph ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The what-if changes of dPRO's optimizer (op fusion, gradient accumulation,
// recomputation) rewrite the compute nodes of a dataflow graph: new nodes on
// a rank's main thread (with the GPU work they launch, in a GPU job), other
// durations and gaps, a node merged into the one before it. A ComputeEdit
// collects such changes (only valid ones: see each method) and builds the
// rewritten graph with every index (dependencies, stream order, collectives,
// gradients, waits) renumbered.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_GRAPHEDIT_H
#define DISTIR_REPLAY_GRAPHEDIT_H

#include "DistIR/Replay/Dataflow.h"

#include <string>
#include <tuple>
#include <vector>

namespace distir::replay {

class ComputeEdit {
public:
  explicit ComputeEdit(const DataflowGraph &graph);

  /// Runs `node` right before compute node `before` on its stream (its
  /// stream, rank and iteration are taken from `before`; it depends on
  /// nothing but the node before it on the stream). `launches` is the GPU
  /// work it launches: each on the stream it names, after the work launched
  /// before it there, with its gap as the launch latency.
  void insertBefore(int64_t before, Node node, std::vector<Node> launches = {});

  /// Merges compute node `node` into the node before it on its stream (or
  /// into what that node was merged into): its duration is added there,
  /// its gap dropped, and its users (a collective launched after it) follow
  /// the merged node. Refused (false, nothing changed) when `node` waits
  /// for anything but its stream predecessor, or starts its stream or its
  /// iteration.
  bool mergeIntoPrevious(int64_t node);

  /// Per node: its duration after the edit (compute nodes and GPU work;
  /// transfers are priced at replay). Per compute node: its gap.
  std::vector<double> duration, gap;

  /// The graph with the edit applied.
  DataflowGraph apply() const;

private:
  const DataflowGraph &graph;
  std::vector<std::vector<Node>> insertedBefore;
  /// Parallel to insertedBefore: the GPU work each inserted node launches.
  std::vector<std::vector<std::vector<Node>>> insertedLaunches;
  /// -1, or the node it was merged into.
  std::vector<int64_t> mergedInto;
};

/// An op of an iteration, the same on every rank: its name and how many
/// compute nodes of that name ran before it in the iteration (an op split
/// where a collective is launched counts once per piece).
struct OpIdentity {
  std::string name;
  int64_t occurrence = 0;
  bool operator<(const OpIdentity &other) const {
    return std::tie(name, occurrence) < std::tie(other.name, other.occurrence);
  }
  bool operator==(const OpIdentity &other) const {
    return name == other.name && occurrence == other.occurrence;
  }
};

/// The compute node whose end launched GPU work `node` (its first
/// dependency among the compute nodes; -1: none traced).
int64_t launcherOf(const DataflowGraph &graph, const Node &node);

/// Whether every node of `graph` can be replayed: no dependency cycle (the
/// replay aborts on one).
bool isAcyclic(const DataflowGraph &graph);

/// The identity of every compute node (OpIdentity per node index).
std::vector<OpIdentity> identifyOps(const DataflowGraph &graph);

/// The compute nodes of rank `rank`'s iteration `iteration` in stream
/// order.
std::vector<int64_t> iterationNodes(const DataflowGraph &graph, int64_t rank,
                                    int64_t iteration);

/// One rank's iteration: the compute nodes of its forward pass (after the
/// optimizer's last op before the backward pass, i.e. zero_grad) and of its
/// backward pass (the first to the last autograd engine function), in
/// stream order. Without a backward pass (inference), the forward pass is
/// everything after the optimizer's last op.
struct IterationPasses {
  std::vector<int64_t> forward, backward;
};
IterationPasses findIterationPasses(const DataflowGraph &graph, int64_t rank,
                                    int64_t iteration);

} // namespace distir::replay

#endif // DISTIR_REPLAY_GRAPHEDIT_H
