//===- LowerReshard.cpp - dist.reshard to planned transfers ---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Each dist.reshard becomes the cross-mesh resharding planner's plan: the
// same decomposition, strategies, balancing and emission as distir-reshard
// (docs/design/resharding.md).
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/Search/Reshard.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTLOWERRESHARDPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;

namespace {
struct DistLowerReshardPass
    : public distir::dist::impl::DistLowerReshardPassBase<
          DistLowerReshardPass> {
  using DistLowerReshardPassBase::DistLowerReshardPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto moduleError = [&](const Twine &message) {
      module.emitError() << message;
    };
    std::optional<reshard::Strategy> forced;
    switch (strategy) {
    case dist::ReshardStrategy::Auto:
      break;
    case dist::ReshardStrategy::SendRecv:
      forced = reshard::Strategy::SendRecv;
      break;
    case dist::ReshardStrategy::LocalAllGather:
      forced = reshard::Strategy::LocalAllGather;
      break;
    case dist::ReshardStrategy::GlobalAllGather:
      forced = reshard::Strategy::GlobalAllGather;
      break;
    case dist::ReshardStrategy::Broadcast:
      forced = reshard::Strategy::Broadcast;
      break;
    }
    std::optional<reshard::Balancer> balancer;
    switch (balance) {
    case dist::ReshardBalance::Ensemble:
      balancer = reshard::Balancer::Ensemble;
      break;
    case dist::ReshardBalance::LongestFirst:
      balancer = reshard::Balancer::LongestFirst;
      break;
    case dist::ReshardBalance::Greedy:
      balancer = reshard::Balancer::Greedy;
      break;
    case dist::ReshardBalance::DepthFirst:
      balancer = reshard::Balancer::DepthFirst;
      break;
    case dist::ReshardBalance::Random:
      balancer = reshard::Balancer::Random;
      break;
    case dist::ReshardBalance::None:
      balancer = reshard::Balancer::None;
      break;
    }
    SmallVector<dist::ReshardOp> ops;
    module.walk([&](dist::ReshardOp op) { ops.push_back(op); });
    if (ops.empty())
      return;
    FailureOr<Cluster> resolved = dist::resolveModuleCluster(
        module, cluster,
        "pass cluster=NAME or cluster=path.json to dist-lower-reshard, or "
        "attach one with dist-attach-cluster",
        moduleError);
    if (failed(resolved))
      return signalPassFailure();
    CollectiveCostModel model(*resolved);
    for (dist::ReshardOp op : ops)
      if (failed(lower(op, *resolved, model, forced, *balancer)))
        return signalPassFailure();
  }

  LogicalResult lower(dist::ReshardOp op, const Cluster &cluster,
                      const CollectiveCostModel &model,
                      std::optional<reshard::Strategy> forced,
                      reshard::Balancer balancer) {
    std::string error;
    auto record = [&](const Twine &message) { error = message.str(); };
    Type element = cast<RankedTensorType>(op.getInputs().front().getType())
                       .getElementType();
    int64_t elementBytes =
        std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
    FailureOr<reshard::Problem> problem =
        reshard::decompose(op.getSource(), op.getDestination(), op.getShape(),
                           elementBytes, cluster, record);
    if (failed(problem))
      return op.emitOpError() << error;
    std::string whyNot;
    std::optional<reshard::Plan> best =
        reshard::planFastest(*problem, balancer, model, forced, &whyNot);
    if (!best)
      return op.emitOpError()
             << "strategy " << reshard::stringifyStrategy(*forced)
             << " does not apply: " << whyNot;
    OpBuilder b(op);
    FailureOr<SmallVector<Value>> moved = reshard::emitTransfers(
        b, op.getLoc(), *problem, *best, op.getInputs(), element, record);
    if (failed(moved))
      return op.emitOpError() << error;
    op.replaceAllUsesWith(*moved);
    op.erase();
    return success();
  }
};
} // namespace
