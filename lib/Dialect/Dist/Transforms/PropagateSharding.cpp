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
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

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

/// The mesh with `grid`'s name replaced by the original mesh.
ShardingAttr withMesh(ShardingAttr sharding,
                      const llvm::StringMap<MeshAttr> &original) {
  auto it = original.find(sharding.getMesh().getName());
  if (it == original.end() || it->second == sharding.getMesh())
    return sharding;
  return ShardingAttr::get(sharding.getContext(), it->second,
                           sharding.getSplit(), sharding.getPartial(),
                           sharding.getReduction(), sharding.getOffsets(),
                           sharding.getGroups());
}

/// Whether two shardings split alike: trailing unsplit entries aside
/// (`split = [[]]` and `split = []` are both replicated).
bool sameSharding(ShardingAttr a, ShardingAttr b) {
  if (!a || !b)
    return a == b;
  auto trimmed = [](ShardingAttr s) {
    ArrayRef<DenseI64ArrayAttr> split = s.getSplit();
    while (!split.empty() && split.back().empty())
      split = split.drop_back();
    return split;
  };
  return a.getMesh() == b.getMesh() && trimmed(a) == trimmed(b) &&
         a.getPartial() == b.getPartial() &&
         a.getReduction() == b.getReduction() &&
         a.getOffsets() == b.getOffsets() && a.getGroups() == b.getGroups();
  // (Groups are canonical: the verifier refuses a trailing 1.)
}

/// Per dimension of a `rank`-d value, the mesh axes splitting it.
SmallVector<SmallVector<int64_t>> splitOf(ShardingAttr sharding, int64_t rank) {
  SmallVector<SmallVector<int64_t>> split(rank);
  for (auto [d, axes] : llvm::enumerate(sharding.getSplit()))
    if (static_cast<int64_t>(d) < rank)
      split[d].assign(axes.asArrayRef().begin(), axes.asArrayRef().end());
  return split;
}

int64_t shardsOf(ShardingAttr sharding, ArrayRef<int64_t> axes) {
  int64_t count = 1;
  for (int64_t axis : axes)
    count *= sharding.getMesh().getShape()[axis];
  return count;
}

/// Across a reshape, from `from` (the side with a sharding, its dims in
/// `groups` of the other side's dims: a collapse's source groups, an
/// expand's result groups) to the other side: a split may sit only on the
/// first dimension of size > 1 of a group and must divide it evenly; it
/// then splits the merged dimension (and back). Anything else would need
/// data movement: no sharding.
std::optional<SmallVector<SmallVector<int64_t>>>
acrossReshape(ShardingAttr sharding, RankedTensorType groupedType,
              ArrayRef<ReassociationIndices> groups, bool fromGrouped) {
  ArrayRef<int64_t> shape = groupedType.getShape();
  int64_t mergedRank = static_cast<int64_t>(groups.size());
  SmallVector<SmallVector<int64_t>> grouped(groupedType.getRank()),
      merged(mergedRank);
  SmallVector<SmallVector<int64_t>> in =
      splitOf(sharding, fromGrouped ? groupedType.getRank() : mergedRank);
  for (auto [g, group] : llvm::enumerate(groups)) {
    if (llvm::any_of(
            group, [&](int64_t d) { return ShapedType::isDynamic(shape[d]); }))
      return std::nullopt;
    auto lead = llvm::find_if(group, [&](int64_t d) { return shape[d] > 1; });
    int64_t first = lead == group.end() ? group.front() : *lead;
    if (fromGrouped) {
      for (int64_t d : group)
        if (!in[d].empty() && d != first)
          return std::nullopt;
      merged[g] = in[first];
    } else {
      grouped[first] = in[g];
    }
    ArrayRef<int64_t> axes = fromGrouped ? in[first] : in[g];
    if (!axes.empty() && shape[first] % shardsOf(sharding, axes) != 0)
      return std::nullopt;
  }
  return fromGrouped ? merged : grouped;
}

