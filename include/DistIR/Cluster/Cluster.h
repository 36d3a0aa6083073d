//===- Cluster.h - Cluster and topology description -------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// A cluster is a hierarchy of levels (outermost first, e.g. `node:4, gpu:8`),
// a link class per level, and one device specification shared by all devices.
// Device ids are the row-major linearization of the per-level coordinates, so
// devices 0..7 of `node:4, gpu:8` are the GPUs of node 0.
//
// The link of level L connects devices whose coordinates first differ at L
// (the `node` link is the inter-node network, the `gpu` link is NVLink).
// `sharedBy` says how many devices of the level below share one such link
// (e.g. 8 GPUs behind one NIC).
//
// The same description has three faces: this plain C++ model (what analyses
// use), a JSON file format, and the `#dist.cluster` attribute attached to a
// module. Presets build the model directly.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_CLUSTER_CLUSTER_H
#define DISTIR_CLUSTER_CLUSTER_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace distir {

/// Receives one error message (lowercase, no trailing period).
using ErrorFn = llvm::function_ref<void(const llvm::Twine &)>;

/// A class of links (per direction).
struct LinkSpec {
  /// Bytes per second of one link, per direction.
  double bandwidth = 0;
  /// Seconds of fixed latency per message or collective step.
  double latency = 0;
  /// How many devices share one such link (e.g. GPUs behind one NIC).
  int64_t sharedBy = 1;

  bool operator==(const LinkSpec &o) const {
    return bandwidth == o.bandwidth && latency == o.latency &&
           sharedBy == o.sharedBy;
  }
};

/// One level of the hierarchy.
struct LevelSpec {
  std::string name;
  int64_t size = 1;
  LinkSpec link;

  bool operator==(const LevelSpec &o) const {
    return name == o.name && size == o.size && link == o.link;
  }
};

/// Specification of every device of the cluster.
struct DeviceSpec {
  /// Peak FLOP/s per element type name ("f32", "f16", "bf16", "f64", "i8"...).
  std::map<std::string, double> peakFlops;
  /// Bytes per second of device memory.
  double memoryBandwidth = 0;
  /// Bytes of device memory.
  int64_t memoryCapacity = 0;
  /// Seconds of fixed overhead per kernel.
  double launchOverhead = 0;

  /// Peak FLOP/s for an element type name. Integer and index types without
  /// an entry use the "f32" rate; a floating-point type without an entry
  /// has none (std::nullopt), and callers report it.
  std::optional<double> getPeakFlops(llvm::StringRef dtype) const;

  bool operator==(const DeviceSpec &o) const {
    return peakFlops == o.peakFlops && memoryBandwidth == o.memoryBandwidth &&
           memoryCapacity == o.memoryCapacity &&
           launchOverhead == o.launchOverhead;
  }
};

/// A whole cluster.
struct Cluster {
  std::string name;
  /// Outermost level first.
  std::vector<LevelSpec> levels;
  DeviceSpec device;

  /// Product of the level sizes.
  int64_t getNumDevices() const;
  /// Per-level coordinates of a device id (outermost first).
  llvm::SmallVector<int64_t> getCoordinates(int64_t device) const;
  /// Index of the outermost level at which the coordinates of `a` and `b`
  /// differ, i.e. the level whose link connects them; std::nullopt if a == b.
  std::optional<unsigned> getConnectingLevel(int64_t a, int64_t b) const;
  /// Index of the outermost level spanned by a group of devices (the slowest
  /// link the group needs); std::nullopt for groups of fewer than 2 devices.
  std::optional<unsigned> getSpanningLevel(llvm::ArrayRef<int64_t> group) const;

  bool operator==(const Cluster &o) const {
    return name == o.name && levels == o.levels && device == o.device;
  }
};

/// Checks the invariants of a description: at least one level, distinct
/// non-empty level names, sizes >= 1, bandwidths > 0, latencies >= 0,
/// sharedBy >= 1, at least one peak flop/s entry and all of them > 0,
/// memory bandwidth > 0, capacity > 0, launch overhead >= 0.
mlir::LogicalResult verifyCluster(const Cluster &cluster, ErrorFn emitError);

/// Parses the JSON format (see docs/design/cluster.md). Errors name the JSON
/// path of the offending field, e.g. `$.levels[1].link.bandwidth`.
mlir::FailureOr<Cluster> parseClusterJSON(llvm::StringRef text,
                                          ErrorFn emitError);
/// Serializes to the JSON format; parseClusterJSON(toJSON(c)) == c.
llvm::json::Value clusterToJSON(const Cluster &cluster);

/// Names of the built-in presets, sorted.
llvm::ArrayRef<llvm::StringRef> getClusterPresetNames();
/// Builds a preset from a spec `NAME[:key=value[,key=value]...]`, e.g.
/// `dgx-h100:nodes=4` or `distir-uniform:devices=8`.
mlir::FailureOr<Cluster> getClusterPreset(llvm::StringRef spec,
                                          ErrorFn emitError);
/// Resolves what users pass to `--cluster`: a preset spec, or the path of a
/// JSON file (anything ending in `.json` or containing a `/`).
mlir::FailureOr<Cluster> resolveCluster(llvm::StringRef spec,
                                        ErrorFn emitError);

} // namespace distir

#endif // DISTIR_CLUSTER_CLUSTER_H
