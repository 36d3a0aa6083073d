//===- DistCluster.cpp - Cluster <-> #dist.cluster conversion
//---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace distir;
using namespace distir::dist;

FailureOr<Cluster>
distir::dist::clusterFromAttrParts(StringRef name, ArrayRef<LevelAttr> levels,
                                   DeviceSpecAttr device, ErrorFn emitError) {
  Cluster cluster;
  cluster.name = name.str();
  for (LevelAttr level : levels) {
    if (!level) {
      emitError("cluster levels must be #dist.level attributes");
      return failure();
    }
    cluster.levels.push_back(
        {level.getName().str(), level.getSize(),
         LinkSpec{level.getBandwidth().convertToDouble(),
                  level.getLatency().convertToDouble(), level.getSharedBy()}});
  }
  if (!device) {
    emitError("cluster device must be a #dist.device_spec attribute");
    return failure();
  }
  for (NamedAttribute entry : device.getPeakFlops()) {
    auto value = dyn_cast<FloatAttr>(entry.getValue());
    if (!value) {
      emitError("peak_flops entry '" + entry.getName().getValue() +
                "' must be a float");
      return failure();
    }
    cluster.device.peakFlops[entry.getName().str()] = value.getValueAsDouble();
  }
  cluster.device.memoryBandwidth =
      device.getMemoryBandwidth().convertToDouble();
  cluster.device.memoryCapacity = device.getMemoryCapacity();
  cluster.device.launchOverhead = device.getLaunchOverhead().convertToDouble();
  return cluster;
}

Cluster distir::dist::clusterFromAttr(ClusterAttr attr) {
  FailureOr<Cluster> cluster = clusterFromAttrParts(
      attr.getName(), attr.getLevels(), attr.getDevice(), [](const Twine &) {});
  assert(succeeded(cluster) && "verified #dist.cluster must convert");
  return *cluster;
}

ClusterAttr distir::dist::clusterToAttr(MLIRContext *context,
                                        const Cluster &cluster) {
  Builder b(context);
  SmallVector<LevelAttr> levels;
  for (const LevelSpec &level : cluster.levels)
    levels.push_back(LevelAttr::get(
        context, level.name, level.size, APFloat(level.link.bandwidth),
        APFloat(level.link.latency), level.link.sharedBy));
  SmallVector<NamedAttribute> flops;
  for (const auto &[dtype, value] : cluster.device.peakFlops)
    flops.push_back(b.getNamedAttr(dtype, b.getF64FloatAttr(value)));
  auto device = DeviceSpecAttr::get(context, b.getDictionaryAttr(flops),
                                    APFloat(cluster.device.memoryBandwidth),
                                    cluster.device.memoryCapacity,
                                    APFloat(cluster.device.launchOverhead));
  return ClusterAttr::get(context, cluster.name, levels, device);
}

ClusterAttr distir::dist::getModuleCluster(ModuleOp module) {
  return module->getAttrOfType<ClusterAttr>(DistDialect::getClusterAttrName());
}

FailureOr<Cluster> distir::dist::resolveModuleCluster(ModuleOp module,
                                                      StringRef spec,
                                                      StringRef howToGive,
                                                      ErrorFn emitError) {
  if (!spec.empty()) {
    // Report only the first problem (one line).
    bool reported = false;
    FailureOr<Cluster> resolved =
        resolveCluster(spec, [&](const llvm::Twine &msg) {
          if (!reported)
            emitError(msg);
          reported = true;
        });
    if (failed(resolved) || reported)
      return failure();
    return resolved;
  }
  if (ClusterAttr attr = getModuleCluster(module))
    return clusterFromAttr(attr);
  emitError("no cluster: " + howToGive);
  return failure();
}
