//===- FuseElementwise.cpp - Elementwise producer-consumer fusion ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Each structured op becomes its own loop nest (or GPU kernel) with its own
// result buffer; a chain of elementwise ops therefore reads and writes
// memory once per op. Upstream's elementwise fusion merges a producer's
// payload into its consumer's; this pass applies that rewrite alone.
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
struct FuseElementwisePass
    : public distir::impl::DistFuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;
  void runOnOperation() final {
    int64_t fused = 0;
    linalg::ControlFusionFn control = [&](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      // A producer with other users would be computed twice.
      if (!producer || !producer->hasOneUse())
        return false;
      // A producer that accumulates into its init (`out + in`, dist-dtp's
      // gradient accumulation) stays apart: upstream keeps such a producer's
      // result in the fused op and, when the consumer has loops the
      // producer lacks (a reduction over the batch into a table), performs
      // the accumulation once per iteration of those loops.
      auto linalgProducer = dyn_cast<linalg::LinalgOp>(producer);
      if (!linalgProducer)
        return false;
      for (OpOperand &init : linalgProducer.getDpsInitsMutable())
        if (linalgProducer.payloadUsesValueFromOperand(&init))
          return false;
      if (maxFusions >= 0 && fused >= maxFusions)
        return false;
      ++fused;
      return true;
    };
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
