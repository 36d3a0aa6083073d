//===- FuseElementwise.cpp - Elementwise producer-consumer fusion ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Each structured op becomes its own loop nest (or GPU kernel) with its own
// result buffer; a chain of elementwise ops therefore reads and writes
// memory once per op. Upstream's fusion (linalg::fuseElementwiseOps) merges a
// producer's payload into its consumer's; this pass applies that rewrite
// alone, only between elementwise ops, and only where nothing is computed
// twice.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace distir {
#define GEN_PASS_DEF_DISTFUSEELEMENTWISEPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

/// All loops parallel and no payload reading an init: the op computes each
/// result element once from its inputs.
static bool isPureElementwise(linalg::GenericOp op) {
  if (op.getNumParallelLoops() != op.getNumLoops())
    return false;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (op.payloadUsesValueFromOperand(&init))
      return false;
  return true;
}

struct FuseProducer : public OpRewritePattern<linalg::GenericOp> {
  FuseProducer(MLIRContext *context, int64_t &budget)
      : OpRewritePattern(context), budget(budget) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    // A consumer with reduction loops would compute the producer once per
    // iteration of them (and stop being a contraction dist-linalg-to-blas
    // can call BLAS for).
    if (budget == 0 || consumer.getNumParallelLoops() != consumer.getNumLoops())
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      // A producer with other users would be computed twice; one that
      // accumulates into its init (dist-dtp's gradient accumulation) would
      // stay a result of the fused op.
      if (!producer || !producer->hasOneUse() || !isPureElementwise(producer) ||
          !linalg::areElementwiseOpsFusable(operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesExcept(original, replacement, fused->fusedOp);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      if (budget > 0)
        --budget;
      return success();
    }
    return failure();
  }

  int64_t &budget;
};

struct FuseElementwisePass
    : public distir::impl::DistFuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;
  void runOnOperation() final {
    int64_t budget = maxFusions;
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseProducer>(&getContext(), budget);
    // Not converging within the driver's limit leaves valid, partly fused
    // IR: an optimization, not an error.
    (void)applyPatternsGreedily(getOperation(), std::move(patterns));
  }
};

} // namespace
