//===- MemoryAdvisor.h - Recomputation vs gradient accumulation -*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dPRO's memory optimizations for a traced job under a memory budget: the
// budget bounds what a typical iteration (the median over the replayed
// ones, largest over the ranks) allocates over the level at its start (the
// trace cannot see memory allocated before profiling began: weights,
// optimizer state). The activations are what the forward pass leaves
// allocated when the backward pass starts. Two ways to shrink them, each
// replayed:
// - gradient accumulation over k microbatches (k = 2, 4, ..., 64, up to the
//   first that fits; DDP's no_sync for the first k - 1): activations / k;
//   every forward and backward op runs k times on 1/k of the batch, each run
//   priced between 1/k of the traced time and all of it (how an op's time
//   shrinks with the batch cannot be read from one trace) plus the traced
//   overhead before the op; the gradients are reduced after the last
//   microbatch only;
// - recomputation (activation checkpointing) of the forward in s segments:
//   each segment's input kept (at most the forward's largest allocation),
//   one segment's activations live at a time, the forward run again
//   piecewise during the backward pass.
// The advice is the option that fits with the shortest upper bound. See
// docs/design/replay.md.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_MEMORYADVISOR_H
#define DISTIR_REPLAY_MEMORYADVISOR_H

#include "DistIR/Replay/GraphEdit.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace distir::replay {

struct MemoryOption {
  enum class Kind { Traced, Accumulation, Recomputation };
  Kind kind = Kind::Traced;
  /// Gradient accumulation: microbatches per iteration.
  int64_t microbatches = 1;
  /// Recomputation: checkpointed segments of the forward pass.
  int64_t segments = 0;
  /// Predicted peak allocation of a typical iteration (largest over the
  /// ranks).
  int64_t peakBytes = 0;
  /// Replayed iteration. For gradient accumulation a range: each op on
  /// 1/k of the batch taking 1/k of its traced time (the lower bound) or
  /// all of it (the upper bound: small ops are dominated by costs that do
  /// not shrink with the batch); the same value otherwise.
  double predictedIteration = 0, predictedIterationUpper = 0;
  bool fits = false;
};

struct MemoryAdvice {
  int64_t budgetBytes = 0;
  /// Largest over the ranks of a typical iteration (the median over the
  /// replayed iterations): the traced peak and the activations at the
  /// backward pass's start; the forward's largest allocation; the largest
  /// peak of any one iteration.
  int64_t tracedPeakBytes = 0, activationBytes = 0,
          largestForwardAllocation = 0, tracedMaxPeakBytes = 0;
  /// The traced job first.
  std::vector<MemoryOption> options;
  /// The option that fits with the shortest upper bound; -1 when none does.
  int64_t best = -1;
};

/// Fails with one line when a rank's trace has no memory events or an
/// iteration has no backward pass, or is a GPU job's.
llvm::Expected<MemoryAdvice> adviseMemory(const DataflowGraph &graph,
                                          llvm::ArrayRef<double> offsets,
                                          int64_t budgetBytes);

} // namespace distir::replay

#endif // DISTIR_REPLAY_MEMORYADVISOR_H
