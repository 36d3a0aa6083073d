//===- CollectiveCost.h - Cost of collectives on a cluster ------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Predicts the time of communication ops on a cluster topology: NCCL-style
// ring and tree algorithms, nccl-tests bus-bandwidth factors, groups that
// span levels limited by their slowest link, and links shared between the
// devices (and concurrent groups) that use them. Used by the simulator and
// by reduction synthesis (P²).
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_COLLECTIVECOST_H
#define DISTIR_ANALYSIS_COLLECTIVECOST_H

#include "DistIR/Cluster/Cluster.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace distir {

enum class CollectiveKind {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Reduce,
  Scatter,
  Gather,
  AllToAll,
  /// One point-to-point transfer between two devices.
  SendRecv,
};

enum class CollectiveAlgorithm { Ring, Tree };

llvm::StringRef stringifyCollectiveKind(CollectiveKind kind);
std::optional<CollectiveKind> symbolizeCollectiveKind(llvm::StringRef name);
llvm::StringRef stringifyCollectiveAlgorithm(CollectiveAlgorithm algo);
std::optional<CollectiveAlgorithm>
symbolizeCollectiveAlgorithm(llvm::StringRef name);

/// Time model of collectives on one cluster.
///
/// Sizes follow the nccl-tests convention: `bytes` (S) is the size of each
/// rank's buffer for AllReduce, Broadcast, Reduce and SendRecv, and the size
/// of the whole gathered/scattered buffer (n x chunk) for AllGather,
/// ReduceScatter, Gather, Scatter and AllToAll. Times are in seconds.
class CollectiveCostModel {
public:
  CollectiveCostModel(const Cluster &cluster,
                      CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring)
      : cluster(cluster), algorithm(algorithm) {}

  /// Time of one collective over `group` (distinct device ids of the
  /// cluster, in the group's rank order) when nothing else communicates.
  /// A group of one device costs 0.
  double getTime(CollectiveKind kind, llvm::ArrayRef<int64_t> group,
                 double bytes) const;

  /// Time until all of `groups` finish when they run the same collective of
  /// `bytes` at the same moment on disjoint device sets: links that several
  /// groups use at once (e.g. one NIC behind `sharedBy` GPUs) divide their
  /// bandwidth among those groups.
  double getConcurrentTime(CollectiveKind kind,
                           llvm::ArrayRef<llvm::SmallVector<int64_t>> groups,
                           double bytes) const;
  /// Same, with one size per group (`bytes.size() == groups.size()`): groups
  /// of one step of a synthesized reduction may hold different amounts.
  double getConcurrentTime(CollectiveKind kind,
                           llvm::ArrayRef<llvm::SmallVector<int64_t>> groups,
                           llvm::ArrayRef<double> bytes) const;

  /// The shared links one collective over `group` occupies while it runs,
  /// as resource ids (2 x link instance + 1 for the outgoing direction):
  /// the instances of levels whose `sharedBy` > 1 (e.g. one NIC behind
  /// four GPUs) that the group crosses; a device's own links are its
  /// communication stream. A send and a broadcast move data along a chain
  /// in group order (the source first): the first instance only sends, the
  /// last only receives. Other collectives use both directions of every
  /// instance they cross. The simulator queues ops on these resources so
  /// that concurrent transfers through one NIC wait for each other.
  llvm::SmallVector<int64_t> getHeldLinks(CollectiveKind kind,
                                          llvm::ArrayRef<int64_t> group) const;

  /// The nccl-tests bus-bandwidth factor f of `kind` over `n` devices under
  /// `algorithm` (time = latency + bytes * f / bandwidth).
  static double getBandwidthFactor(CollectiveKind kind, int64_t n,
                                   CollectiveAlgorithm algorithm);
  /// The number of sequential latency terms of `kind` over `n` devices.
  static int64_t getLatencySteps(CollectiveKind kind, int64_t n,
                                 CollectiveAlgorithm algorithm);

  const Cluster &getCluster() const { return cluster; }
  CollectiveAlgorithm getAlgorithm() const { return algorithm; }

private:
  const Cluster &cluster;
  CollectiveAlgorithm algorithm;
};

} // namespace distir

#endif // DISTIR_ANALYSIS_COLLECTIVECOST_H
