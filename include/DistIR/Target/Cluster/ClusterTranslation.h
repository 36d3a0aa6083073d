//===- ClusterTranslation.h - Cluster JSON <-> MLIR -------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_TARGET_CLUSTER_CLUSTERTRANSLATION_H
#define DISTIR_TARGET_CLUSTER_CLUSTERTRANSLATION_H

namespace distir {

/// Registers `--import-cluster-json` (a cluster JSON file to an empty module
/// carrying `dist.cluster`) and `--export-cluster-json` (the module's
/// `dist.cluster` to JSON).
void registerClusterTranslations();

} // namespace distir

#endif // DISTIR_TARGET_CLUSTER_CLUSTERTRANSLATION_H
