//===- ShardInterop.cpp - dist.sharding <-> upstream shard annotations ----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "ShardInterop.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace distir;
using namespace distir::dist;

FailureOr<ShardingAttr>
distir::dist::convertShardSharding(Operation *annotation, Value shardingValue,
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
  if (failed(ShardingAttr::verify(
          diagnose, mesh, split, ArrayRef<int64_t>(), ReductionKind::Sum,
          op.getStaticShardedDimsOffsets(), ArrayRef<int64_t>())))
    return failure();
  return ShardingAttr::get(context, mesh, split, ArrayRef<int64_t>(),
                           ReductionKind::Sum, op.getStaticShardedDimsOffsets(),
                           ArrayRef<int64_t>());
}

LogicalResult distir::dist::recordSharding(Operation *annotation, Value value,
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
  }
  if (failed(conflict(getValueSharding(value))))
    return failure();
  setValueSharding(value, sharding);
  return success();
}

ShardingAttr distir::dist::getValueSharding(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto function =
        dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
    return function ? function.getArgAttrOfType<ShardingAttr>(
                          argument.getArgNumber(), kShardingAttrName)
                    : ShardingAttr();
  }
  return getResultSharding(value.getDefiningOp(),
                           cast<OpResult>(value).getResultNumber());
}

void distir::dist::setValueSharding(Value value, ShardingAttr sharding) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    cast<FunctionOpInterface>(argument.getOwner()->getParentOp())
        .setArgAttr(argument.getArgNumber(), kShardingAttrName, sharding);
    return;
  }
  Operation *op = value.getDefiningOp();
  if (op->getNumResults() == 1) {
    op->setAttr(kShardingAttrName, sharding);
    return;
  }
  SmallVector<Attribute> all;
  for (OpResult result : op->getResults()) {
    ShardingAttr current =
        result == value ? sharding
                        : getResultSharding(op, result.getResultNumber());
    if (!current)
      current = ShardingAttr::get(sharding.getMesh(), {});
    all.push_back(current);
  }
  op->setAttr(kShardingAttrName, ArrayAttr::get(op->getContext(), all));
}

Value distir::dist::buildShardSharding(OpBuilder &builder, Location loc,
                                       StringRef grid, ShardingAttr sharding) {
  SmallVector<shard::GridAxesAttr> axes;
  for (DenseI64ArrayAttr dim : sharding.getSplit()) {
    SmallVector<int16_t> narrow(dim.asArrayRef().begin(),
                                dim.asArrayRef().end());
    axes.push_back(DenseI16ArrayAttr::get(builder.getContext(), narrow));
  }
  return shard::ShardingOp::create(builder, loc, grid, axes).getResult();
}
