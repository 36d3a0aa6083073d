//===- CollectiveCost.cpp - Cost of collectives on a cluster --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The alpha-beta model of docs/design/collective-cost.md: a collective costs
// `steps * alpha + bytes * f / B`, where alpha and B come from the slowest
// link class the group uses and B is divided among the concurrent groups that
// cross the same physical link instance.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/CollectiveCost.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace distir;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

llvm::StringRef distir::stringifyCollectiveKind(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "AllReduce";
  case CollectiveKind::ReduceScatter:
    return "ReduceScatter";
  case CollectiveKind::AllGather:
    return "AllGather";
  case CollectiveKind::Broadcast:
    return "Broadcast";
  case CollectiveKind::Reduce:
    return "Reduce";
  case CollectiveKind::Scatter:
    return "Scatter";
  case CollectiveKind::Gather:
    return "Gather";
  case CollectiveKind::AllToAll:
    return "AllToAll";
  case CollectiveKind::SendRecv:
    return "SendRecv";
  }
  llvm_unreachable("unknown collective kind");
}

std::optional<CollectiveKind>
distir::symbolizeCollectiveKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<CollectiveKind>>(name)
      .Case("AllReduce", CollectiveKind::AllReduce)
      .Case("ReduceScatter", CollectiveKind::ReduceScatter)
      .Case("AllGather", CollectiveKind::AllGather)
      .Case("Broadcast", CollectiveKind::Broadcast)
      .Case("Reduce", CollectiveKind::Reduce)
      .Case("Scatter", CollectiveKind::Scatter)
      .Case("Gather", CollectiveKind::Gather)
      .Case("AllToAll", CollectiveKind::AllToAll)
      .Case("SendRecv", CollectiveKind::SendRecv)
      .Default(std::nullopt);
}

llvm::StringRef distir::stringifyCollectiveAlgorithm(CollectiveAlgorithm algo) {
  switch (algo) {
  case CollectiveAlgorithm::Ring:
    return "ring";
  case CollectiveAlgorithm::Tree:
    return "tree";
  }
  llvm_unreachable("unknown collective algorithm");
}

