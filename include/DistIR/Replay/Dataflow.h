//===- Dataflow.h - Global dataflow graph of a traced job -------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Joins the per-rank traces of a data-parallel job into one dataflow graph
// (dPRO's global DFG): each rank's main thread is a sequence of compute
// nodes (the top-level ops of each profiled iteration, split where a
// collective is launched); each collective becomes a ring of per-step
// transfers, one node per (step, sender) with a transaction id, on the
// communication thread that ran it; a rank's op that waited for a
// collective depends on its last transfers. Durations are measured; gaps
// (time on a thread not covered by any op, minus waiting) are kept as
// per-node overheads. Transfer times depend on how the ranks' clocks are
// aligned, so they are set at replay (Replayer.h). See
// docs/design/replay.md.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_DATAFLOW_H
#define DISTIR_REPLAY_DATAFLOW_H

#include "DistIR/Replay/Trace.h"

#include "llvm/ADT/SmallVector.h"

namespace distir::replay {

/// A thread of a rank: its main (compute) thread or a communication thread.
struct Stream {
  int64_t rank = 0;
  int64_t thread = 0;
  bool communication = false;
  /// A CUDA stream of the rank's GPU (`thread` is the stream's id).
  bool gpu = false;
};

/// A collective as every rank ran it (matched by order within an
/// iteration).
struct Collective {
  std::string name;
  int64_t iteration = 0;
  /// Elements reduced or moved (from "Input Dims"); -1 when not recorded.
  int64_t elements = -1;
  /// Ring steps (2(n-1) for an all-reduce, n-1 otherwise).
  int64_t steps = 0;
  /// Per rank, on the rank's own clock: the communication event's span.
  std::vector<double> start, end;
  /// Per rank: the node of its first transfer (step 0); step j of rank r is
  /// node firstTransfer[r] + j.
  std::vector<int64_t> firstTransfer;
  /// When non-negative, the transfer time to replay (a what-if collective
  /// priced by a model) instead of the one measured from the spans.
  double modelledTransfer = -1;
};

/// A gradient as it became ready in the backward pass.
struct Gradient {
  int64_t elements = 0;
  /// The compute node at whose end it is ready.
  int64_t node = -1;
};

struct Node {
  std::string name;
  int64_t stream = 0;
  int64_t rank = 0;
  int64_t iteration = 0;
  bool communication = false;
  /// For transfers: the collective, the ring step and the receiving rank
  /// (the transaction is (collective, step, sender)).
  int64_t collective = -1, step = -1, receiver = -1;
  /// Measured duration (compute) or -1 for transfers (set at replay).
  double duration = 0;
  /// Compute nodes: the measured start on the rank's own clock.
  double measuredStart = 0;
  /// Compute nodes: part of the backward pass (an autograd engine
  /// function).
  bool backward = false;
  /// Compute nodes: the top-level op the piece is part of (its index among
  /// the rank's top-level ops; pieces of one op share it).
  int64_t op = -1;
  /// Compute nodes, when the trace has memory events: allocated bytes at
  /// the node's start over the level at its iteration's start, and the
  /// largest single allocation the node made.
  int64_t memoryAtStart = 0, largestAllocation = 0;
  /// Time the thread spent before this node beyond waiting for its
  /// dependencies (framework overhead between ops), measured.
  double gap = 0;
  /// The previous node of the same stream (-1 for the first).
  int64_t previous = -1;
  /// Other dependencies (collective launches, data, waits).
  llvm::SmallVector<int64_t, 2> dependencies;
};

struct DataflowGraph {
  int64_t numRanks = 0;
  int64_t numIterations = 0;
  std::vector<Stream> streams;
  /// Dependencies may point forward (a ring's transfers wait for the next
  /// rank's), so the replay orders nodes itself.
  std::vector<Node> nodes;
  std::vector<Collective> collectives;
  /// Compute nodes are nodes[0, numComputeNodes); transfers follow, then
  /// the GPU activity: the last numGpuNodes nodes (none in a CPU job).
  int64_t numComputeNodes = 0;
  int64_t numGpuNodes = 0;
  bool hasGpuActivity() const { return numGpuNodes > 0; }
  int64_t firstGpuNode() const { return nodes.size() - numGpuNodes; }
  /// Per rank and iteration: the gradients in the order they became ready
  /// (from AccumulateGrad's recorded shapes; empty without shapes).
  std::vector<std::vector<std::vector<Gradient>>> gradients;
  /// Per rank and iteration: the first node after the backward pass (where
  /// DDP waits for its buckets), -1 when the iteration has no backward.
  std::vector<std::vector<int64_t>> syncNodes;
  /// Per rank and iteration: where DDP copies each reduced gradient back
  /// (top-level copy_bucket_to_grad ops, one per gradient in the order
  /// they became ready; empty when the trace does not show that), i.e.
  /// where it waits for the gradient's bucket.
  std::vector<std::vector<std::vector<int64_t>>> copyNodes;
  /// Per rank: each replayed iteration's (start, end) on the rank's clock.
  std::vector<std::vector<std::pair<double, double>>> iterations;
  /// Per rank: the largest increase of allocated bytes over the level at
  /// the start of the replayed iterations; -1 without memory events.
  std::vector<int64_t> peakAllocatedBytes;
  /// Per rank and iteration: the largest increase of allocated bytes over
  /// the level at the iteration's start (empty without memory events).
  std::vector<std::vector<int64_t>> iterationPeakBytes;
  /// Per rank: time from the end of its last op to the end of the last
  /// iteration (the replay adds it after the rank's last node).
  std::vector<double> tails;
  /// Why profiled iterations at either end were left out (a collective
  /// launched but not recorded before the profiler stopped).
  std::vector<std::string> droppedIterations;
  /// Mean iteration time measured in the traces: the longest rank's span of
  /// the replayed iterations divided by their number (no clock involved).
  double measuredIteration = 0;
};

/// Builds the graph of the last `iterations` complete profiled iterations
/// (all when unset) delimited by the ProfilerStep#N markers. Fails with one
/// line on traces without markers or complete iterations, ranks with
/// different iterations or collectives (traces of different jobs), or a
/// request for more iterations than traced.
llvm::Expected<DataflowGraph>
buildDataflowGraph(llvm::ArrayRef<RankTrace> traces,
                   std::optional<int64_t> iterations);

/// Per-rank clock offsets (seconds to add to a rank's times; rank 0's is
/// 0) estimated from the collectives: a ring collective ends at the same
/// time on every rank (least squares over all collectives), and it cannot
/// end on a rank before it started on every other (difference constraints,
/// enforced by cyclic projection).
struct ClockAlignment {
  std::vector<double> offsets;
  /// Root mean square of the end-time disagreement left after alignment.
  double residual = 0;
  /// Constraints (collective, rank, other rank) and how many the least
  /// squares solution violated before projection.
  int64_t constraints = 0, violatedBeforeProjection = 0;
};
ClockAlignment alignClocks(const DataflowGraph &graph);

} // namespace distir::replay

#endif // DISTIR_REPLAY_DATAFLOW_H
