//===- UnflattenReshapes.cpp - Keep merged dimensions apart ---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// torch's nn.MultiheadAttention views [S, B, E] as [S, B * H, E / H]: the
// batch and the heads share one dimension, which a layout with one axis per
// dimension cannot split by both. The reshapes merge them only to split
// them again after the attention, so this rewrite keeps them apart in
// between (see UnflattenReshapes.h).
//
//===----------------------------------------------------------------------===//

#include "UnflattenReshapes.h"

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTUNFLATTENRESHAPESPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir::dist;

namespace {

/// The finest static shape that both `a` and `b` are reshapes of by
/// merging contiguous dimensions (the union of their prefix products), when
/// there is one. Shapes with unit or dynamic dimensions are left alone.
std::optional<SmallVector<int64_t>> commonRefinement(ArrayRef<int64_t> a,
                                                     ArrayRef<int64_t> b) {
  SmallVector<int64_t> prefixes;
  for (ArrayRef<int64_t> shape : {a, b}) {
    int64_t product = 1;
    for (int64_t size : shape) {
      if (ShapedType::isDynamic(size) || size <= 1)
        return std::nullopt;
      product *= size;
      prefixes.push_back(product);
    }
  }
  llvm::sort(prefixes);
  prefixes.erase(llvm::unique(prefixes), prefixes.end());
  SmallVector<int64_t> fine;
  int64_t previous = 1;
  for (int64_t p : prefixes) {
    if (p % previous != 0)
      return std::nullopt;
    fine.push_back(p / previous);
    previous = p;
  }
  return fine;
}

/// The groups of `fine`'s dimensions that make up each of `coarse`'s.
SmallVector<ReassociationIndices> groupsOf(ArrayRef<int64_t> coarse,
                                           ArrayRef<int64_t> fine) {
  SmallVector<ReassociationIndices> groups;
  int64_t next = 0;
  for (int64_t size : coarse) {
    ReassociationIndices group;
    for (int64_t product = 1; product < size; ++next) {
      product *= fine[next];
      group.push_back(next);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

/// Whether `group` of a reshape of `shape` merges two dimensions of size
/// > 1.
bool mergesGroup(ArrayRef<int64_t> shape, ArrayRef<int64_t> group) {
  return llvm::count_if(group, [&](int64_t d) { return shape[d] != 1; }) > 1;
}

/// Whether `collapse` merges two dimensions of size > 1 (static shapes
/// only).
bool mergesDims(tensor::CollapseShapeOp collapse) {
  if (!collapse.getSrcType().hasStaticShape())
    return false;
  ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
  return llvm::any_of(collapse.getReassociationIndices(),
                      [&](auto &group) { return mergesGroup(shape, group); });
}

bool hasPhase(Operation *op, StringRef phase) {
  auto attr = op->getAttrOfType<StringAttr>(kPhaseAttrName);
  return attr && attr.getValue() == phase;
}

RankedTensorType withShape(RankedTensorType like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, like.getElementType(),
                               like.getEncoding());
}

/// collapse -> linalg.transpose  =>  linalg.transpose -> collapse: the
/// transpose moves each merged group whole.
struct SinkThroughTranspose : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto collapse = op.getInput().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !mergesDims(collapse) || op->getNumResults() != 1 ||
        op->hasAttr(kShardingAttrName) || hasPhase(op, "update"))
      return failure();
    RankedTensorType srcType = collapse.getSrcType();
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    SmallVector<int64_t> permutation, shape;
    SmallVector<ReassociationIndices> outGroups;
    for (int64_t p : op.getPermutation()) {
      ReassociationIndices group;
      for (int64_t d : groups[p]) {
        group.push_back(static_cast<int64_t>(permutation.size()));
        permutation.push_back(d);
        shape.push_back(srcType.getDimSize(d));
      }
      outGroups.push_back(std::move(group));
    }
    auto initType = cast<RankedTensorType>(op.getInit().getType());
    Location loc = op.getLoc();
    auto init = tensor::EmptyOp::create(
        rewriter, loc, shape, srcType.getElementType(), initType.getEncoding());
    auto transpose = linalg::TransposeOp::create(
        rewriter, loc, collapse.getSrc(), init, permutation);
    auto out = tensor::CollapseShapeOp::create(
        rewriter, loc, initType, transpose->getResult(0), outGroups);
    rewriter.replaceOp(op, out.getResult());
    return success();
  }
};

