//===- Decompose.cpp - Unit communication tasks of a resharding -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Cuts the tensor at every source and destination tile boundary of every
// dimension. Each resulting piece lies wholly inside one source shard and
// one destination shard per dimension, so its holders and its receivers are
// whole mesh positions: the paper's unit communication tasks.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/Reshard.h"

#include "llvm/ADT/STLExtras.h"

#include <map>

using namespace mlir;
using namespace distir;
using namespace distir::reshard;

int64_t reshard::getVolume(const Box &box) {
  int64_t volume = 1;
  for (auto [lo, hi] : box)
    volume *= hi - lo;
  return volume;
}

bool reshard::contains(const Box &outer, const Box &inner) {
  for (auto [o, i] : llvm::zip(outer, inner))
    if (i.first < o.first || i.second > o.second)
      return false;
  return true;
}

/// The shard index of each dimension at every mesh position, and the box.
static FailureOr<Layout> getLayout(dist::ShardingAttr sharding,
                                   ArrayRef<int64_t> shape,
                                   const Cluster &cluster, StringRef role,
                                   ErrorFn emitError) {
  if (!sharding.getPartial().empty()) {
    emitError("the " + role +
              " sharding has partial mesh axes: a pending reduction is not a "
              "resharding (all-reduce or reduce-scatter it first)");
    return failure();
  }
  if (sharding.isStrided()) {
    emitError("the " + role +
              " sharding is strided (groups): a shard is several tiles, "
              "which the planner does not decompose");
    return failure();
  }
  if (sharding.getSplit().size() > shape.size()) {
    emitError("the " + role + " sharding splits " +
              Twine(sharding.getSplit().size()) + " dimensions of a rank-" +
              Twine(shape.size()) + " tensor");
    return failure();
  }
  dist::MeshAttr mesh = sharding.getMesh();
  if (mesh.getNumPositions() > kMaxUnitTasks) {
    emitError("the " + role + " mesh has " + Twine(mesh.getNumPositions()) +
              " positions, more than the " + Twine(kMaxUnitTasks) +
              " a resharding plans for");
    return failure();
  }
  Layout layout;
  int64_t numDevices = cluster.getNumDevices();
  for (int64_t p = 0, e = mesh.getNumPositions(); p < e; ++p) {
    int64_t device = mesh.getDevice(p);
    if (device < 0 || device >= numDevices) {
      emitError("the " + role + " mesh places position " + Twine(p) +
                " on device " + Twine(device) + ", outside the " +
                Twine(numDevices) + " devices of cluster '" + cluster.name +
                "'");
      return failure();
    }
    SmallVector<int64_t> coordinates = mesh.getCoordinates(p);
    Box box;
    for (auto [d, size] : llvm::enumerate(shape))
      box.push_back(sharding.getShardRange(
          d, size, sharding.getShardIndex(d, coordinates)));
    layout.devices.push_back(device);
    layout.boxes.push_back(std::move(box));
  }
  return layout;
}

FailureOr<Problem>
reshard::decompose(dist::ShardingAttr source, dist::ShardingAttr destination,
                   ArrayRef<int64_t> shape, int64_t elementBytes,
                   const Cluster &cluster, ErrorFn emitError) {
  Problem problem;
  problem.shape.assign(shape.begin(), shape.end());
  problem.elementBytes = elementBytes;
  problem.source = source;
  problem.destination = destination;
  FailureOr<Layout> sourceLayout =
      getLayout(source, shape, cluster, "source", emitError);
  if (failed(sourceLayout))
    return failure();
  FailureOr<Layout> destinationLayout =
      getLayout(destination, shape, cluster, "destination", emitError);
  if (failed(destinationLayout))
    return failure();
  problem.sourceLayout = std::move(*sourceLayout);
  problem.destinationLayout = std::move(*destinationLayout);

  // The cuts of each dimension: every shard boundary on either side.
  SmallVector<SmallVector<std::pair<int64_t, int64_t>>> intervals;
  int64_t count = 1;
  for (auto [d, size] : llvm::enumerate(shape)) {
    SmallVector<int64_t> cuts = {0, size};
    for (dist::ShardingAttr sharding : {source, destination})
      for (int64_t s = 0, e = sharding.getNumShards(d); s < e; ++s)
        cuts.push_back(sharding.getShardRange(d, size, s).first);
    llvm::sort(cuts);
    cuts.erase(llvm::unique(cuts), cuts.end());
    intervals.emplace_back();
    for (size_t i = 1; i < cuts.size(); ++i)
      intervals.back().push_back({cuts[i - 1], cuts[i]});
    if (intervals.back().empty())
      return problem; // an empty tensor: nothing to move
    count *= static_cast<int64_t>(intervals.back().size());
    if (count > kMaxUnitTasks) {
      emitError("the resharding has more than " + Twine(kMaxUnitTasks) +
                " unit tasks (the tiles of the two shardings cut the tensor "
                "into too many pieces)");
      return failure();
    }
  }

  // A piece lies in one shard per dimension on each side; its holders are
  // the positions of that shard tuple.
  struct Side {
    /// Per dimension, the shard containing each interval.
    SmallVector<SmallVector<int64_t>> shardOf;
    std::map<SmallVector<int64_t>, SmallVector<int64_t>> devices;
  };
  auto side = [&](dist::ShardingAttr sharding, const Layout &layout) {
    Side result;
    for (auto [d, size] : llvm::enumerate(shape)) {
      result.shardOf.emplace_back();
      int64_t shard = 0;
      for (auto [lo, hi] : intervals[d]) {
        while (sharding.getShardRange(d, size, shard).second <= lo)
          ++shard;
        result.shardOf.back().push_back(shard);
      }
    }
    dist::MeshAttr mesh = sharding.getMesh();
    for (auto [p, device] : llvm::enumerate(layout.devices)) {
      SmallVector<int64_t> coordinates = mesh.getCoordinates(p);
      SmallVector<int64_t> key;
      for (size_t d = 0; d < shape.size(); ++d)
        key.push_back(sharding.getShardIndex(d, coordinates));
      result.devices[key].push_back(device);
    }
    for (auto &entry : result.devices)
      llvm::sort(entry.second);
    return result;
  };
  Side from = side(source, problem.sourceLayout);
  Side to = side(destination, problem.destinationLayout);
  auto holders = [&](const Side &side, ArrayRef<size_t> index) {
    SmallVector<int64_t> key;
    for (auto [d, i] : llvm::enumerate(index))
      key.push_back(side.shardOf[d][i]);
    auto it = side.devices.find(key);
    return it == side.devices.end() ? SmallVector<int64_t>() : it->second;
  };
  SmallVector<size_t> index(shape.size(), 0);
  for (int64_t t = 0; t < count; ++t) {
    UnitTask task;
    for (auto [d, i] : llvm::enumerate(index))
      task.box.push_back(intervals[d][i]);
    task.bytes = static_cast<double>(getVolume(task.box)) *
                 static_cast<double>(elementBytes);
    task.senders = holders(from, index);
    for (int64_t device : holders(to, index))
      (llvm::is_contained(task.senders, device) ? task.local : task.receivers)
          .push_back(device);
    problem.tasks.push_back(std::move(task));
    // Row-major odometer over the intervals.
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < intervals[d].size())
        break;
      index[d] = 0;
    }
  }
  return problem;
}
