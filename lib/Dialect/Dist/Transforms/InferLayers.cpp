//===- InferLayers.cpp - Layers from the data flow ------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Pipeline stages for programs whose ops carry no layer (models exported
// without block names, plain IR): a cost-balanced cut of the program order
// (InferLayers.h), and the dist-infer-layers pass around it.
//
//===----------------------------------------------------------------------===//

#include "InferLayers.h"

#include "DistIR/Analysis/OpCost.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTINFERLAYERSPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

int64_t distir::dist::getNumLayers(func::FuncOp func) {
  int64_t maxLayer = -1;
  func.walk([&](Operation *op) {
    if (auto layer = op->getAttrOfType<IntegerAttr>("dist.layer"))
      maxLayer = std::max(maxLayer, layer.getInt());
  });
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto layer = func.getArgAttrOfType<IntegerAttr>(i, "dist.layer"))
      maxLayer = std::max(maxLayer, layer.getInt());
  return maxLayer + 1;
}

bool distir::dist::hasLayerTags(func::FuncOp func) {
  bool found = false;
  func.walk([&](Operation *op) { found |= op->hasAttr("dist.layer"); });
  return found;
}

LogicalResult distir::dist::inferLayers(func::FuncOp func, int64_t numLayers) {
  Block &body = func.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator()) {
    auto phase = op.getAttrOfType<StringAttr>("dist.phase");
    if (phase && phase.getValue() != "forward")
      return op.emitOpError()
             << "dist-infer-layers works on forward programs (this op is "
                "tagged '"
             << phase.getValue() << "'); infer the layers before dist-autodiff";
    ops.push_back(&op);
  }
  int64_t n = static_cast<int64_t>(ops.size());
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(ops))
    position[op] = static_cast<int64_t>(i);
  // Compute prefix sums and the bytes live across each cut (between op i
  // and op i + 1): values defined at or before i and used after it.
  SmallVector<double> prefix(n + 1, 0);
  int64_t withCompute = 0;
  for (int64_t i = 0; i < n; ++i) {
    double c = getComputeWork(ops[i]).flops;
    withCompute += c > 0;
    prefix[i + 1] = prefix[i] + c;
  }
  SmallVector<double> delta(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    for (Value result : ops[i]->getResults()) {
      int64_t last = i;
      for (Operation *user : result.getUsers())
        if (Operation *top = body.findAncestorOpInBlock(*user))
          if (auto it = position.find(top); it != position.end())
            last = std::max(last, it->second);
      if (last > i) {
        delta[i] += static_cast<double>(getTensorBytes(result.getType()));
        delta[last] -= static_cast<double>(getTensorBytes(result.getType()));
      }
    }
  SmallVector<double> cut(n, 0);
  double running = 0;
  for (int64_t i = 0; i < n; ++i) {
    running += delta[i];
    cut[i] = running;
  }
  int64_t layers = std::max<int64_t>(1, std::min(numLayers, withCompute));
  double total = prefix[n];
  // Layer k starts after cut `starts[k] - 1`.
  SmallVector<int64_t> starts = {0};
  for (int64_t k = 1; k < layers; ++k) {
    double target = total * static_cast<double>(k) / layers;
    double slack = total / (4.0 * layers);
    int64_t best = -1;
    for (int64_t i = std::max<int64_t>(starts.back(), 0); i + 1 < n; ++i) {
      // Cut after op i: prefix[i + 1] is the compute before it.
      if (prefix[i + 1] < target - slack ||
          prefix[i + 1] <= prefix[starts.back()])
        continue;
      if (prefix[i + 1] > target + slack)
        break;
      auto score = [&](int64_t j) {
        return std::make_pair(cut[j], std::abs(prefix[j + 1] - target));
      };
      if (best < 0 || score(i) < score(best))
        best = i;
    }
    if (best < 0) {
      // No op ends inside the window: the first one past the target.
      for (int64_t i = starts.back(); i + 1 < n && best < 0; ++i)
        if (prefix[i + 1] >= target && prefix[i + 1] > prefix[starts.back()])
          best = i;
    }
    if (best < 0)
      break;
    starts.push_back(best + 1);
  }
  Builder b(func.getContext());
  int64_t layer = 0;
  for (int64_t i = 0; i < n; ++i) {
    while (layer + 1 < static_cast<int64_t>(starts.size()) &&
           i >= starts[layer + 1])
      ++layer;
    ops[i]->setAttr("dist.layer", b.getI64IntegerAttr(layer));
    if (!ops[i]->hasAttr("dist.phase"))
      ops[i]->setAttr("dist.phase", b.getStringAttr("forward"));
  }
  return success();
}

namespace {
struct DistInferLayersPass
    : public dist::impl::DistInferLayersPassBase<DistInferLayersPass> {
  using DistInferLayersPassBase::DistInferLayersPassBase;
  void runOnOperation() final {
    if (layers < 1) {
      mlir::emitError(getOperation().getLoc())
          << "dist-infer-layers: layers=" << static_cast<int64_t>(layers)
          << " must be >= 1";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || (!entry.empty() && func.getSymName() != entry))
        continue;
      if (hasLayerTags(func) && !force)
        continue;
      if (force)
        func.walk([](Operation *op) { op->removeAttr("dist.layer"); });
      if (failed(inferLayers(func, layers)))
        return signalPassFailure();
    }
  }
};
} // namespace
