//===- Replayer.h - Replay a traced job's dataflow graph --------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dPRO's replayer: every stream (a rank's main thread, each communication
// thread) is a device queue; nodes become ready when their dependencies and
// their stream predecessor are done, and the ready node with the smallest
// start time runs next (the paper's modified Kahn algorithm). Compute nodes
// take their measured durations and gaps; a collective's transfer time is
// the time from its start on the last rank to start it to its end, with the
// ranks' clocks shifted by the given offsets, divided evenly over its ring
// steps. The result is a SimulationResult (per-rank timelines, critical
// path, Chrome trace), as for a simulated program.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_REPLAYER_H
#define DISTIR_REPLAY_REPLAYER_H

#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Replay/Dataflow.h"

namespace distir::replay {

struct ReplayResult {
  /// Events, per-rank busy times, peak allocations, critical path.
  SimulationResult timeline;
  /// Replayed time of all iterations divided by their number.
  double predictedIteration = 0;
  /// Per collective: the transfer time used.
  std::vector<double> transferTimes;
  /// The nodes in the order they ran (earliest start first): a
  /// topological order.
  std::vector<int64_t> order;
};

/// Replays `graph` with the ranks' clocks shifted by `offsets` (seconds
/// added to each rank's times; all zero: the clocks as recorded).
ReplayResult replay(const DataflowGraph &graph, llvm::ArrayRef<double> offsets);

} // namespace distir::replay

#endif // DISTIR_REPLAY_REPLAYER_H