/// DistIR's rules for ops upstream has none for: the sharding of the other
/// side of `op` (its result when `forward`, else its first operand), or
/// nothing when it cannot be carried without moving data.
ShardingAttr carry(Operation *op, ShardingAttr sharding, bool forward) {
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out)
    return {};
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    auto split = acrossReshape(sharding, in, collapse.getReassociationIndices(),
                               forward);
    return split ? ShardingAttr::get(sharding.getMesh(), *split)
                 : ShardingAttr();
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    auto split = acrossReshape(sharding, out, expand.getReassociationIndices(),
                               !forward);
    return split ? ShardingAttr::get(sharding.getMesh(), *split)
                 : ShardingAttr();
  }
  // Same-rank ops that keep some dimensions whole: a split may sit on
  // those only, and carries unchanged.
  if (in.getRank() != out.getRank())
    return {};
  SmallVector<bool> keeps(in.getRank(), false);
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    for (int64_t d = 0; d < in.getRank(); ++d)
      keeps[d] = d != static_cast<int64_t>(softmax.getDimension());
  } else if (isa<tensor::ExtractSliceOp, tensor::InsertSliceOp>(op)) {
    // Offset 0, stride 1 and the whole extent of the larger side (an
    // extract's source, an insert's destination; operand 0 is the source).
    auto slice = cast<OffsetSizeAndStrideOpInterface>(op);
    RankedTensorType whole = isa<tensor::ExtractSliceOp>(op) ? in : out;
    for (int64_t d = 0; d < in.getRank(); ++d)
      keeps[d] = slice.getStaticOffsets()[d] == 0 &&
                 slice.getStaticStrides()[d] == 1 &&
                 slice.getStaticSizes()[d] == whole.getDimSize(d);
  } else if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    for (int64_t d = 0; d < in.getRank(); ++d)
      keeps[d] = pad.getStaticLow()[d] == 0 && pad.getStaticHigh()[d] == 0;
  } else if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    for (int64_t d = 0; d < in.getRank(); ++d)
      keeps[d] = d != static_cast<int64_t>(concat.getDim());
  } else {
    return {};
  }
  SmallVector<SmallVector<int64_t>> split = splitOf(sharding, in.getRank());
  for (auto [d, axes] : llvm::enumerate(split))
    if (!axes.empty() && !keeps[d])
      return {};
  return ShardingAttr::get(sharding.getMesh(), split);
}

/// Whether upstream's propagation takes `op`: it needs a ShardingInterface,
/// and for linalg ops indexing maps that are projected permutations (a
/// broadcast written as a constant index fails there).
bool upstreamHandles(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() ||
      op->hasTrait<OpTrait::ConstantLike>())
    return true;
  if (!isa<shard::ShardingInterface>(op))
    return false;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return llvm::all_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
      return map.isProjectedPermutation();
    });
  return true;
}