/// collapse -> linalg.softmax  =>  linalg.softmax -> collapse, when the
/// normalized dimension is a single source dimension.
struct SinkThroughSoftmax : OpRewritePattern<linalg::SoftmaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::SoftmaxOp op,
                                PatternRewriter &rewriter) const override {
    auto collapse = op.getInput().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !mergesDims(collapse) || op->hasAttr(kShardingAttrName) ||
        hasPhase(op, "update"))
      return failure();
    RankedTensorType srcType = collapse.getSrcType();
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    std::optional<int64_t> dim;
    for (int64_t d : groups[op.getDimension()]) {
      if (srcType.getDimSize(d) == 1)
        continue;
      if (dim)
        return failure();
      dim = d;
    }
    if (!dim)
      dim = groups[op.getDimension()].front();
    auto outType = cast<RankedTensorType>(op.getOutput().getType());
    Location loc = op.getLoc();
    auto init = tensor::EmptyOp::create(rewriter, loc, srcType.getShape(),
                                        srcType.getElementType(),
                                        outType.getEncoding());
    RankedTensorType resultType = withShape(outType, srcType.getShape());
    auto softmax = linalg::SoftmaxOp::create(
        rewriter, loc, TypeRange{resultType}, collapse.getSrc(), init,
        static_cast<uint64_t>(*dim));
    auto out = tensor::CollapseShapeOp::create(rewriter, loc,
                                               op.getResult()[0].getType(),
                                               softmax.getResult()[0], groups);
    rewriter.replaceOp(op, out.getResult());
    return success();
  }
};

/// Whether `op`'s results reach the optimizer update or the function's
/// results through ops that only move or combine elements (element-wise
/// generics, transposes, collapses) or accumulate into them (the init of a
/// contraction): a weight gradient, whose dimensions are its weight's. Any
/// other op stops the walk; an expand_shape in particular: an expansion of
/// the rows folds into it rather than carrying past it (an input gradient
/// going back to [S, B, E]).
bool feedsUpdate(Operation *op) {
  SmallVector<Operation *> work = {op};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    for (OpOperand &use : work.pop_back_val()->getUses()) {
      Operation *user = use.getOwner();
      if (isa<func::ReturnOp>(user) || hasPhase(user, "update"))
        return true;
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      bool carries = isa<tensor::CollapseShapeOp>(user) ||
                     (linalgOp && (linalgOp.getNumReductionLoops() == 0 ||
                                   linalgOp.isDpsInit(&use)));
      if (carries && seen.insert(user).second)
        work.push_back(user);
    }
  }
  return false;
}

/// Which merged groups of its operands `op` reads apart. Activations and
/// their gradients: the rows (parallel loops: [S * B] of the attention's
/// projections), not the reductions (merged, they are the heads' features,
/// which tensor parallelism splits as one dimension). Weight and bias
/// gradients (backward ops that feed the update): the reductions (sums over
/// [S * B]), not their parallel groups, which are their weight's
/// dimensions; reading those apart would carry the expansion into the
/// optimizer update, whose state then no longer matches its weight's
/// layout. The update: nothing.
struct ApartKinds {
  bool parallel = false, reduction = false;
};
ApartKinds apartKinds(Operation *op) {
  if (hasPhase(op, "update"))
    return {};
  bool weightGradient = hasPhase(op, "backward") && feedsUpdate(op);
  return {/*parallel=*/!weightGradient, /*reduction=*/weightGradient};
}

/// Whether `operand` of a linalg op is a merging collapse whose merged
/// dimensions are all loops of the kinds `op` reads apart (apartKinds).
bool readsMergedDimsApart(linalg::LinalgOp op, OpOperand *operand) {
  auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !mergesDims(collapse))
    return false;
  // Upstream rewrites a linalg.index of an expanded loop into affine.apply,
  // which the reference executor does not run.
  if (!op.getBlock()->getOps<linalg::IndexOp>().empty())
    return false;
  AffineMap map = op.getMatchingIndexingMap(operand);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
  std::optional<ApartKinds> kinds;
  for (auto [d, group] : llvm::enumerate(collapse.getReassociationIndices())) {
    if (!mergesGroup(shape, group))
      continue;
    auto loop = dyn_cast<AffineDimExpr>(map.getResult(d));
    if (!loop)
      return false;
    if (!kinds)
      kinds = apartKinds(op);
    bool parallel =
        iterators[loop.getPosition()] == utils::IteratorType::parallel;
    if (!(parallel ? kinds->parallel : kinds->reduction))
      return false;
  }
  return true;
}

/// The control of upstream's fold-by-expansion: generics only, and not one
/// annotated with a `dist.sharding` (the annotation names its dimensions,
/// which the expansion would change).
bool readsMergedRows(OpOperand *operand) {
  auto generic = dyn_cast<linalg::GenericOp>(operand->getOwner());
  return generic && !generic->hasAttr(kShardingAttrName) &&
         readsMergedDimsApart(generic, operand);
}

