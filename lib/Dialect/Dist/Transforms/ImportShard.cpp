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

/// The dist form of the sharding `shardingValue` names, or failure with an
/// error at the op that cannot be expressed.
FailureOr<ShardingAttr> convertSharding(Operation *annotation,
                                        Value shardingValue,
                                        SymbolTableCollection &symbols) {
  auto op = shardingValue.getDefiningOp<shard::ShardingOp>();
  if (!op)
    return annotation->emitError()
           << "the sharding must come from a shard.sharding op";
  if (!op.getDynamicHaloSizes().empty() || !op.getStaticHaloSizes().empty())
    return op.emitError() << "halo sizes have no dist.sharding form";
  if (!op.getDynamicShardedDimsOffsets().empty() ||
      ShapedType::isDynamicShape(op.getStaticShardedDimsOffsets()))
    return op.emitError() << "dynamic shard offsets have no dist.sharding form";
  auto grid =
      symbols.lookupNearestSymbolFrom<shard::GridOp>(op, op.getGridAttr());
  if (!grid)
    return op.emitError() << "grid " << op.getGridAttr()
                          << " is not a shard.grid of this module";
  if (ShapedType::isDynamicShape(grid.getShape()))
    return grid.emitError() << "a grid of dynamic size has no dist.mesh form";
  MLIRContext *context = op.getContext();
  SmallVector<DenseI64ArrayAttr> split;
  for (shard::GridAxesAttr axes : op.getSplitAxes().getAxes()) {
    SmallVector<int64_t> wide(axes.asArrayRef().begin(),
                              axes.asArrayRef().end());
    split.push_back(DenseI64ArrayAttr::get(context, wide));
  }
  // The dist verifier checks what shard's does not (axes used twice).
  auto diagnose = [&]() { return op.emitError(); };
  if (failed(MeshAttr::verify(diagnose, grid.getSymName(), grid.getShape(),
                              ArrayRef<int64_t>())))
    return failure();
  MeshAttr mesh = MeshAttr::get(context, grid.getSymName(), grid.getShape(),
                                ArrayRef<int64_t>());
  if (failed(ShardingAttr::verify(diagnose, mesh, split, ArrayRef<int64_t>(),
                                  ReductionKind::Sum,
                                  op.getStaticShardedDimsOffsets())))
    return failure();
  return ShardingAttr::get(context, mesh, split, ArrayRef<int64_t>(),
                           ReductionKind::Sum,
                           op.getStaticShardedDimsOffsets());
}

/// Records `sharding` for `value`; an existing different one is an error.
LogicalResult recordSharding(Operation *annotation, Value value,
                             ShardingAttr sharding) {
  if (failed(sharding.verifyFor(value.getType(),
                                [&]() { return annotation->emitError(); })))
    return failure();
  auto conflict = [&](ShardingAttr existing) -> LogicalResult {
    if (!existing || existing == sharding)
      return success();
    return annotation->emitError()
           << "the value already has sharding " << existing
           << "; dist.sharding keeps one per value";
  };
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto function =
        dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
    if (!function || argument.getOwner() != &function.getFunctionBody().front())
      return annotation->emitError()
             << "only function arguments and op results can be annotated";
    unsigned index = argument.getArgNumber();
    if (failed(conflict(
            function.getArgAttrOfType<ShardingAttr>(index, kShardingAttrName))))
      return failure();
    function.setArgAttr(index, kShardingAttrName, sharding);
    return success();
  }
  Operation *producer = value.getDefiningOp();
  unsigned index = cast<OpResult>(value).getResultNumber();
  if (failed(conflict(getResultSharding(producer, index))))
    return failure();
  if (producer->getNumResults() == 1) {
    producer->setAttr(kShardingAttrName, sharding);
    return success();
  }
  // One entry per result; results not annotated yet are replicated on the
  // same mesh until an annotation says otherwise.
  SmallVector<Attribute> all;
  for (unsigned i = 0; i < producer->getNumResults(); ++i) {
    ShardingAttr current = getResultSharding(producer, i);
    if (!current)
      current = ShardingAttr::get(producer->getContext(), sharding.getMesh(),
                                  {}, {}, ReductionKind::Sum, {});
    all.push_back(i == index ? sharding : current);
  }
  producer->setAttr(kShardingAttrName,
                    ArrayAttr::get(producer->getContext(), all));
  return success();
}

struct DistImportShardPass
    : public distir::dist::impl::DistImportShardPassBase<DistImportShardPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SmallVector<shard::ShardOp> annotations;
    module.walk([&](shard::ShardOp op) { annotations.push_back(op); });
    for (shard::ShardOp op : annotations) {
      FailureOr<ShardingAttr> sharding =
          convertSharding(op, op.getSharding(), symbols);
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