/// A linalg op upstream does not take, by its indexing maps: the loops
/// its sharded operands and result split (a dimension read at a constant
/// index must be whole), then the unsharded side from the loops: the
/// result (a split reduction loop leaves it summed) or the unsharded
/// inputs. Whether anything was set; conflicting splits set nothing.
bool carryLinalg(linalg::LinalgOp op) {
  if (op->getNumResults() != 1)
    return false;
  unsigned loops = op.getNumLoops();
  SmallVector<SmallVector<int64_t>> loopAxes(loops);
  SmallVector<bool> known(loops, false);
  ShardingAttr like;
  auto read = [&](AffineMap map, ShardingAttr sharding, int64_t rank) -> bool {
    SmallVector<SmallVector<int64_t>> split = splitOf(sharding, rank);
    for (auto [d, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim) {
        if (!split[d].empty())
          return false;
        continue;
      }
      unsigned l = dim.getPosition();
      if (known[l] && loopAxes[l] != split[d])
        return false;
      known[l] = true;
      loopAxes[l] = split[d];
    }
    like = like ? like : sharding;
    return !like || like.getMesh() == sharding.getMesh();
  };
  Value result = op->getResult(0);
  auto resultType = cast<RankedTensorType>(result.getType());
  AffineMap resultMap = op.getIndexingMapMatchingResult(cast<OpResult>(result));
  SmallVector<OpOperand *> unsharded;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type)
      continue;
    ShardingAttr sharding = getValueSharding(input->get());
    if (!sharding) {
      unsharded.push_back(input);
      continue;
    }
    if (!read(op.getMatchingIndexingMap(input), sharding, type.getRank()))
      return false;
  }
  ShardingAttr resultSharding = getValueSharding(result);
  if (resultSharding && !read(resultMap, resultSharding, resultType.getRank()))
    return false;
  if (!like)
    return false;
  // Each mesh axis splits one loop at most.
  llvm::SmallDenseSet<int64_t> used;
  for (auto [l, axes] : llvm::enumerate(loopAxes))
    for (int64_t axis : axes)
      if (!used.insert(axis).second)
        return false;
  auto sideOf =
      [&](AffineMap map,
          int64_t rank) -> std::optional<SmallVector<SmallVector<int64_t>>> {
    SmallVector<SmallVector<int64_t>> split(rank);
    for (auto [d, expr] : llvm::enumerate(map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        split[d] = loopAxes[dim.getPosition()];
    return split;
  };
  bool changed = false;
  if (!resultSharding) {
    SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
    for (auto [l, kind] : llvm::enumerate(kinds))
      if (kind == utils::IteratorType::reduction)
        loopAxes[l].clear(); // summed
    setValueSharding(
        result, ShardingAttr::get(like.getMesh(),
                                  *sideOf(resultMap, resultType.getRank())));
    changed = true;
  } else {
    for (OpOperand *input : unsharded) {
      // Unsharded so far; a multi-result producer waits for its own rules.
      Operation *producer = input->get().getDefiningOp();
      if (producer && producer->getNumResults() != 1)
        continue;
      auto type = cast<RankedTensorType>(input->get().getType());
      setValueSharding(
          input->get(),
          ShardingAttr::get(
              like.getMesh(),
              *sideOf(op.getMatchingIndexingMap(input), type.getRank())));
      changed = true;
    }
  }
  return changed;
}

struct Annotation {
  Value value;
  ShardingAttr sharding;
};

struct DistPropagateShardingPass
    : public distir::dist::impl::DistPropagateShardingPassBase<
          DistPropagateShardingPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// The shardings now on arguments and op results, checked; grids named.
  LogicalResult collect(std::vector<Annotation> &annotations);
  /// One run of upstream's propagation from the current shardings; writes
  /// what it finds onto the functions.
  LogicalResult round(ArrayRef<Annotation> annotations);
  /// DistIR's rules across the ops cut out of upstream's view; whether any
  /// new sharding was set.
  bool crossCutOps();

  SmallVector<func::FuncOp> functions;
  llvm::MapVector<MeshAttr, std::string> gridOf;
  llvm::StringMap<MeshAttr> meshOfGrid;
  /// Ops without a ShardingInterface (cut out of upstream's view).
  llvm::SetVector<Operation *> cut;
  /// Values a consumer wanted another way, per function (last round).
  llvm::DenseMap<Operation *, int64_t> resharded;
};

