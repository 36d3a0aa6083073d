//===- OutlineLoopNests.cpp - One function per outermost loop nest --------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// LLVM's loop analyses (scalar evolution, dominance) cost more than linear
// time in the size of a function; a rank program lowered to loops is one
// function with a loop nest per op. Outlining each nest keeps every
// function small, so optimizing the module costs about the sum of its
// loops.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace distir {
#define GEN_PASS_DEF_DISTOUTLINELOOPNESTSPASS
#include "DistIR/Conversion/Passes.h.inc"
} // namespace distir

using namespace mlir;

namespace {

static bool isLoop(Operation *op) {
  return isa<scf::ForOp, scf::ParallelOp>(op);
}

struct OutlineLoopNestsPass
    : public distir::impl::DistOutlineLoopNestsPassBase<OutlineLoopNestsPass> {
  void runOnOperation() final {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<std::pair<Operation *, func::FuncOp>> loops;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      func.walk([&](Operation *op) {
        if (isLoop(op) && op->getNumResults() == 0 &&
            !op->getParentOfType<scf::ForOp>() &&
            !op->getParentOfType<scf::ParallelOp>())
          loops.push_back({op, func});
      });
    }
    for (auto [loop, func] : loops)
      outline(loop, func, symbols);
  }

  void outline(Operation *loop, func::FuncOp parent, SymbolTable &symbols) {
    // Values from outside the nest: constants are cloned, the rest passed.
    llvm::SetVector<Value> captured;
    loop->walk([&](Operation *op) {
      for (Value v : op->getOperands())
        if (!loop->isAncestor(v.getParentRegion()->getParentOp()))
          captured.insert(v);
    });
    SmallVector<Value> arguments;
    SmallVector<Operation *> constants;
    for (Value v : captured) {
      Operation *def = v.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(def);
      else
        arguments.push_back(v);
    }
    OpBuilder b(module().getContext());
    b.setInsertionPointToEnd(module().getBody());
    auto callee = func::FuncOp::create(
        b, loop->getLoc(), (parent.getSymName() + "_loop").str(),
        b.getFunctionType(ValueRange(arguments).getTypes(), {}));
    callee.setPrivate();
    // Kept apart: LLVM would inline a function called once.
    callee->setAttr("passthrough",
                    b.getArrayAttr({b.getStringAttr("noinline")}));
    symbols.insert(callee);
    Block *body = callee.addEntryBlock();
    b.setInsertionPointToStart(body);
    IRMapping mapping;
    for (auto [value, argument] : llvm::zip(arguments, body->getArguments()))
      mapping.map(value, argument);
    for (Operation *constant : constants)
      b.clone(*constant, mapping);
    b.clone(*loop, mapping);
    func::ReturnOp::create(b, loop->getLoc());
    b.setInsertionPoint(loop);
    func::CallOp::create(b, loop->getLoc(), callee, arguments);
    loop->erase();
  }

  ModuleOp module() { return getOperation(); }
};

} // namespace
