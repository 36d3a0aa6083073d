//===- WrapHostLoops.cpp - Leftover buffer code as one GPU thread ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// After parallel loops became kernels, what still reads or writes buffers on
// the host is sequential code (scatter-adds, loops with carried values,
// scalar accesses). In device=gpu code those buffers are device memory, so
// such code runs as a kernel of one thread, in program order: correct, and
// as fast as the sequential loop allows.
//
//===----------------------------------------------------------------------===//

#include "BufferRoot.h"
#include "DistIR/Conversion/Passes.h"

namespace distir {
#define GEN_PASS_DEF_DISTGPUWRAPHOSTLOOPSPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

/// Whether `op` reads or writes a buffer that may be device memory (stack
/// buffers are the host's own bookkeeping).
bool accessesBuffers(Operation *op) {
  Value memref;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    memref = load.getMemRef();
  else if (auto store = dyn_cast<memref::StoreOp>(op))
    memref = store.getMemRef();
  else if (isa<memref::AtomicRMWOp, memref::GenericAtomicRMWOp>(op))
    return true;
  else
    return false;
  return !distir::getBufferRoot(memref).getDefiningOp<memref::AllocaOp>();
}

/// Ops that must stay on the host: launches, runtime calls, allocation.
bool mustStayOnHost(Operation *op) {
  return isa<gpu::LaunchOp, gpu::LaunchFuncOp, func::CallOp, memref::AllocOp,
             memref::AllocaOp, memref::DeallocOp, memref::AllocaScopeOp>(op);
}

bool canMove(Operation *op) {
  if (op->getNumResults() || mustStayOnHost(op))
    return false;
  WalkResult r = op->walk([](Operation *nested) {
    return mustStayOnHost(nested) ? WalkResult::interrupt()
                                  : WalkResult::advance();
  });
  return !r.wasInterrupted();
}

struct WrapHostLoopsPass
    : public distir::impl::DistGPUWrapHostLoopsPassBase<WrapHostLoopsPass> {
  void runOnOperation() final {
    func::FuncOp func = getOperation();
    // The deallocation lowering's helper works on host bookkeeping arrays.
    if (func.getSymName().starts_with("dealloc_helper"))
      return;
    SmallVector<Operation *> accesses;
    func.walk([&](Operation *op) {
      if (accessesBuffers(op) && !op->getParentOfType<gpu::LaunchOp>())
        accesses.push_back(op);
    });
    llvm::SetVector<Operation *> regions;
    for (Operation *op : accesses) {
      // The outermost movable ancestor below the function.
      Operation *top = nullptr;
      for (Operation *a = op; a && a != func; a = a->getParentOp())
        if (canMove(a))
          top = a;
      if (!top) {
        op->emitOpError("device=gpu: this access to a buffer runs on the "
                        "host, which cannot read device memory (its value "
                        "is needed outside any loop that can move to the "
                        "GPU)");
        return signalPassFailure();
      }
      regions.insert(top);
    }
    for (Operation *op : regions) {
      // A region nested in another one already moves with it.
      if (op->getParentOfType<gpu::LaunchOp>())
        continue;
      OpBuilder b(op);
      Location loc = op->getLoc();
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      auto launch = gpu::LaunchOp::create(b, loc, one, one, one, one, one, one);
      b.setInsertionPointToEnd(&launch.getBody().front());
      auto terminator = gpu::TerminatorOp::create(b, loc);
      op->moveBefore(terminator);
    }
  }
};

} // namespace