std::optional<CollectiveAlgorithm>
distir::symbolizeCollectiveAlgorithm(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<CollectiveAlgorithm>>(name)
      .Case("ring", CollectiveAlgorithm::Ring)
      .Case("tree", CollectiveAlgorithm::Tree)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// Per-algorithm factors
//===----------------------------------------------------------------------===//

/// ceil(log2(n)) for n >= 1.
static int64_t ceilLog2(int64_t n) {
  int64_t bits = 0;
  while ((int64_t(1) << bits) < n)
    ++bits;
  return bits;
}

/// NCCL has tree algorithms only for these; everything else runs as a ring
/// (or a pipelined chain) whatever the requested algorithm.
static bool usesTree(CollectiveKind kind, CollectiveAlgorithm algorithm) {
  return algorithm == CollectiveAlgorithm::Tree &&
         (kind == CollectiveKind::AllReduce ||
          kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce);
}

double CollectiveCostModel::getBandwidthFactor(CollectiveKind kind, int64_t n,
                                               CollectiveAlgorithm algorithm) {
  if (n < 2)
    return 0;
  if (usesTree(kind, algorithm))
    // NCCL's tuning model converts tree bus bandwidth to algorithm bandwidth
    // with a ratio of 1/2 for all-reduce (reduce up, broadcast down, each
    // byte crosses a link twice) and 1 for the one-way trees.
    return kind == CollectiveKind::AllReduce ? 2.0 : 1.0;
  double dn = double(n);
  switch (kind) {
  case CollectiveKind::AllReduce:
    return 2.0 * (dn - 1) / dn;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllGather:
  case CollectiveKind::AllToAll:
  case CollectiveKind::Gather:
  case CollectiveKind::Scatter:
    return (dn - 1) / dn;
  case CollectiveKind::Broadcast:
  case CollectiveKind::Reduce:
  case CollectiveKind::SendRecv:
    return 1.0;
  }
  llvm_unreachable("unknown collective kind");
}

int64_t CollectiveCostModel::getLatencySteps(CollectiveKind kind, int64_t n,
                                             CollectiveAlgorithm algorithm) {
  if (n < 2)
    return 0;
  if (kind == CollectiveKind::SendRecv)
    return 1;
  if (usesTree(kind, algorithm))
    return (kind == CollectiveKind::AllReduce ? 2 : 1) * ceilLog2(n);
  return (kind == CollectiveKind::AllReduce ? 2 : 1) * (n - 1);
}

//===----------------------------------------------------------------------===//
// Link usage
//===----------------------------------------------------------------------===//

/// Where the physical link instances of a cluster are. `inner[l]` is the
/// number of devices below one unit of level l, so `d / inner[l]` names d's
/// unit; one instance of level l's link is a unit of l and the
/// `sharedBy`-sized slice of the devices below it.
namespace {
struct LinkLayout {
  explicit LinkLayout(const Cluster &cluster) : levels(cluster.levels) {
    assert(levels.size() <= 64 && "level bitmask");
    inner.assign(levels.size(), 1);
    for (size_t l = levels.size(); l-- > 1;)
      inner[l - 1] = inner[l] * levels[l].size;
    numDevices = inner.empty() ? 1 : inner[0] * levels[0].size;
  }

  int64_t instanceOf(unsigned level, int64_t device) const {
    int64_t sharedBy = levels[level].link.sharedBy;
    int64_t perUnit = (inner[level] + sharedBy - 1) / sharedBy;
    int64_t index =
        (device / inner[level]) * perUnit + (device % inner[level]) / sharedBy;
    return int64_t(level) * numDevices + index;
  }

  const std::vector<LevelSpec> &levels;
  llvm::SmallVector<int64_t> inner;
  int64_t numDevices = 1;
};
} // namespace

/// The link levels a group needs, ascending. `inner[l]` is the number of
/// devices below one unit of level l, so `d / inner[l]` names d's unit.
static llvm::SmallVector<unsigned, 4>
getUsedLevels(llvm::ArrayRef<int64_t> inner, llvm::ArrayRef<int64_t> group) {
  llvm::SmallVector<int64_t, 16> sorted(group);
  llvm::sort(sorted);
  // A ring in id order crosses, between consecutive members, exactly the
  // levels at which the group has members that share a parent unit.
  uint64_t mask = 0;
  for (size_t i = 1; i < sorted.size(); ++i)
    for (unsigned l = 0; l < inner.size(); ++l)
      if (sorted[i - 1] / inner[l] != sorted[i] / inner[l]) {
        mask |= uint64_t(1) << l;
        break;
      }
  llvm::SmallVector<unsigned, 4> result;
  for (unsigned l = 0; l < inner.size(); ++l)
    if (mask & (uint64_t(1) << l))
      result.push_back(l);
  return result;
}

double CollectiveCostModel::getTime(CollectiveKind kind,
                                    llvm::ArrayRef<int64_t> group,
                                    double bytes) const {
  llvm::SmallVector<int64_t> copy(group);
  return getConcurrentTime(kind,
                           llvm::ArrayRef<llvm::SmallVector<int64_t>>(copy),
                           llvm::ArrayRef<double>(bytes));
}

double CollectiveCostModel::getConcurrentTime(
    CollectiveKind kind, llvm::ArrayRef<llvm::SmallVector<int64_t>> groups,
    double bytes) const {
  llvm::SmallVector<double> perGroup(groups.size(), bytes);
  return getConcurrentTime(kind, groups, perGroup);
}

double CollectiveCostModel::getConcurrentTime(
    CollectiveKind kind, llvm::ArrayRef<llvm::SmallVector<int64_t>> groups,
    llvm::ArrayRef<double> bytes) const {
  assert(groups.size() == bytes.size() && "one size per group");
  assert((kind != CollectiveKind::SendRecv ||
          llvm::all_of(groups, [](const auto &g) { return g.size() <= 2; })) &&
         "send/recv connects two devices");
  const std::vector<LevelSpec> &levels = cluster.levels;
  LinkLayout layout(cluster);
  const llvm::SmallVector<int64_t> &inner = layout.inner;
  auto instanceOf = [&](unsigned level, int64_t device) {
    return layout.instanceOf(level, device);
  };

  // All-to-all sends one stream per member through its link; the ring and
  // tree algorithms cross each link instance once per direction per group.
  bool perMember = kind == CollectiveKind::AllToAll;

  llvm::SmallVector<llvm::SmallVector<unsigned, 4>> used;
  llvm::DenseMap<int64_t, int64_t> load;
  for (const llvm::SmallVector<int64_t> &group : groups) {
    used.push_back(getUsedLevels(inner, group));
    llvm::SmallSet<int64_t, 8> seen;
    for (unsigned level : used.back())
      for (int64_t device : group) {
        int64_t instance = instanceOf(level, device);
        if (perMember || seen.insert(instance).second)
          ++load[instance];
      }
  }

  double result = 0;
  for (auto [index, group] : llvm::enumerate(groups)) {
    int64_t n = group.size();
    if (n < 2)
      continue;
    double bandwidth = std::numeric_limits<double>::infinity();
    double latency = 0;
    for (unsigned level : used[index]) {
      const LinkSpec &link = levels[level].link;
      int64_t sharers = 1;
      for (int64_t device : group)
        sharers = std::max(sharers, load.lookup(instanceOf(level, device)));
      bandwidth = std::min(bandwidth, link.bandwidth / double(sharers));
      latency = std::max(latency, link.latency);
    }
    double time =
        double(getLatencySteps(kind, n, algorithm)) * latency +
        bytes[index] * getBandwidthFactor(kind, n, algorithm) / bandwidth;
    result = std::max(result, time);
  }
  return result;
}

llvm::SmallVector<int64_t>
CollectiveCostModel::getHeldLinks(CollectiveKind kind,
                                  llvm::ArrayRef<int64_t> group) const {
  llvm::SmallVector<int64_t> held;
  if (group.size() < 2)
    return held;
  LinkLayout layout(cluster);
  auto hold = [&](int64_t instance, bool out) {
    int64_t resource = 2 * instance + (out ? 1 : 0);
    if (!llvm::is_contained(held, resource))
      held.push_back(resource);
  };
  for (unsigned level : getUsedLevels(layout.inner, group)) {
    // A device's own link is already its communication stream.
    if (cluster.levels[level].link.sharedBy <= 1)
      continue;
    // The instances in the order the data reaches them (the group's order:
    // a send's and a broadcast's first member is the source).
    llvm::SmallVector<int64_t> instances;
    for (int64_t device : group) {
      int64_t instance = layout.instanceOf(level, device);
      if (!llvm::is_contained(instances, instance))
        instances.push_back(instance);
    }
    if (instances.size() < 2)
      continue;
    bool chain =
        kind == CollectiveKind::SendRecv || kind == CollectiveKind::Broadcast;
    for (auto [i, instance] : llvm::enumerate(instances)) {
      bool first = i == 0, last = i + 1 == instances.size();
      if (!chain || !last)
        hold(instance, /*out=*/true);
      if (!chain || !first)
        hold(instance, /*out=*/false);
    }
  }
  return held;
}
