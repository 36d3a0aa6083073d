//===- DecomposeAggregated.cpp - Aggregated linalg ops to generic ops -----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace distir {
#define GEN_PASS_DEF_DISTDECOMPOSEAGGREGATEDLINALGPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {
struct DecomposeAggregatedLinalgPass
    : public distir::impl::DistDecomposeAggregatedLinalgPassBase<
          DecomposeAggregatedLinalgPass> {
  void runOnOperation() final {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation()->walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    for (linalg::AggregatedOpInterface op : ops) {
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> values = op.decomposeOperation(b);
      if (failed(values)) {
        op->emitOpError("cannot be decomposed into structured ops");
        return signalPassFailure();
      }
      op->replaceAllUsesWith(*values);
      op->erase();
    }
  }
};
} // namespace
