//===- PropagateSharding.cpp - dist.sharding spread by upstream rules -----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Upstream `shard` already knows, for every op with a ShardingInterface
// (linalg from its indexing maps, element-wise ops, tensor.empty, ...), how
// a split of one operand carries to the others. This pass lends it our
// annotations: dist.sharding out to shard.shard, upstream's
// sharding-propagation, and the result folded back, one sharding per value
// (docs/design/sharding.md).
//
//===----------------------------------------------------------------------===//

#include "ShardInterop.h"

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"

#include <map>

namespace distir::dist {
#define GEN_PASS_DEF_DISTPROPAGATESHARDINGPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

/// The value an annotation names, through annotations of annotations.
Value annotatedRoot(shard::ShardOp op) {
  Value value = op.getSrc();
  while (auto inner = value.getDefiningOp<shard::ShardOp>())
    value = inner.getSrc();
  return value;
}

ShardingAttr shardingOf(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto function =
        dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
    if (!function)
      return {};
    return function.getArgAttrOfType<ShardingAttr>(argument.getArgNumber(),
                                                   kShardingAttrName);
  }
  return getResultSharding(value.getDefiningOp(),
                           cast<OpResult>(value).getResultNumber());
}

/// The mesh with `grid`'s name replaced by the original mesh.
ShardingAttr withMesh(ShardingAttr sharding,
                      const llvm::StringMap<MeshAttr> &original) {
  auto it = original.find(sharding.getMesh().getName());
  if (it == original.end() || it->second == sharding.getMesh())
    return sharding;
  return ShardingAttr::get(sharding.getContext(), it->second,
                           sharding.getSplit(), sharding.getPartial(),
                           sharding.getReduction(), sharding.getOffsets());
}

