//===- Recompute.cpp - Gradient checkpointing -----------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Forward activations that the backward pass reads are the bulk of training
// memory. For the chosen layers, this pass recomputes them right before the
// backward pass needs them instead of keeping them alive from the forward
// pass: their stored copies then die at their last forward use.
//
// Ops are found by their `dist.layer` / `dist.phase` tags (what --build-mlp
// emits). A recomputed value is rebuilt, once per backward layer that needs
// it, from what its layer's forward ops read from outside the layer: the
// layer's inputs (the previous layer's output, weights) are the checkpoints
// that stay alive, as in Megatron's full recomputation and PyTorch's
// per-layer checkpoint. Each recomputed layer's forward thus runs twice,
// never more (rebuilding through earlier layers too would keep only the
// program's inputs at a cost quadratic in the layer count).
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTRECOMPUTEPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;

namespace {
struct DistRecomputePass
    : public dist::impl::DistRecomputePassBase<DistRecomputePass> {
  using DistRecomputePassBase::DistRecomputePassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    bool ok = true;
    bool tagged = false;
    module.walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      if (failed(recompute(func, tagged)))
        ok = false;
    });
    if (!ok)
      return signalPassFailure();
    if (!tagged) {
      mlir::emitError(module.getLoc())
          << "dist-recompute: no op is tagged with dist.layer and "
             "dist.phase (programs from --build-mlp carry them)";
      return signalPassFailure();
    }
  }

  static std::optional<int64_t> layerOf(Operation *op) {
    if (auto layer = op->getAttrOfType<IntegerAttr>("dist.layer"))
      return layer.getInt();
    return std::nullopt;
  }
  static StringRef phaseOf(Operation *op) {
    if (auto phase = op->getAttrOfType<StringAttr>("dist.phase"))
      return phase.getValue();
    return "";
  }

  LogicalResult recompute(func::FuncOp func, bool &tagged) {
    llvm::DenseSet<int64_t> chosen(layers.begin(), layers.end());
    auto isRecomputed = [&](Operation *op) {
      std::optional<int64_t> layer = layerOf(op);
      return layer && phaseOf(op) == "forward" &&
             (chosen.empty() || chosen.contains(*layer));
    };
    for (int64_t layer : layers)
      if (layer < 0)
        return mlir::emitError(func.getLoc())
               << "dist-recompute: layer " << layer << " is negative";

    // A layer the program does not have would silently change nothing.
    int64_t maxLayer = -1;
    func.walk([&](Operation *op) {
      maxLayer = std::max(maxLayer, layerOf(op).value_or(-1));
    });
    for (int64_t layer : layers)
      if (maxLayer >= 0 && layer > maxLayer)
        return mlir::emitError(func.getLoc())
               << "dist-recompute: layer " << layer << " does not exist (@"
               << func.getSymName() << " has layers 0 to " << maxLayer << ")";

    Block &body = func.getBody().front();
    // Clones made so far: a value is recomputed once, for the backward pass
    // of its own layer (the only one that rebuilds it).
    DenseMap<Value, Value> clones;
    OpBuilder builder(func.getContext());
    // Rebuilds `v` before `before` if a recomputed forward op of layer
    // `useLayer` defines it, from the layer's inputs: values other layers
    // define (a previous layer's output) are the checkpoints, kept.
    std::function<Value(Value, Operation *, int64_t)> materialize =
        [&](Value v, Operation *before, int64_t useLayer) -> Value {
      Operation *def = v.getDefiningOp();
      if (!def || !isRecomputed(def) || layerOf(def) != useLayer)
        return v;
      if (Value c = clones.lookup(v))
        return c;
      IRMapping mapping;
      for (Value operand : def->getOperands())
        mapping.map(operand, materialize(operand, before, useLayer));
      builder.setInsertionPoint(before);
      Operation *clone = builder.clone(*def, mapping);
      // The recomputation belongs to the backward pass of its layer.
      clone->setAttr("dist.phase", builder.getStringAttr("backward"));
      // The forward op stays its adjoint's partner (dist-pase ties them).
      clone->removeAttr(dist::kVjpIdAttr);
      for (auto [from, to] :
           llvm::zip_equal(def->getResults(), clone->getResults()))
        clones[from] = to;
      return clones.lookup(v);
    };

    SmallVector<Operation *> backward;
    for (Operation &op : body) {
      if (layerOf(&op))
        tagged = true;
      if (phaseOf(&op) == "backward")
        backward.push_back(&op);
    }
    for (Operation *op : backward) {
      int64_t layer = layerOf(op).value_or(0);
      for (OpOperand &operand : op->getOpOperands()) {
        Value replacement = materialize(operand.get(), op, layer);
        if (replacement != operand.get())
          operand.set(replacement);
      }
      // Values captured by regions (linalg bodies) too.
      op->walk([&](Operation *nested) {
        if (nested == op)
          return;
        for (OpOperand &operand : nested->getOpOperands())
          if (operand.get().getParentBlock() == &body) {
            Value replacement = materialize(operand.get(), op, layer);
            if (replacement != operand.get())
              operand.set(replacement);
          }
      });
    }
    return success();
  }
};
} // namespace
