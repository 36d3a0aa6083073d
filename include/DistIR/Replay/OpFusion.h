//===- OpFusion.h - dPRO's op fusion on a traced job ------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dPRO's op fusion: two compute ops that run back to back on a rank's
// critical path are candidates; fusing them saves the framework time
// between them (the measured gap before the second: dispatch, Python,
// kernel launch) but a collective launched after the first op then starts
// only after the second, which costs overlap. Theorem 1's rule: fuse when
// the saved time exceeds the lost overlap. A fusion is one change to the
// model code, so it applies to the same pair of ops (by name and occurrence
// in the iteration) on every rank and in every iteration. Only the model's
// ops of one pass are fused (forward with forward, backward with backward;
// not DDP's reducer or forward wrapper, gradient accumulation into .grad,
// the optimizer or the profiler's own ops). On DDP traces a gradient
// becomes ready in AccumulateGrad, which runs between backward ops and is
// never fused, so no fused pair delays a launch there. Each accepted
// fusion is checked by replaying the rewritten graph and kept only when the
// replay is faster. The fused op is priced as the sum of the two ops' times:
// the trace cannot tell how much memory traffic a fused kernel saves, so the
// predicted gain is the saved overhead alone. See docs/design/replay.md.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_OPFUSION_H
#define DISTIR_REPLAY_OPFUSION_H

#include "DistIR/Replay/GraphEdit.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace distir::replay {

/// Ops run back to back and fused into one.
struct FusionGroup {
  std::vector<OpIdentity> ops;
  /// Theorem 1's estimate summed over the group's pairs: saved overhead
  /// minus lost overlap, over every occurrence on the critical path (any
  /// rank), per iteration.
  double estimatedSaving = 0;
};

struct FusionAdvice {
  /// The traced graph replayed.
  double baseline = 0;
  /// The graph with every kept group fused, replayed.
  double predictedIteration = 0;
  std::vector<FusionGroup> groups;
  /// Pairs back to back on the critical path; rejected by the rule (lost
  /// overlap >= saving); rejected because the replay was not faster.
  int64_t candidates = 0, rejectedByRule = 0, rejectedByReplay = 0;
};

/// Finds the fusions on the critical path of `graph` replayed with
/// `offsets`. `graph` must be a CPU job's (no GPU activity).
FusionAdvice adviseOpFusion(const DataflowGraph &graph,
                            llvm::ArrayRef<double> offsets);

} // namespace distir::replay

#endif // DISTIR_REPLAY_OPFUSION_H