LogicalResult
DistPropagateShardingPass::collect(std::vector<Annotation> &annotations) {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  auto check = [&](ShardingAttr sharding, Location loc) -> LogicalResult {
    if (!sharding.getPartial().empty())
      return emitError(loc) << "dist-propagate-sharding: the sharding has "
                               "partial axes; annotate the summed value";
    if (!sharding.getOffsets().empty())
      return emitError(loc) << "dist-propagate-sharding: the sharding has "
                               "explicit offsets; only balanced splits "
                               "propagate";
    if (sharding.isStrided())
      return emitError(loc) << "dist-propagate-sharding: the sharding is "
                               "strided (groups); only contiguous splits "
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
  for (func::FuncOp function : functions) {
    for (BlockArgument argument : function.getArguments())
      if (auto sharding = function.getArgAttrOfType<ShardingAttr>(
              argument.getArgNumber(), kShardingAttrName)) {
        if (failed(check(sharding, function.getLoc())))
          return failure();
        annotations.push_back({argument, sharding});
      }
    // The ops of the body itself (upstream's propagation sees no others).
    for (Operation &op : function.getFunctionBody().front()) {
      if (!op.hasAttr(kShardingAttrName))
        continue;
      for (OpResult result : op.getResults())
        if (ShardingAttr sharding =
                getResultSharding(&op, result.getResultNumber())) {
          if (failed(check(sharding, op.getLoc())))
            return failure();
          annotations.push_back({result, sharding});
        }
    }
  }
  return success();
}

LogicalResult
DistPropagateShardingPass::round(ArrayRef<Annotation> annotations) {
  ModuleOp module = getOperation();
  // Upstream's propagation stops with an error at the first op without a
  // ShardingInterface (a reshape, a pad). It runs on a copy instead, in
  // which each such op is cut out: its results become new arguments and
  // its operands new results (upstream annotates only used values). The
  // copy is a module nested in this one (a pass may run a pipeline only on
  // what it owns), erased at the end.
  IRMapping mapping;
  OpBuilder atEnd = OpBuilder::atBlockEnd(module.getBody());
  ModuleOp copy = ModuleOp::create(atEnd, module.getLoc());
  llvm::scope_exit eraseCopy([&] { copy.erase(); });
  for (func::FuncOp original : functions)
    copy.push_back(original->clone(mapping));
  for (func::FuncOp original : functions) {
    auto function = cast<func::FuncOp>(mapping.lookup(original.getOperation()));
    SmallVector<Value> sinks;
    for (Operation &op : original.getFunctionBody().front()) {
      if (!cut.contains(&op))
        continue;
      Operation *cloned = mapping.lookup(&op);
      for (Value operand : cloned->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          sinks.push_back(operand);
      for (auto [result, clonedResult] :
           llvm::zip(op.getResults(), cloned->getResults())) {
        BlockArgument stand = function.getFunctionBody().addArgument(
            clonedResult.getType(), cloned->getLoc());
        clonedResult.replaceAllUsesWith(stand);
        mapping.map(result, stand);
      }
      cloned->erase();
    }
    Operation *terminator = function.getFunctionBody().front().getTerminator();
    terminator->insertOperands(terminator->getNumOperands(), sinks);
    function.setType(FunctionType::get(
        function.getContext(), function.getFunctionBody().getArgumentTypes(),
        terminator->getOperandTypes()));
    function.removeArgAttrsAttr();
    function.removeResAttrsAttr();
    function.walk([&](Operation *op) { op->removeAttr(kShardingAttrName); });
  }

  // Out to shard: grids first in the copy, then each annotation right
  // where its value is defined, its other uses reading the annotation
  // (arguments: for their users).
  OpBuilder builder = OpBuilder::atBlockBegin(copy.getBody());
  for (auto &[mesh, grid] : gridOf)
    shard::GridOp::create(builder, module.getLoc(), grid, mesh.getShape());
  for (const Annotation &annotation : annotations) {
    Value value = mapping.lookup(annotation.value);
    bool argument = isa<BlockArgument>(value);
    if (argument)
      builder.setInsertionPointToStart(cast<BlockArgument>(value).getOwner());
    else
      builder.setInsertionPointAfter(value.getDefiningOp());
    Value sharding = buildShardSharding(builder, value.getLoc(),
                                        gridOf[annotation.sharding.getMesh()],
                                        annotation.sharding);
    auto shardOp = shard::ShardOp::create(builder, value.getLoc(), value,
                                          sharding, /*annotate_for_users=*/
                                          argument);
    value.replaceAllUsesExcept(shardOp.getResult(), shardOp);
  }

  OpPassManager pm(ModuleOp::getOperationName());
  shard::ShardingPropagationOptions options;
  options.traversal = traversal;
  pm.addNestedPass<func::FuncOp>(shard::createShardingPropagation(options));
  if (failed(runPipeline(pm, copy)))
    return failure();

  // Back: the producers' annotations first, then the users'; a value keeps
  // the first sharding it gets, a different one for users is a resharding.
  // Kept per value of the copy (not as attributes: a multi-result op's
  // attribute would need placeholders for results not known yet).
  SmallVector<shard::ShardOp> shardOps;
  copy.walk([&](shard::ShardOp op) { shardOps.push_back(op); });
  SymbolTableCollection symbolTables;
  llvm::DenseMap<Value, ShardingAttr> found;
  int64_t reshardings = 0;
  for (bool forUsers : {false, true})
    for (shard::ShardOp op : shardOps) {
      if (op.getAnnotateForUsers() != forUsers)
        continue;
      FailureOr<ShardingAttr> sharding =
          convertShardSharding(op, op.getSharding(), symbolTables);
      if (failed(sharding) ||
          failed(sharding->verifyFor(op.getSrc().getType(),
                                     [&]() { return op->emitError(); })))
        return failure();
      auto [it, inserted] = found.try_emplace(annotatedRoot(op), *sharding);
      if (!inserted && !sameSharding(it->second, *sharding))
        ++reshardings;
    }

  // The copy's shardings onto the original values, meshes as they were:
  // arguments, op results (a multi-result op once all are known), and the
  // results of cut ops that upstream reached from their users (their
  // stand-in arguments) when DistIR's rules did not set them already.
  for (func::FuncOp original : functions) {
    resharded[original] = reshardings;
    auto lookup = [&](Value value) {
      ShardingAttr sharding = found.lookup(mapping.lookup(value));
      return sharding ? withMesh(sharding, meshOfGrid) : sharding;
    };
    for (BlockArgument argument : original.getArguments())
      if (ShardingAttr sharding = lookup(argument))
        original.setArgAttr(argument.getArgNumber(), kShardingAttrName,
                            sharding);
    for (Operation &op : original.getFunctionBody().getOps()) {
      if (op.getNumResults() == 0)
        continue;
      if (cut.contains(&op)) {
        if (op.getNumResults() == 1 && !getValueSharding(op.getResult(0)))
          if (ShardingAttr sharding = lookup(op.getResult(0)))
            setValueSharding(op.getResult(0), sharding);
        continue;
      }
      SmallVector<ShardingAttr> all;
      for (OpResult result : op.getResults())
        all.push_back(lookup(result));
      if (llvm::is_contained(all, ShardingAttr()))
        continue;
      if (all.size() == 1) {
        op.setAttr(kShardingAttrName, all.front());
        continue;
      }
      op.setAttr(kShardingAttrName,
                 ArrayAttr::get(op.getContext(), SmallVector<Attribute>(
                                                     all.begin(), all.end())));
    }
  }
  return success();
}

bool DistPropagateShardingPass::crossCutOps() {
  bool changed = false;
  for (Operation *op : cut) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      changed |= carryLinalg(linalgOp);
      continue;
    }
    if (op->getNumOperands() < 1 || op->getNumResults() != 1)
      continue;
    Value in = op->getOperand(0), out = op->getResult(0);
    ShardingAttr from = getValueSharding(in), to = getValueSharding(out);
    if (from && !to) {
      if (ShardingAttr carried = carry(op, from, /*forward=*/true)) {
        setValueSharding(out, carried);
        changed = true;
      }
    } else if (to && !from &&
               (isa<BlockArgument>(in) ||
                in.getDefiningOp()->getNumResults() == 1)) {
      if (ShardingAttr carried = carry(op, to, /*forward=*/false)) {
        setValueSharding(in, carried);
        changed = true;
      }
    }
  }
  return changed;
}