struct DistPropagateShardingPass
    : public distir::dist::impl::DistPropagateShardingPassBase<
          DistPropagateShardingPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool failedCheck = false;
    module.walk([&](Operation *op) {
      if (isa<shard::ShardOp, shard::GridOp>(op)) {
        op->emitError() << "dist-propagate-sharding: the module already has "
                           "shard annotations; fold them in with "
                           "dist-import-shard first";
        failedCheck = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (failedCheck)
      return signalPassFailure();

    // The annotations, checked, and one grid name per mesh.
    SmallVector<func::FuncOp> functions;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        functions.push_back(function);
    llvm::MapVector<MeshAttr, std::string> gridOf;
    llvm::StringMap<MeshAttr> meshOfGrid;
    SymbolTable symbols(module);
    auto check = [&](ShardingAttr sharding, Location loc) -> LogicalResult {
      if (!sharding.getPartial().empty())
        return emitError(loc) << "dist-propagate-sharding: the sharding has "
                                 "partial axes; annotate the summed value";
      if (!sharding.getOffsets().empty())
        return emitError(loc) << "dist-propagate-sharding: the sharding has "
                                 "explicit offsets; only balanced splits "
                                 "propagate";
      MeshAttr mesh = sharding.getMesh();
      if (gridOf.count(mesh))
        return success();
      std::string name =
          mesh.getName().empty() ? "dist_mesh" : mesh.getName().str();
      std::string unique = name;
      for (int k = 1; meshOfGrid.count(unique) || symbols.lookup(unique); ++k)
        unique = name + "_" + std::to_string(k);
      gridOf[mesh] = unique;
      meshOfGrid[unique] = mesh;
      return success();
    };
    struct Annotation {
      Value value;
      ShardingAttr sharding;
      bool forUsers;
    };
    std::vector<Annotation> annotations;
    for (func::FuncOp function : functions) {
      for (BlockArgument argument : function.getArguments())
        if (auto sharding = function.getArgAttrOfType<ShardingAttr>(
                argument.getArgNumber(), kShardingAttrName)) {
          if (failed(check(sharding, function.getLoc())))
            return signalPassFailure();
          annotations.push_back({argument, sharding, true});
        }
      WalkResult walked = function.walk([&](Operation *op) {
        if (!op->hasAttr(kShardingAttrName))
          return WalkResult::advance();
        for (OpResult result : op->getResults())
          if (ShardingAttr sharding =
                  getResultSharding(op, result.getResultNumber())) {
            if (failed(check(sharding, op->getLoc())))
              return WalkResult::interrupt();
            annotations.push_back({result, sharding, false});
          }
        return WalkResult::advance();
      });
      if (walked.wasInterrupted())
        return signalPassFailure();
    }

    // Upstream's propagation stops with an error at the first op without a
    // ShardingInterface (a reshape, a pad). It runs on a copy instead, in
    // which each such op is cut out: its results become new arguments and
    // its operands new results (upstream annotates only used values), so
    // nothing propagates through it (the op keeps no sharding, reported).
    // The copy is a module nested in this one (a pass may run a pipeline
    // only on what it owns), erased at the end.
    IRMapping mapping;
    OpBuilder atEnd = OpBuilder::atBlockEnd(module.getBody());
    ModuleOp copy = ModuleOp::create(atEnd, module.getLoc());
    llvm::scope_exit eraseCopy([&] { copy.erase(); });
    for (func::FuncOp original : functions)
      copy.push_back(original->clone(mapping));
    llvm::DenseSet<Operation *> cut;
    std::map<Operation *, std::map<std::string, int64_t>> cutIn;
    for (func::FuncOp original : functions) {
      auto function =
          cast<func::FuncOp>(mapping.lookup(original.getOperation()));
      SmallVector<Value> sinks;
      for (Operation &op : original.getFunctionBody().front()) {
        if (isa<shard::ShardingInterface>(op) ||
            op.hasTrait<OpTrait::IsTerminator>() ||
            op.hasTrait<OpTrait::ConstantLike>())
          continue;
        cut.insert(&op);
        ++cutIn[original][op.getName().getStringRef().str()];
        Operation *cloned = mapping.lookup(&op);
        for (Value operand : cloned->getOperands())
          if (isa<RankedTensorType>(operand.getType()))
            sinks.push_back(operand);
        for (Value result : cloned->getResults()) {
          BlockArgument stand = function.getFunctionBody().addArgument(
              result.getType(), cloned->getLoc());
          result.replaceAllUsesWith(stand);
        }
        cloned->erase();
      }
      Operation *terminator =
          function.getFunctionBody().front().getTerminator();
      terminator->insertOperands(terminator->getNumOperands(), sinks);
      function.setType(FunctionType::get(
          function.getContext(), function.getFunctionBody().getArgumentTypes(),
          terminator->getOperandTypes()));
      function.removeArgAttrsAttr();
      function.walk([&](Operation *op) { op->removeAttr(kShardingAttrName); });
    }

    // Out to shard: grids first in the copy, then each annotation right
    // where its value is defined, its other uses reading the annotation.
    OpBuilder builder = OpBuilder::atBlockBegin(copy.getBody());
    for (auto &[mesh, grid] : gridOf)
      shard::GridOp::create(builder, module.getLoc(), grid, mesh.getShape());
    for (const Annotation &annotation : annotations) {
      Value value = mapping.lookupOrNull(annotation.value);
      if (!value || (!isa<BlockArgument>(value) && !value.getDefiningOp()))
        continue;
      if (auto argument = dyn_cast<BlockArgument>(value))
        builder.setInsertionPointToStart(argument.getOwner());
      else
        builder.setInsertionPointAfter(value.getDefiningOp());
      Value sharding = buildShardSharding(builder, value.getLoc(),
                                          gridOf[annotation.sharding.getMesh()],
                                          annotation.sharding);
      auto shardOp = shard::ShardOp::create(builder, value.getLoc(), value,
                                            sharding, annotation.forUsers);
      value.replaceAllUsesExcept(shardOp.getResult(), shardOp);
    }

    // Upstream's propagation.
    OpPassManager pm(ModuleOp::getOperationName());
    shard::ShardingPropagationOptions options;
    options.traversal = traversal;
    pm.addNestedPass<func::FuncOp>(shard::createShardingPropagation(options));
    if (failed(runPipeline(pm, copy)))
      return signalPassFailure();

    // Back: the producers' annotations first, then the users'; a value
    // keeps the first sharding it gets, a different one for users is a
    // resharding.
    SmallVector<shard::ShardOp> shardOps;
    copy.walk([&](shard::ShardOp op) { shardOps.push_back(op); });
    SymbolTableCollection symbolTables;
    llvm::DenseMap<Operation *, int64_t> reshardedIn;
    for (bool forUsers : {false, true})
      for (shard::ShardOp op : shardOps) {
        if (op.getAnnotateForUsers() != forUsers)
          continue;
        FailureOr<ShardingAttr> sharding =
            convertShardSharding(op, op.getSharding(), symbolTables);
        if (failed(sharding))
          return signalPassFailure();
        Value root = annotatedRoot(op);
        ShardingAttr existing = shardingOf(root);
        if (existing && existing != *sharding) {
          ++reshardedIn[op->getParentOfType<func::FuncOp>()];
          continue;
        }
        if (!existing && failed(recordSharding(op, root, *sharding)))
          return signalPassFailure();
      }

    // The copy's shardings onto the original values.
    for (func::FuncOp original : functions) {
      auto function =
          cast<func::FuncOp>(mapping.lookup(original.getOperation()));
      for (BlockArgument argument : original.getArguments())
        if (ShardingAttr sharding = shardingOf(mapping.lookup(Value(argument))))
          original.setArgAttr(argument.getArgNumber(), kShardingAttrName,
                              sharding);
      for (Operation &op : original.getFunctionBody().getOps()) {
        op.removeAttr(kShardingAttrName);
        if (cut.contains(&op))
          continue;
        SmallVector<Attribute> all;
        ShardingAttr any;
        for (OpResult result : op.getResults()) {
          ShardingAttr sharding = shardingOf(mapping.lookup(Value(result)));
          if (sharding && !any)
            any = sharding;
          all.push_back(sharding);
        }
        if (!any)
          continue;
        if (all.size() == 1) {
          op.setAttr(kShardingAttrName, any);
          continue;
        }
        // Results not reached are replicated on the same mesh.
        for (Attribute &entry : all)
          if (!entry)
            entry = ShardingAttr::get(op.getContext(), any.getMesh(), {}, {},
                                      ReductionKind::Sum, {});
        op.setAttr(kShardingAttrName, ArrayAttr::get(op.getContext(), all));
      }
      reshardedIn[original] = reshardedIn.lookup(function);
    }

    // Meshes as they were, and the report.
    for (func::FuncOp original : functions) {
      int64_t shardedArgs = 0;
      for (BlockArgument argument : original.getArguments())
        if (auto sharding = original.getArgAttrOfType<ShardingAttr>(
                argument.getArgNumber(), kShardingAttrName)) {
          original.setArgAttr(argument.getArgNumber(), kShardingAttrName,
                              withMesh(sharding, meshOfGrid));
          ++shardedArgs;
        }
      int64_t sharded = 0, split = 0, tensorOps = 0;
      std::map<std::string, int64_t> unreached;
      for (Operation &top : original.getFunctionBody().getOps()) {
        Operation *op = &top;
        bool producesTensor = llvm::any_of(op->getResultTypes(), [](Type t) {
          return isa<RankedTensorType>(t);
        });
        if (!producesTensor)
          continue;
        ++tensorOps;
        Attribute attr = op->getAttr(kShardingAttrName);
        if (!attr) {
          if (!cut.contains(op))
            ++unreached[op->getName().getStringRef().str()];
          continue;
        }
        ++sharded;
        bool splits = false;
        if (auto one = dyn_cast<ShardingAttr>(attr)) {
          one = withMesh(one, meshOfGrid);
          splits = !one.isReplicated();
          op->setAttr(kShardingAttrName, one);
        } else if (auto all = dyn_cast<ArrayAttr>(attr)) {
          SmallVector<Attribute> restored;
          for (Attribute entry : all) {
            auto one = withMesh(cast<ShardingAttr>(entry), meshOfGrid);
            splits |= !one.isReplicated();
            restored.push_back(one);
          }
          op->setAttr(kShardingAttrName,
                      ArrayAttr::get(op->getContext(), restored));
        }
        split += splits;
      }
      InFlightDiagnostic remark = original.emitRemark();
      remark << "dist-propagate-sharding: " << sharded << " of " << tensorOps
             << " ops sharded (" << split << " split), "
             << reshardedIn.lookup(original)
             << " values resharded for a consumer; " << shardedArgs << " of "
             << original.getNumArguments()
             << " arguments sharded; no sharding rule (not propagated "
                "through): ";
      auto list = [&](const std::map<std::string, int64_t> &names) {
        if (names.empty())
          remark << "none";
        llvm::interleaveComma(names, remark, [&](const auto &entry) {
          remark << entry.first;
          if (entry.second > 1)
            remark << " x" << entry.second;
        });
      };
      list(cutIn[original]);
      remark << "; not reached: ";
      list(unreached);
    }
  }
};

} // namespace
