//===- Cluster.cpp - Cluster and topology description ---------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Queries on the cluster model and the verifier of its invariants.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Cluster/Cluster.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <cassert>
#include <cmath>
#include <cstdio>

using namespace distir;

/// Largest cluster we accept; analyses enumerate devices, so bound the count.
static constexpr int64_t kMaxDevices = int64_t(1) << 24;

/// Formats a double compactly for error messages ("1e-05", "-3").
static std::string formatNumber(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

//===----------------------------------------------------------------------===//
// DeviceSpec
//===----------------------------------------------------------------------===//

std::optional<double> DeviceSpec::getPeakFlops(llvm::StringRef dtype) const {
  auto it = peakFlops.find(dtype.str());
  if (it != peakFlops.end())
    return it->second;
  // Integer and index arithmetic (masks, token ids, shapes) runs on the
  // general-purpose cores, whose rate is the f32 one. A floating-point type
  // without an entry has no price: the caller reports it.
  bool isInteger = dtype == "index" || dtype.starts_with("i") ||
                   dtype.starts_with("si") || dtype.starts_with("ui");
  if (!isInteger)
    return std::nullopt;
  it = peakFlops.find("f32");
  if (it != peakFlops.end())
    return it->second;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Cluster
//===----------------------------------------------------------------------===//

int64_t Cluster::getNumDevices() const {
  int64_t count = 1;
  for (const LevelSpec &level : levels)
    count *= level.size;
  return count;
}

llvm::SmallVector<int64_t> Cluster::getCoordinates(int64_t device) const {
  assert(device >= 0 && device < getNumDevices() && "device id out of range");
  llvm::SmallVector<int64_t> coords(levels.size());
  // Row-major: the innermost level varies fastest.
  for (size_t i = levels.size(); i-- > 0;) {
    coords[i] = device % levels[i].size;
    device /= levels[i].size;
  }
  return coords;
}

std::optional<unsigned> Cluster::getConnectingLevel(int64_t a,
                                                    int64_t b) const {
  if (a == b)
    return std::nullopt;
  llvm::SmallVector<int64_t> ca = getCoordinates(a);
  llvm::SmallVector<int64_t> cb = getCoordinates(b);
  for (unsigned i = 0, e = ca.size(); i != e; ++i)
    if (ca[i] != cb[i])
      return i;
  return std::nullopt;
}

std::optional<unsigned>
Cluster::getSpanningLevel(llvm::ArrayRef<int64_t> group) const {
  if (group.size() < 2)
    return std::nullopt;
  // The outermost level at which any pair differs is also the outermost level
  // at which some member differs from the first one, so a linear scan works.
  std::optional<unsigned> result;
  for (int64_t device : group.drop_front()) {
    std::optional<unsigned> level = getConnectingLevel(group.front(), device);
    if (level && (!result || *level < *result))
      result = level;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// verifyCluster
//===----------------------------------------------------------------------===//

mlir::LogicalResult distir::verifyCluster(const Cluster &cluster,
                                          ErrorFn emitError) {
  if (cluster.levels.empty()) {
    emitError("cluster '" + cluster.name + "' has no levels");
    return mlir::failure();
  }

  llvm::StringSet<> names;
  int64_t numDevices = 1;
  for (auto [index, level] : llvm::enumerate(cluster.levels)) {
    if (level.name.empty()) {
      emitError("level " + llvm::Twine(index) + " has an empty name");
      return mlir::failure();
    }
    if (!names.insert(level.name).second) {
      emitError("duplicate level name '" + level.name + "'");
      return mlir::failure();
    }
    if (level.size < 1) {
      emitError("level '" + level.name + "': size must be >= 1, got " +
                llvm::Twine(level.size));
      return mlir::failure();
    }
    const LinkSpec &link = level.link;
    if (!(link.bandwidth > 0) || !std::isfinite(link.bandwidth)) {
      emitError("level '" + level.name +
                "': link bandwidth must be a positive finite number, got " +
                formatNumber(link.bandwidth));
      return mlir::failure();
    }
    if (!(link.latency >= 0) || !std::isfinite(link.latency)) {
      emitError("level '" + level.name +
                "': link latency must be a non-negative finite number, got " +
                formatNumber(link.latency));
      return mlir::failure();
    }
    if (link.sharedBy < 1) {
      emitError("level '" + level.name + "': link sharedBy must be >= 1, got " +
                llvm::Twine(link.sharedBy));
      return mlir::failure();
    }
    if (llvm::MulOverflow(numDevices, level.size, numDevices)) {
      emitError("total device count of cluster '" + cluster.name +
                "' overflows");
      return mlir::failure();
    }
    if (numDevices > kMaxDevices) {
      emitError("total device count of cluster '" + cluster.name +
                "' exceeds the limit of " + llvm::Twine(kMaxDevices));
      return mlir::failure();
    }
  }

  const DeviceSpec &device = cluster.device;
  if (device.peakFlops.empty()) {
    emitError("device has no peak flop/s entries");
    return mlir::failure();
  }
  if (!device.peakFlops.count("f32")) {
    emitError("device has no peak flop/s for 'f32' (needed for f32 and "
              "integer ops)");
    return mlir::failure();
  }
  for (const auto &[dtype, flops] : device.peakFlops) {
    if (!(flops > 0) || !std::isfinite(flops)) {
      emitError("device peak flop/s for '" + dtype +
                "' must be a positive finite number, got " +
                formatNumber(flops));
      return mlir::failure();
    }
  }
  if (!(device.memoryBandwidth > 0) || !std::isfinite(device.memoryBandwidth)) {
    emitError("device memory bandwidth must be a positive finite number, got " +
              formatNumber(device.memoryBandwidth));
    return mlir::failure();
  }
  if (device.memoryCapacity <= 0) {
    emitError("device memory capacity must be positive, got " +
              llvm::Twine(device.memoryCapacity));
    return mlir::failure();
  }
  if (!(device.launchOverhead >= 0) || !std::isfinite(device.launchOverhead)) {
    emitError(
        "device launch overhead must be a non-negative finite number, got " +
        formatNumber(device.launchOverhead));
    return mlir::failure();
  }
  return mlir::success();
}
