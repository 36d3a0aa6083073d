//===- Optimizer.h - What-if bucketing of a traced DDP job ------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dPRO's tensor fusion and partition for PyTorch DDP: the gradients'
// all-reduces are merged into (larger bucket cap) or split over (smaller
// cap) buckets by DDP's own rule, each candidate is priced with a transfer
// model fitted to the traced collectives and checked by replaying the
// rewritten dataflow graph; the recommendation is the bucket_cap_mb with
// the shortest replayed iteration. See docs/design/replay.md.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_OPTIMIZER_H
#define DISTIR_REPLAY_OPTIMIZER_H

#include "DistIR/Replay/Replayer.h"

#include <optional>

namespace distir::replay {

/// Transfer time of a collective of n elements: latency + n *
/// secondsPerElement, fitted by least squares to the median transfer time
/// of each traced size.
struct TransferModel {
  double latency = 0;
  double secondsPerElement = 0;
  /// False when the traced collectives have nearly one size (their range is
  /// below a fifth of the largest): the latency cannot be told from the
  /// bandwidth term and is taken as 0.
  bool latencySeparable = true;
  /// Collectives behind the fit.
  int64_t samples = 0;
  /// Root mean square of the fit's residuals over every collective
  /// (seconds).
  double residual = 0;
  double operator()(int64_t elements) const {
    return latency + secondsPerElement * elements;
  }
};
/// Fitted to the sized all-reduces (DDP's gradient buckets) among the
/// traced collectives.
TransferModel fitTransferModel(const DataflowGraph &graph,
                               llvm::ArrayRef<double> transferTimes);

/// DDP's assignment of gradients (in the order they become ready) to
/// buckets: a bucket closes once it holds at least its limit,
/// `firstBucketBytes` for the first and `bucketBytes` for the others.
/// Returns the number of gradients in each bucket.
std::vector<int64_t> assignBuckets(llvm::ArrayRef<int64_t> gradientElements,
                                   int64_t elementBytes,
                                   int64_t firstBucketBytes,
                                   int64_t bucketBytes);

/// How much a rank's compute slows down while collectives run on its host:
/// on a CPU job the process group's threads share the cores with the ranks'
/// compute, so overlap is not free. Fitted to the trace: a compute op that
/// overlaps its host's communication for a fraction f of its time takes
/// quiet * (1 + (slowdown - 1) * f), where quiet is its median duration in
/// the iterations where it did not overlap (the same op: the k-th op of its
/// name in the iteration, on the same rank).
struct Interference {
  /// Per compute node: its duration without concurrent communication.
  std::vector<double> quietDurations;
  double slowdown = 1;
  /// False when the trace has too little overlap to fit (slowdown 1).
  bool estimated = false;
};
/// `ranksPerHost` consecutive ranks share a host (0: all ranks one host).
Interference estimateInterference(const DataflowGraph &graph,
                                  llvm::ArrayRef<double> offsets,
                                  int64_t ranksPerHost);

struct BucketCandidate {
  /// DDP's bucket_cap_mb (-1 for the buckets as traced).
  double capMB = -1;
  /// Elements of each bucket of one iteration.
  std::vector<int64_t> bucketElements;
  double predictedIteration = 0;
};

struct BucketAdvice {
  TransferModel model;
  /// A GPU job's copies of each bucket to host memory (gloo reduces CUDA
  /// tensors there), fitted to the traced copies like the transfers.
  std::optional<TransferModel> copyModel;
  /// The traced buckets replayed with the model's transfer times (the
  /// model's own error against the measured-transfer replay).
  BucketCandidate tracedModelled;
  Interference interference;
  std::vector<BucketCandidate> candidates;
  /// Index of the fastest candidate.
  size_t best = 0;
  /// The model's error on the traced buckets: its replay against the
  /// replay of the measured transfers (relative).
  double modelError = 0;
  /// True when no candidate is predicted faster than the traced buckets by
  /// more than the model's error (at least 2%): keep the traced cap.
  bool keepTraced = false;
};

/// Prices DDP bucket caps from 0.25 MB to one bucket for everything.
/// Collectives other than sized all-reduces (a barrier) are kept as traced.
/// In a GPU job each bucket is copied to host memory first, on a stream of
/// its own, after the GPU work launched up to its last gradient (gloo over
/// CUDA tensors). Fails with one line when the traces have no gradient
/// shapes (record_shapes off, legacy exports) or no backward pass, or a GPU
/// job's all-reduce has no such copy (NCCL).
llvm::Expected<BucketAdvice> adviseBucketSize(const DataflowGraph &graph,
                                              llvm::ArrayRef<double> offsets,
                                              int64_t ranksPerHost = 0);

} // namespace distir::replay

#endif // DISTIR_REPLAY_OPTIMIZER_H
