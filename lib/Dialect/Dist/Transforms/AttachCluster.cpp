//===- AttachCluster.cpp - Attach a cluster description to a module ------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTATTACHCLUSTERPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {
struct DistAttachClusterPass
    : public dist::impl::DistAttachClusterPassBase<DistAttachClusterPass> {
  using DistAttachClusterPassBase::DistAttachClusterPassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    if (cluster.empty()) {
      mlir::emitError(module.getLoc(),
                      "no cluster given: pass cluster=NAME or "
                      "cluster=path.json to dist-attach-cluster");
      return signalPassFailure();
    }
    FailureOr<Cluster> resolved =
        resolveCluster(cluster, [&](const Twine &msg) {
          mlir::emitError(module.getLoc(), msg);
        });
    if (failed(resolved))
      return signalPassFailure();
    module->setAttr(DistDialect::getClusterAttrName(),
                    clusterToAttr(&getContext(), *resolved));
  }
};
} // namespace