/// When `operand` is a collapse that merges both groups `op` reads apart
/// and groups it keeps merged (apartKinds; nn.MultiheadAttention's
/// out-projection reads [S, B, H, D] as [S * B, H * D], rows and reduced
/// heads' features), splits it in two: first the groups kept merged, then
/// the others, so that those can be sunk alone. Returns whether it split.
bool splitMergedGroups(linalg::LinalgOp op, OpOperand *operand,
                       ApartKinds kinds, PatternRewriter &rewriter) {
  auto collapse = operand->get().getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !mergesDims(collapse))
    return false;
  AffineMap map = op.getMatchingIndexingMap(operand);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
  SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
  // First: the groups kept merged, every other source dim alone.
  SmallVector<ReassociationIndices> first, second;
  SmallVector<int64_t> midShape;
  bool apart = false, kept = false;
  for (auto [d, group] : llvm::enumerate(groups)) {
    bool merges = mergesGroup(shape, group);
    auto loop = dyn_cast<AffineDimExpr>(map.getResult(d));
    bool parallel =
        loop && iterators[loop.getPosition()] == utils::IteratorType::parallel;
    bool readApart = loop && (parallel ? kinds.parallel : kinds.reduction);
    apart |= merges && readApart;
    kept |= merges && !readApart;
    ReassociationIndices outer;
    if (merges && readApart) {
      for (int64_t i : group) {
        outer.push_back(static_cast<int64_t>(first.size()));
        first.push_back({i});
        midShape.push_back(shape[i]);
      }
    } else {
      int64_t size = 1;
      for (int64_t i : group)
        size *= shape[i];
      outer.push_back(static_cast<int64_t>(first.size()));
      first.push_back(group);
      midShape.push_back(size);
    }
    second.push_back(std::move(outer));
  }
  if (!apart || !kept)
    return false;
  // At the reader: the new collapses take its stage tags (Recorder).
  Location loc = collapse.getLoc();
  rewriter.setInsertionPoint(op);
  auto inner = tensor::CollapseShapeOp::create(
      rewriter, loc, withShape(collapse.getResultType(), midShape),
      collapse.getSrc(), first);
  auto outer = tensor::CollapseShapeOp::create(
      rewriter, loc, collapse.getResultType(), inner.getResult(), second);
  rewriter.modifyOpInPlace(op, [&] { operand->set(outer.getResult()); });
  // (The driver does not revisit the old collapse once unused.)
  if (collapse->use_empty())
    rewriter.eraseOp(collapse);
  return true;
}

/// linalg.matmul over merged rows (nn.MultiheadAttention's projections of
/// [S * B, E], and in a training step their gradients, which also sum over
/// [S * B]) => the same contraction as a linalg.generic, which
/// fold-by-expansion then sinks the collapse through: the rows stay
/// [S, B] apart, so a batch split reaches the projections. The generic
/// keeps the matmul's body; the Recorder gives it, and the expanded generic
/// that replaces it, the matmul's stage tags. A matmul annotated
/// with a `dist.sharding` keeps its form (the annotation names its
/// dimensions).
struct GeneralizeMergedRowsMatmul : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    ApartKinds kinds = apartKinds(op);
    if (op->hasAttr(kShardingAttrName) || (!kinds.parallel && !kinds.reduction))
      return failure();
    auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
    bool split = false;
    for (OpOperand *operand : op.getDpsInputOperands())
      split |= splitMergedGroups(linalgOp, operand, kinds, rewriter);
    if (!llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *operand) {
          return readsMergedDimsApart(linalgOp, operand);
        }))
      return success(split);
    rewriter.setInsertionPoint(op);
    bool generalized = succeeded(linalg::generalizeNamedOp(rewriter, linalgOp));
    return success(split || generalized);
  }
};

/// The same split for a generic's operands (a contraction generalized
/// before a transpose below it was sunk, a batched contraction from the
/// importer), so that fold-by-expansion can sink the outer collapse.
struct SplitGenericOperands : OpRewritePattern<linalg::GenericOp> {
  SplitGenericOperands(MLIRContext *context) : OpRewritePattern(context) {
    setDebugName(kName);
  }
  static constexpr llvm::StringLiteral kName = "SplitGenericOperands";
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    // Cheap tests first: apartKinds walks the users.
    if (op->hasAttr(kShardingAttrName) ||
        !op.getBlock()->getOps<linalg::IndexOp>().empty() ||
        llvm::none_of(op.getDpsInputOperands(), [](OpOperand *operand) {
          auto collapse =
              operand->get().getDefiningOp<tensor::CollapseShapeOp>();
          return collapse && mergesDims(collapse);
        }))
      return failure();
    ApartKinds kinds = apartKinds(op);
    bool split = false;
    for (OpOperand *operand : op.getDpsInputOperands())
      split |= splitMergedGroups(op, operand, kinds, rewriter);
    return success(split);
  }
};

