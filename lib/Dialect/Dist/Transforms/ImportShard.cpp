//===- ImportShard.cpp - shard annotations to dist.sharding --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Upstream `shard` describes SPMD programs: the sharding is an SSA value and
// annotations are ops. DistIR records one sharding per value as an
// attribute (docs/design/sharding.md), so the import folds each annotation
// into the value it names.
//
//===----------------------------------------------------------------------===//

#include "ShardInterop.h"

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTIMPORTSHARDPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

struct DistImportShardPass
    : public distir::dist::impl::DistImportShardPassBase<DistImportShardPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<shard::ShardOp> annotations;
    module.walk([&](shard::ShardOp op) { annotations.push_back(op); });
    for (shard::ShardOp op : annotations) {
      FailureOr<ShardingAttr> sharding =
          convertShardSharding(op, op.getSharding(), symbols);
      if (failed(sharding) ||
          failed(recordSharding(op, op.getSrc(), *sharding)))
        return signalPassFailure();
      op.getResult().replaceAllUsesWith(op.getSrc());
      op.erase();
    }
    SmallVector<Operation *> dead;
    module.walk([&](shard::ShardingOp op) {
      if (op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    // Grids nothing refers to any more.
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      if (SymbolTable::symbolKnownUseEmpty(grid, module))
        grid.erase();
  }
};

} // namespace
