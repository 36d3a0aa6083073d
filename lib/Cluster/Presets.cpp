//===- Presets.cpp - Built-in cluster presets -----------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Built-in cluster descriptions and the `--cluster` resolver. The numbers and
// their sources are documented in docs/design/cluster.md; keep both in sync.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Cluster/Cluster.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <system_error>

using namespace distir;

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

static constexpr double kGbps = 1.25e8; // 1 Gbit/s in bytes/s
static constexpr double kGBps = 1e9;    // 1 GB/s in bytes/s
static constexpr int64_t kGiB = int64_t(1) << 30;

/// Every preset kernel launch costs this much; a typical CUDA launch figure.
static constexpr double kLaunchOverhead = 1e-5;

static LinkSpec link(double bandwidth, double latency, int64_t sharedBy = 1) {
  LinkSpec spec;
  spec.bandwidth = bandwidth;
  spec.latency = latency;
  spec.sharedBy = sharedBy;
  return spec;
}

static LevelSpec level(llvm::StringRef name, int64_t size, LinkSpec link) {
  LevelSpec spec;
  spec.name = name.str();
  spec.size = size;
  spec.link = link;
  return spec;
}

/// NVIDIA V100 (SXM2) with `memoryGiB` of HBM2.
static DeviceSpec v100(int64_t memoryGiB) {
  DeviceSpec device;
  device.peakFlops = {{"f32", 15.7e12}, {"f16", 125e12}, {"f64", 7.8e12}};
  device.memoryBandwidth = 900 * kGBps;
  device.memoryCapacity = memoryGiB * kGiB;
  device.launchOverhead = kLaunchOverhead;
  return device;
}

/// NVIDIA A100 (SXM4) with `memoryGiB` of HBM2(e).
static DeviceSpec a100(int64_t memoryGiB, double memoryBandwidth) {
  DeviceSpec device;
  device.peakFlops = {{"f32", 19.5e12},
                      {"f16", 312e12},
                      {"bf16", 312e12},
                      {"tf32", 156e12},
                      {"f64", 9.7e12}};
  device.memoryBandwidth = memoryBandwidth;
  device.memoryCapacity = memoryGiB * kGiB;
  device.launchOverhead = kLaunchOverhead;
  return device;
}

/// NVIDIA H100 (SXM5, 80 GB).
static DeviceSpec h100() {
  DeviceSpec device;
  device.peakFlops = {{"f32", 67e12},
                      {"bf16", 989e12},
                      {"f16", 989e12},
                      {"f64", 34e12},
                      {"tf32", 494e12}};
  device.memoryBandwidth = 3350 * kGBps;
  device.memoryCapacity = 80 * kGiB;
  device.launchOverhead = kLaunchOverhead;
  return device;
}

//===----------------------------------------------------------------------===//
// Presets
//===----------------------------------------------------------------------===//

namespace {
struct PresetOptions {
  int64_t nodes = 1;
  int64_t devices = 4;
};

struct PresetInfo {
  llvm::StringRef name;
  /// Whether the preset accepts `devices=N`.
  bool hasDevicesOption;
  Cluster (*build)(const PresetOptions &options);
};
} // namespace

static Cluster awsP3_8xlarge(const PresetOptions &options) {
  return {"aws-p3.8xlarge",
          {level("node", options.nodes, link(10 * kGbps, 25e-6, 4)),
           level("gpu", 4, link(150 * kGBps, 2e-6))},
          v100(16)};
}

static Cluster dgxA100(const PresetOptions &options) {
  return {"dgx-a100",
          {level("node", options.nodes, link(200 * kGbps, 5e-6, 1)),
           level("gpu", 8, link(300 * kGBps, 2e-6))},
          a100(80, 2039 * kGBps)};
}

static Cluster dgxH100(const PresetOptions &options) {
  return {"dgx-h100",
          {level("node", options.nodes, link(400 * kGbps, 5e-6, 1)),
           level("gpu", 8, link(450 * kGBps, 2e-6))},
          h100()};
}

static Cluster dgx1V100(const PresetOptions &options) {
  return {"dgx1-v100",
          {level("node", options.nodes, link(100 * kGbps, 5e-6, 2)),
           level("gpu", 8, link(150 * kGBps, 2e-6))},
          v100(32)};
}

static Cluster dgx2V100x16(const PresetOptions &options) {
  return {"dgx2-v100x16",
          {level("node", options.nodes, link(100 * kGbps, 5e-6, 2)),
           level("gpu", 16, link(150 * kGBps, 2e-6))},
          v100(32)};
}

static Cluster distirUniform(const PresetOptions &options) {
  // The DistIR paper's simulator: one 25 Gbps link class everywhere.
  DeviceSpec device;
  device.peakFlops = {{"f32", 1.4e13}, {"f16", 1.4e13}, {"bf16", 1.4e13}};
  device.memoryBandwidth = 9e11;
  device.memoryCapacity = 16 * kGiB;
  device.launchOverhead = kLaunchOverhead;
  return {"distir-uniform",
          {level("node", options.nodes, link(25 * kGbps, 0)),
           level("device", options.devices, link(25 * kGbps, 0))},
          device};
}