/// expand(fill(empty)) -> fill(empty) of the expanded shape: an init stays
/// a fresh tensor (which makes a split reduction into it partial sums).
struct ExpandFreshInit : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    Value src = op.getSrc();
    auto fill = src.getDefiningOp<linalg::FillOp>();
    auto empty =
        (fill ? fill.getOutputs()[0] : src).getDefiningOp<tensor::EmptyOp>();
    if (!empty || !src.hasOneUse() ||
        (fill && !fill.getOutputs()[0].hasOneUse()))
      return failure();
    RankedTensorType type = op.getResultType();
    Value init =
        tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                type.getElementType(), type.getEncoding());
    if (fill) {
      auto newFill = linalg::FillOp::create(rewriter, op.getLoc(),
                                            fill.getInputs()[0], init);
      init = newFill.getResult(0);
    }
    rewriter.replaceOp(op, init);
    return success();
  }
};

/// A reshape to its own type is its source.
template <typename ReshapeOp>
struct FoldIdentityReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern<ReshapeOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getSrc().getType() != op.getResult().getType())
      return failure();
    rewriter.replaceOp(op, op.getSrc());
    return success();
  }
};

/// The encoding (device) of `op`'s first tensor result, else operand.
Attribute encodingOf(Operation *op) {
  for (Type t :
       llvm::concat<const Type>(op->getResultTypes(), op->getOperandTypes()))
    if (auto type = dyn_cast<RankedTensorType>(t); type && type.getEncoding())
      return type.getEncoding();
  return {};
}

/// Gives every op a pattern creates (ours and upstream's alike, so the
/// patterns need not) the stage tags of the op it matched and
/// places their tensors where that op's are (upstream's patterns build
/// types without an encoding); counts the ops a collapse was sunk through.
struct Recorder : RewriterBase::Listener {
  // Read when the pattern begins: the matched op may be erased before the
  // pattern ends.
  bool inPattern = false, sinking = false;
  SmallVector<NamedAttribute, 3> tags;
  Attribute vjpId;
  std::optional<OperationName> replacedName;
  bool replacedLinalg = false;
  Attribute encoding;
  int64_t sunk = 0;
  void notifyPatternBegin(const Pattern &pattern, Operation *op) override {
    inPattern = true;
    sinking =
        isa<linalg::GenericOp, linalg::TransposeOp, linalg::SoftmaxOp>(op) &&
        pattern.getDebugName() != SplitGenericOperands::kName;
    encoding = encodingOf(op);
    tags.clear();
    for (StringRef name : {kLayerAttrName, kPhaseAttrName, kVjpOfAttr})
      if (Attribute attr = op->getAttr(name))
        tags.push_back(NamedAttribute(name, attr));
    // A forward op's pairing with its adjoint goes to the first op of its
    // kind that replaces it.
    vjpId = op->getAttr(kVjpIdAttr);
    replacedName = op->getName();
    replacedLinalg = isa<linalg::LinalgOp>(op);
  }
  void notifyPatternEnd(const Pattern &, LogicalResult status) override {
    if (succeeded(status) && sinking)
      ++sunk;
    inPattern = false;
  }
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override {
    // Ops of the function's body (not of a generic's region).
    if (!inPattern || !isa_and_nonnull<func::FuncOp>(op->getParentOp()))
      return;
    for (const NamedAttribute &tag : tags)
      if (!op->hasAttr(tag.getName()))
        op->setAttr(tag.getName(), tag.getValue());
    // The op that takes the forward op's place: its kind, or a linalg op
    // for a linalg op (a named matmul generalized). Not an op moved.
    if (vjpId && !previous.isSet() && !op->hasAttr(kVjpIdAttr) &&
        !op->hasAttr(kVjpOfAttr) &&
        (op->getName() == *replacedName ||
         (replacedLinalg && isa<linalg::LinalgOp>(op)))) {
      op->setAttr(kVjpIdAttr, vjpId);
      vjpId = {};
    }
    if (!encoding)
      return;
    for (Value result : op->getResults())
      if (auto type = dyn_cast<RankedTensorType>(result.getType());
          type && !type.getEncoding())
        result.setType(RankedTensorType::get(type.getShape(),
                                             type.getElementType(), encoding));
  }
};

