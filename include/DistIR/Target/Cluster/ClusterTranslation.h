//===- ClusterTranslation.h - Cluster JSON <-> MLIR -------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_TARGET_CLUSTER_CLUSTERTRANSLATION_H
#define DISTIR_TARGET_CLUSTER_CLUSTERTRANSLATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace distir {

/// Registers `--import-cluster-json` (a cluster JSON file to an empty module
/// carrying `dist.cluster`) and `--export-cluster-json` (the module's
/// `dist.cluster` to JSON). `registerDialects` registers the dialects the
/// exported modules may contain, besides `dist`.
void registerClusterTranslations(
    void (*registerDialects)(mlir::DialectRegistry &) = nullptr);

} // namespace distir

#endif // DISTIR_TARGET_CLUSTER_CLUSTERTRANSLATION_H
