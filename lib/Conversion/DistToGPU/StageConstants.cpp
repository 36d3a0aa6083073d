//===- StageConstants.cpp - Constant globals into device memory -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// device=gpu code computes on device memory only; a bufferized constant is a
// memref.get_global of host memory. Each get_global that compute reads gets
// a fresh buffer filled from the global (a copy dist-gpu-lower-copies makes
// a host-to-device transfer); buffer deallocation later frees it.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

namespace distir {
#define GEN_PASS_DEF_DISTGPUSTAGECONSTANTSPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

struct StageConstantsPass
    : public distir::impl::DistGPUStageConstantsPassBase<StageConstantsPass> {
  void runOnOperation() final {
    SmallVector<memref::GetGlobalOp> globals;
    getOperation().walk([&](memref::GetGlobalOp op) {
      // Addresses handed to runtime calls (group rank lists) stay on the
      // host.
      if (!llvm::all_of(op->getUsers(), [](Operation *user) {
            return isa<memref::ExtractAlignedPointerAsIndexOp>(user);
          }))
        globals.push_back(op);
    });
    for (memref::GetGlobalOp op : globals) {
      auto type = cast<MemRefType>(op.getType());
      if (!type.getLayout().isIdentity()) {
        op.emitOpError("device=gpu needs constant globals with the identity "
                       "layout");
        return signalPassFailure();
      }
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      auto buffer = memref::AllocOp::create(b, op.getLoc(), type);
      op.getResult().replaceUsesWithIf(buffer, [](OpOperand &use) {
        return !isa<memref::ExtractAlignedPointerAsIndexOp>(use.getOwner());
      });
      memref::CopyOp::create(b, op.getLoc(), op.getResult(), buffer);
    }
  }
};

} // namespace
