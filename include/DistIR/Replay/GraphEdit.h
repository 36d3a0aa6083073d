//===- GraphEdit.h - What-if rewrites of a traced job's graph ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The what-if changes of dPRO's optimizer (op fusion, gradient accumulation,
// recomputation) rewrite the compute nodes of a dataflow graph: new nodes on
// a rank's main thread, other durations and gaps, a node merged into the one
// before it. ComputeEdit describes such a change; applyEdit rebuilds the
// graph with every index (dependencies, stream order, collectives,
// gradients, waits) renumbered.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_GRAPHEDIT_H
#define DISTIR_REPLAY_GRAPHEDIT_H

#include "DistIR/Replay/Dataflow.h"

namespace distir::replay {

struct ComputeEdit {
  explicit ComputeEdit(const DataflowGraph &graph);
  /// Per compute node: nodes run right before it on its stream (their
  /// stream, rank and iteration are taken from it; their dependencies must
  /// be empty).
  std::vector<std::vector<Node>> insertedBefore;
  /// Per compute node: its duration and gap after the edit.
  std::vector<double> duration, gap;
  /// Per compute node: -1, or the node before it on its stream that it is
  /// merged into (its duration is added there by the caller; its
  /// dependencies and users move there).
  std::vector<int64_t> mergedInto;
};

/// The graph with `edit` applied.
DataflowGraph applyEdit(const DataflowGraph &graph, const ComputeEdit &edit);

/// The compute nodes of rank `rank`'s iteration `iteration` in stream
/// order.
std::vector<int64_t> iterationNodes(const DataflowGraph &graph, int64_t rank,
                                    int64_t iteration);

} // namespace distir::replay

#endif // DISTIR_REPLAY_GRAPHEDIT_H
