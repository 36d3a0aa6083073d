//===- DistCluster.h - Cluster <-> #dist.cluster conversion -----*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Converts between the plain C++ cluster model (DistIR/Cluster/Cluster.h)
// and the `#dist.cluster` attribute that pipelines attach to modules.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTCLUSTER_H
#define DISTIR_DIALECT_DIST_IR_DISTCLUSTER_H

#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace distir::dist {

/// Builds the C++ model from the parameters of a `#dist.cluster`; fails (with
/// one error) if a `peak_flops` entry is not a float attribute.
mlir::FailureOr<Cluster> clusterFromAttrParts(llvm::StringRef name,
                                              llvm::ArrayRef<LevelAttr> levels,
                                              DeviceSpecAttr device,
                                              ErrorFn emitError);

/// The C++ model of a verified attribute.
Cluster clusterFromAttr(ClusterAttr attr);

/// The attribute form of a cluster.
ClusterAttr clusterToAttr(mlir::MLIRContext *context, const Cluster &cluster);

/// The cluster attached to `module` as `dist.cluster`, or null.
ClusterAttr getModuleCluster(mlir::ModuleOp module);

/// The cluster a tool or pass prices `module` on: `spec` (a preset or JSON
/// file) when given, else the module's `dist.cluster`. Fails after one
/// error: the spec's, or "no cluster: <howToGive>".
mlir::FailureOr<Cluster> resolveModuleCluster(mlir::ModuleOp module,
                                              llvm::StringRef spec,
                                              llvm::StringRef howToGive,
                                              ErrorFn emitError);

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_IR_DISTCLUSTER_H