/// expand(collapse(x)) with the same groups is x.
struct FoldExpandOfCollapse : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    auto collapse = op.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || collapse.getSrcType() != op.getResultType() ||
        collapse.getReassociationIndices() != op.getReassociationIndices())
      return failure();
    rewriter.replaceOp(op, collapse.getSrc());
    return success();
  }
};

} // namespace

FailureOr<UnflattenStats> distir::dist::unflattenReshapes(func::FuncOp func,
                                                          int64_t maxRewrites) {
  UnflattenStats stats;
  // 1. expand(collapse(x)) -> collapse(expand(x)) through the finest shape.
  SmallVector<tensor::ExpandShapeOp> expands;
  func.walk([&](tensor::ExpandShapeOp op) { expands.push_back(op); });
  for (tensor::ExpandShapeOp expand : expands) {
    auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse)
      continue;
    RankedTensorType srcType = collapse.getSrcType();
    RankedTensorType dstType = expand.getResultType();
    std::optional<SmallVector<int64_t>> fine =
        commonRefinement(srcType.getShape(), dstType.getShape());
    if (!fine || ArrayRef<int64_t>(*fine) == srcType.getShape() ||
        ArrayRef<int64_t>(*fine) == dstType.getShape())
      continue;
    OpBuilder b(expand);
    Location loc = expand.getLoc();
    auto expanded = tensor::ExpandShapeOp::create(
        b, loc, withShape(srcType, *fine), collapse.getSrc(),
        groupsOf(srcType.getShape(), *fine));
    auto collapsed =
        tensor::CollapseShapeOp::create(b, loc, dstType, expanded.getResult(),
                                        groupsOf(dstType.getShape(), *fine));
    copyStageTags(expand, expanded, /*overwrite=*/false);
    copyStageTags(expand, collapsed, /*overwrite=*/false);
    // A forward expand's pairing with its adjoint goes to the expand.
    if (Attribute id = expand->getAttr(kVjpIdAttr))
      expanded->setAttr(kVjpIdAttr, id);
    expand.getResult().replaceAllUsesWith(collapsed.getResult());
    expand.erase();
    if (collapse->use_empty())
      collapse.erase();
    ++stats.refined;
  }
  // 2. Sink each merging collapse through the ops that see the merged
  // dimension as independent rows; an expand with the same groups folds it.
  MLIRContext *context = func.getContext();
  RewritePatternSet patterns(context);
  patterns.add<
      SinkThroughTranspose, SinkThroughSoftmax, GeneralizeMergedRowsMatmul,
      SplitGenericOperands, FoldExpandOfCollapse,
      // An expansion reaching a collapse it partly undoes (a
      // transpose sunk after its reader was expanded).
      ComposeExpandOfCollapseOp<tensor::ExpandShapeOp, tensor::CollapseShapeOp>,
      ExpandFreshInit, FoldIdentityReshape<tensor::ExpandShapeOp>,
      FoldIdentityReshape<tensor::CollapseShapeOp>>(context);
  linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, readsMergedRows);
  SmallVector<Operation *> roots;
  func.walk([&](tensor::CollapseShapeOp op) {
    if (mergesDims(op))
      for (Operation *user : op->getUsers())
        roots.push_back(user);
  });
  if (roots.empty())
    return stats;
  Recorder recorder;
  GreedyRewriteConfig config;
  // Program order is the schedule: nothing folded into new constants.
  config.enableFolding(false)
      .enableConstantCSE(false)
      .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled)
      .setStrictness(GreedyRewriteStrictness::AnyOp)
      .setListener(&recorder)
      .setMaxNumRewrites(maxRewrites < 0 ? GreedyRewriteConfig::kNoLimit
                                         : maxRewrites);
  if (failed(applyOpPatternsGreedily(roots, std::move(patterns), config)))
    return mlir::emitError(func.getLoc())
           << "dist-unflatten-reshapes: the rewrite did not converge";
  stats.sunk = recorder.sunk;
  return stats;
}

namespace {
struct DistUnflattenReshapesPass
    : public distir::dist::impl::DistUnflattenReshapesPassBase<
          DistUnflattenReshapesPass> {
  using DistUnflattenReshapesPassBase::DistUnflattenReshapesPassBase;
  void runOnOperation() final {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FailureOr<UnflattenStats> stats = unflattenReshapes(func, maxRewrites);
      if (failed(stats))
        return signalPassFailure();
      if (report)
        mlir::emitRemark(func.getLoc())
            << "dist-unflatten-reshapes: " << stats->refined
            << " reshapes through their finest shape, " << stats->sunk
            << " ops reading the merged dimensions apart";
    }
  }
};
} // namespace