static Cluster gcpA100x16(const PresetOptions &options) {
  // One 100 Gbps NIC shared by all 16 GPUs, achieving ~60% of line rate.
  return {"gcp-a100x16",
          {level("node", options.nodes, link(60 * kGbps, 25e-6, 16)),
           level("gpu", 16, link(270 * kGBps, 2e-6))},
          a100(40, 1555 * kGBps)};
}

static Cluster gcpV100x8(const PresetOptions &options) {
  // Same ~60%-efficient 100 Gbps NIC as gcp-a100x16, behind 8 GPUs.
  return {"gcp-v100x8",
          {level("node", options.nodes, link(60 * kGbps, 25e-6, 8)),
           level("cpu", 2, link(32 * kGBps, 3e-6)),
           level("gpu", 4, link(135 * kGBps, 2e-6))},
          v100(16)};
}

/// Sorted by name.
static const PresetInfo kPresets[] = {
    {"aws-p3.8xlarge", false, awsP3_8xlarge},
    {"dgx-a100", false, dgxA100},
    {"dgx-h100", false, dgxH100},
    {"dgx1-v100", false, dgx1V100},
    {"dgx2-v100x16", false, dgx2V100x16},
    {"distir-uniform", true, distirUniform},
    {"gcp-a100x16", false, gcpA100x16},
    {"gcp-v100x8", false, gcpV100x8},
};

llvm::ArrayRef<llvm::StringRef> distir::getClusterPresetNames() {
  static const llvm::SmallVector<llvm::StringRef> names = [] {
    llvm::SmallVector<llvm::StringRef> result;
    for (const PresetInfo &preset : kPresets)
      result.push_back(preset.name);
    llvm::sort(result);
    return result;
  }();
  return names;
}

//===----------------------------------------------------------------------===//
// Spec parsing
//===----------------------------------------------------------------------===//

mlir::FailureOr<Cluster> distir::getClusterPreset(llvm::StringRef spec,
                                                  ErrorFn emitError) {
  llvm::StringRef name, optionText;
  std::tie(name, optionText) = spec.split(':');
  bool hasOptions = spec.contains(':');

  const PresetInfo *preset = llvm::find_if(
      kPresets, [&](const PresetInfo &p) { return p.name == name; });
  if (preset == std::end(kPresets)) {
    emitError("unknown cluster preset '" + name + "' (valid presets: " +
              llvm::join(getClusterPresetNames(), ", ") + ")");
    return mlir::failure();
  }

  llvm::SmallVector<llvm::StringRef> validKeys = {"nodes"};
  if (preset->hasDevicesOption)
    validKeys.push_back("devices");

  PresetOptions options;
  llvm::SmallVector<llvm::StringRef> seen;
  // Canonical spelling of the options, used in the cluster name.
  llvm::SmallVector<std::string> canonical;
  if (hasOptions) {
    llvm::SmallVector<llvm::StringRef> entries;
    optionText.split(entries, ',');
    for (llvm::StringRef entry : entries) {
      auto [key, value] = entry.split('=');
      if (!entry.contains('=') || key.empty() || value.empty()) {
        emitError("malformed option '" + entry + "' in cluster spec '" + spec +
                  "': expected key=value");
        return mlir::failure();
      }
      if (!llvm::is_contained(validKeys, key)) {
        emitError("unknown option '" + key + "' for cluster preset '" + name +
                  "' (valid options: " + llvm::join(validKeys, ", ") + ")");
        return mlir::failure();
      }
      if (llvm::is_contained(seen, key)) {
        emitError("duplicate option '" + key + "' in cluster spec '" + spec +
                  "'");
        return mlir::failure();
      }
      seen.push_back(key);
      int64_t number;
      // getAsInteger returns true on error, including overflow.
      if (value.getAsInteger(10, number) || number < 1) {
        emitError("invalid value '" + value + "' for option '" + key +
                  "' of cluster preset '" + name +
                  "': expected an integer >= 1");
        return mlir::failure();
      }
      (key == "nodes" ? options.nodes : options.devices) = number;
      canonical.push_back((key + "=" + llvm::Twine(number)).str());
    }
  }

  Cluster cluster = preset->build(options);
  if (!canonical.empty())
    cluster.name = (name + ":" + llvm::join(canonical, ",")).str();
  // Catches option values that make the cluster too large.
  if (failed(verifyCluster(cluster, emitError)))
    return mlir::failure();
  return cluster;
}

mlir::FailureOr<Cluster> distir::resolveCluster(llvm::StringRef spec,
                                                ErrorFn emitError) {
  if (!spec.ends_with(".json") && !spec.contains('/'))
    return getClusterPreset(spec, emitError);

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(spec, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    emitError("cannot open cluster file '" + spec + "': " + ec.message());
    return mlir::failure();
  }
  // Prefix errors with the file so users know which description is wrong.
  auto emitFileError = [&](const llvm::Twine &message) {
    emitError(spec + ": " + message);
  };
  return parseClusterJSON((*buffer)->getBuffer(), emitFileError);
}
