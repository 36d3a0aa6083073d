//===- PrepareKernels.cpp - device=gpu buffer code before kernel mapping --===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// In device=gpu code every memref.alloc is device memory. Three kinds of
// buffer code need a hand before parallel loops are mapped to kernels:
// - the deallocation lowering's bookkeeping arrays are read on the host:
//   they become stack (host) memory;
// - LLVM's lowering of memref.copy is a host memcpy: copies out of a
//   constant global are host-to-device transfers (a runtime call), all
//   others are between device buffers and become linalg.copy (a kernel);
// - structured ops without loops would be scalar host code: a
//   one-iteration parallel loop makes them a kernel too;
// - a reduction loop outside a parallel one (a bias gradient summed over the
//   batch) would become a host loop launching one kernel per iteration: the
//   loops are interchanged so that parallel ones come first (one kernel,
//   each thread reducing sequentially).
//
//===----------------------------------------------------------------------===//

#include "BufferRoot.h"
#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace distir {
#define GEN_PASS_DEF_DISTGPUPREPAREKERNELSPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

constexpr StringLiteral kCopyFunc = "distir_cuda_copy";

/// The pointer (as i64) to the first element of a contiguous buffer.
Value dataPointer(OpBuilder &b, Location loc, Value buffer) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  auto type = cast<MemRefType>(buffer.getType());
  int64_t offset = 0;
  SmallVector<int64_t> strides;
  if (succeeded(type.getStridesAndOffset(strides, offset)) && offset != 0) {
    Value bytes = arith::ConstantIndexOp::create(
        b, loc, offset * ((type.getElementTypeBitWidth() + 7) / 8));
    base = arith::AddIOp::create(b, loc, base, bytes);
  }
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), base);
}

/// The deallocation lowering's arrays (pointers, ownership flags) passed to
/// its `dealloc_helper`: host memory on the stack.
void keepBookkeepingOnHost(ModuleOp module) {
  // An array may be passed to several calls: each is replaced once.
  llvm::SetVector<Operation *> allocs;
  module.walk([&](func::CallOp call) {
    if (!call.getCallee().starts_with("dealloc_helper"))
      return;
    for (Value operand : call.getOperands())
      if (auto alloc =
              distir::getBufferRoot(operand).getDefiningOp<memref::AllocOp>())
        allocs.insert(alloc);
  });
  for (Operation *op : allocs) {
    auto alloc = cast<memref::AllocOp>(op);
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    OpBuilder b(alloc);
    auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                           alloc.getDynamicSizes());
    alloc.replaceAllUsesWith(alloca.getResult());
    alloc.erase();
  }
}

/// Puts a structured op without loops into a one-iteration scf.parallel.
void wrapScalarOps(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (op.getNumLoops() == 0 && op.hasPureBufferSemantics())
      ops.push_back(op);
  });
  for (linalg::LinalgOp op : ops) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                        ValueRange{one}, ValueRange{one});
    op->moveBefore(loop.getBody()->getTerminator());
  }
}

/// Interchanges the loops of structured ops on buffers so that parallel
/// loops come before reduction loops.
LogicalResult parallelLoopsFirst(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    if (!llvm::is_sorted(iterators,
                         [](utils::IteratorType a, utils::IteratorType b) {
                           return a == utils::IteratorType::parallel &&
                                  b != utils::IteratorType::parallel;
                         }))
      ops.push_back(op);
  });
  IRRewriter rewriter(module.getContext());
  for (linalg::LinalgOp op : ops) {
    SmallVector<unsigned> order;
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    for (bool parallel : {true, false})
      for (auto [i, t] : llvm::enumerate(iterators))
        if ((t == utils::IteratorType::parallel) == parallel)
          order.push_back(i);
    rewriter.setInsertionPoint(op);
    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
      if (failed(g))
        return op->emitOpError("device=gpu: cannot reorder the loops of this "
                               "op (parallel loops first)");
      generic = *g;
    }
    if (failed(linalg::interchangeGenericOp(rewriter, generic, order)))
      return generic->emitOpError("device=gpu: cannot interchange loops");
  }
  return success();
}

/// Copies out of constant globals become uploads, the others linalg.copy.
LogicalResult lowerCopies(ModuleOp module) {
  SmallVector<memref::CopyOp> copies;
  module.walk([&](memref::CopyOp op) { copies.push_back(op); });
  for (memref::CopyOp op : copies) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    if (!op.getSource().getDefiningOp<memref::GetGlobalOp>()) {
      linalg::CopyOp::create(b, loc, op.getSource(), op.getTarget());
      op.erase();
      continue;
    }
    auto type = cast<MemRefType>(op.getTarget().getType());
    if (!type.hasStaticShape() ||
        !type.areTrailingDimsContiguous(type.getRank())) {
      op.emitOpError("device=gpu: a constant is copied into a buffer that "
                     "is not contiguous");
      return failure();
    }
    auto func = module.lookupSymbol<func::FuncOp>(kCopyFunc);
    Type i64 = b.getI64Type();
    if (!func) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(module.getBody());
      func = func::FuncOp::create(b, loc, kCopyFunc,
                                  b.getFunctionType({i64, i64, i64}, {}));
      func.setPrivate();
    }
    // The region keeps both buffers alive through the call (the call sees
    // raw pointers only).
    auto scope = memref::AllocaScopeOp::create(b, loc, TypeRange());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(&scope.getBodyRegion().emplaceBlock());
    int64_t bytes =
        type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    func::CallOp::create(b, loc, func,
                         ValueRange{dataPointer(b, loc, op.getTarget()),
                                    dataPointer(b, loc, op.getSource()),
                                    arith::ConstantOp::create(
                                        b, loc, b.getI64IntegerAttr(bytes))});
    memref::AllocaScopeReturnOp::create(b, loc);
    op.erase();
  }
  return success();
}

struct PrepareKernelsPass
    : public distir::impl::DistGPUPrepareKernelsPassBase<PrepareKernelsPass> {
  void runOnOperation() final {
    ModuleOp module = getOperation();
    keepBookkeepingOnHost(module);
    if (failed(lowerCopies(module)))
      return signalPassFailure();
    // After the copies, which may be 0-d linalg.copy ops now.
    wrapScalarOps(module);
    if (failed(parallelLoopsFirst(module)))
      return signalPassFailure();
  }
};

} // namespace