void DistPropagateShardingPass::runOnOperation() {
  ModuleOp module = getOperation();
  functions.clear();
  gridOf.clear();
  meshOfGrid.clear();
  cut.clear();
  resharded.clear();
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
  SmallVector<func::FuncOp> all;
  for (auto function : module.getOps<func::FuncOp>())
    if (!function.isExternal())
      all.push_back(function);
  // One function at a time, so that each one's result depends on its own
  // annotations only.
  for (func::FuncOp original : all) {
    functions = {original};
    cut.clear();
    for (Operation &op : original.getFunctionBody().front())
      if (!upstreamHandles(&op))
        cut.insert(&op);

    // Upstream's rounds, with DistIR's rules across the cut ops between
    // them, until nothing new is reached (each round that goes on gives a
    // cut op a side, so at most 2 x cut + 1 rounds).
    int64_t rounds = 0;
    do {
      std::vector<Annotation> annotations;
      if (failed(collect(annotations)) || failed(round(annotations)))
        return signalPassFailure();
      ++rounds;
    } while (crossCutOps() && rounds <= 2 * static_cast<int64_t>(cut.size()));

    int64_t shardedArgs =
        llvm::count_if(original.getArguments(), [&](BlockArgument a) {
          return bool(getValueSharding(a));
        });
    int64_t sharded = 0, split = 0, tensorOps = 0, crossed = 0,
            reshardedHere = 0;
    std::map<std::string, int64_t> blocked, unreached;
    // A reshape, pad or slice holds its result as its input dictates: a
    // result sharding upstream reached from the users that DistIR's rules
    // do not give from the input is dropped (the consumer reshards).
    for (Operation *op : cut) {
      if (isa<linalg::LinalgOp>(op) || op->getNumResults() != 1 ||
          op->getNumOperands() == 0 || !getValueSharding(op->getResult(0)))
        continue;
      ShardingAttr in = getValueSharding(op->getOperand(0));
      if (in && sameSharding(carry(op, in, /*forward=*/true),
                             getValueSharding(op->getResult(0))))
        continue;
      op->removeAttr(kShardingAttrName);
      reshardedHere += static_cast<bool>(in);
    }
    for (Operation &op : original.getFunctionBody().getOps()) {
      bool producesTensor = llvm::any_of(
          op.getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); });
      if (!producesTensor)
        continue;
      ++tensorOps;
      SmallVector<ShardingAttr> shardings;
      for (OpResult result : op.getResults())
        if (ShardingAttr sharding = getValueSharding(result))
          shardings.push_back(sharding);
      if (shardings.empty()) {
        // A cut op with a sharded operand stopped the propagation; one
        // with neither side sharded was simply not reached.
        bool stopped =
            cut.contains(&op) && llvm::any_of(op.getOperands(), [](Value v) {
              return isa<RankedTensorType>(v.getType()) &&
                     static_cast<bool>(getValueSharding(v));
            });
        ++(stopped ? blocked : unreached)[op.getName().getStringRef().str()];
        continue;
      }
      ++sharded;
      crossed += cut.contains(&op);
      split += llvm::any_of(shardings,
                            [](ShardingAttr s) { return !s.isReplicated(); });
    }
    InFlightDiagnostic remark = emitRemark(original.getLoc());
    remark << "dist-propagate-sharding: " << sharded << " of " << tensorOps
           << " ops sharded (" << split << " split, " << crossed
           << " of them ops upstream has no rule for), "
           << resharded.lookup(original) + reshardedHere
           << " values resharded for a consumer; " << shardedArgs << " of "
           << original.getNumArguments() << " arguments sharded; " << rounds
           << " rounds; not propagated through: ";
    auto list = [&](const std::map<std::string, int64_t> &names) {
      if (names.empty())
        remark << "none";
      llvm::interleaveComma(names, remark, [&](const auto &entry) {
        remark << entry.first;
        if (entry.second > 1)
          remark << " x" << entry.second;
      });
    };
    list(blocked);
    remark << "; not reached: ";
    list(unreached);
  }
}

} // namespace
