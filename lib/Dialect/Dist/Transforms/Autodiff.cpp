//===- Autodiff.cpp - Training steps from forward programs ----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dist-autodiff turns a forward function into one training step: the loss
// (built from ordinary linalg ops, so that it is differentiated like the
// model), the backward pass (reverse sweep over the function, one
// vector-Jacobian rule per op, AutodiffRules.cpp) and one update op per
// weight that follows torch.optim. Only values that depend on a weight are
// differentiated (activity analysis), so the inputs get no gradient.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "InferLayers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringSet.h"

#include <limits>

namespace distir::dist {
#define GEN_PASS_DEF_DISTAUTODIFFPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::autodiff;

namespace {

using Optimizer = dist::OptimizerKind;

struct Hyper {
  Optimizer optimizer;
  double lr, momentum, beta1, beta2, eps, weightDecay;
  /// Optimizer state tensors per weight (momentum: m; Adam: m and v).
  unsigned stateCount() const {
    return optimizer == Optimizer::SGD        ? 0
           : optimizer == Optimizer::Momentum ? 1
                                              : 2;
  }
  bool hasStep() const {
    return optimizer == Optimizer::Adam || optimizer == Optimizer::AdamW;
  }
};

/// Builds the loss and the update of one step function.
class StepBuilder {
public:
  StepBuilder(func::FuncOp func, const Hyper &hyper, bool crossEntropy,
              FloatType computeType, const llvm::StringSet<> &frozen,
              llvm::StringSet<> &unmatchedFrozen)
      : func(func), b(func.getContext()), hyper(hyper),
        crossEntropy(crossEntropy), computeType(computeType), frozen(frozen),
        unmatchedFrozen(unmatchedFrozen) {}

  LogicalResult run();

private:
  /// `loc` named after one part of what it computes ("loss" -> "loss.max").
  Location part(Location loc, StringRef what) {
    if (auto name = dyn_cast<NameLoc>(loc))
      return NameLoc::get(
          b.getStringAttr(name.getName().getValue() + "." + what),
          name.getChildLoc());
    return NameLoc::get(b.getStringAttr(what), loc);
  }
  Value cst(OpBuilder &bb, Location loc, Type type, double v) {
    return arith::ConstantOp::create(bb, loc, bb.getFloatAttr(type, v));
  }
  Value filled(Location loc, RankedTensorType type, double v) {
    return createFilled(b, loc, type, v);
  }
  RankedTensorType like(RankedTensorType t, ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
  }
  /// A generic whose loops are `type`'s dimensions; `reduced` marks the
  /// loops that the result drops (reduction loops).
  Value generic(Location loc, ValueRange ins, ArrayRef<AffineMap> inMaps,
                RankedTensorType resultType, AffineMap resultMap, Value init,
                unsigned numLoops, ArrayRef<bool> reduced,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
    SmallVector<AffineMap> maps(inMaps);
    maps.push_back(resultMap);
    SmallVector<utils::IteratorType> iters;
    for (unsigned l = 0; l < numLoops; ++l)
      iters.push_back(reduced[l] ? utils::IteratorType::reduction
                                 : utils::IteratorType::parallel);
    return linalg::GenericOp::create(
               b, loc, TypeRange{resultType}, ins, ValueRange{init}, maps,
               iters,
               [&](OpBuilder &bb, Location l, ValueRange args) {
                 linalg::YieldOp::create(bb, l, body(bb, l, args));
               })
        .getResult(0);
  }
  Value buildLoss(Location loc, Value output, Value target);
  Value buildMSE(Location loc, Value output, Value target);
  Value buildCrossEntropy(Location loc, Value output, Value target);
  /// The update of `weight` with gradient `grad`; appends the new weight
  /// and state to `newWeights` / `newState`.
  void buildUpdate(Location loc, Value weight, Value grad,
                   ArrayRef<Value> state, Value step, Value &newWeight,
                   SmallVector<Value> &newState);
  /// Tags the ops inserted since `marker` (null: since the function's
  /// first op) with `layer` and `phase`.
  void tagSince(Operation *marker, int64_t layer, StringRef phase);
  int64_t layerOf(Operation *op) const {
    if (auto layer = op->getAttrOfType<IntegerAttr>("dist.layer"))
      return layer.getInt();
    return 0;
  }

  func::FuncOp func;
  OpBuilder b;
  const Hyper &hyper;
  bool crossEntropy;
  /// Mixed precision: the forward and backward type (null: the model's).
  FloatType computeType;
  /// Names of arguments not to train, and those not seen yet.
  const llvm::StringSet<> &frozen;
  llvm::StringSet<> &unmatchedFrozen;
  /// Values whose gradient is not propagated (the max of a log-sum-exp).
  DenseSet<Value> stopGradient;
  Operation *returnOp = nullptr;
};

} // namespace

void StepBuilder::tagSince(Operation *marker, int64_t layer, StringRef phase) {
  Operation *op =
      marker ? marker->getNextNode() : &func.getBody().front().front();
  for (; op && op != returnOp; op = op->getNextNode()) {
    op->setAttr("dist.layer", b.getI64IntegerAttr(layer));
    op->setAttr("dist.phase", b.getStringAttr(phase));
  }
}

Value StepBuilder::buildMSE(Location loc, Value output, Value target) {
  // mean((y - t)^2) over every element.
  auto type = cast<RankedTensorType>(output.getType());
  unsigned rank = type.getRank();
  auto scalar = like(type, {});
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap toScalar = AffineMap::get(rank, 0, {}, b.getContext());
  SmallVector<bool> all(rank, true);
  Location sumLoc = part(loc, "sum_squares");
  Value sum = generic(sumLoc, {output, target}, {id, id}, scalar, toScalar,
                      filled(sumLoc, scalar, 0), rank, all,
                      [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                        Value d = arith::SubFOp::create(bb, l, a[0], a[1]);
                        Value sq = arith::MulFOp::create(bb, l, d, d);
                        return arith::AddFOp::create(bb, l, a[2], sq);
                      });
  double inv = 1.0 / static_cast<double>(type.getNumElements());
  AffineMap scalarMap = AffineMap::get(0, 0, {}, b.getContext());
  loc = part(loc, "mean");
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{}, type.getElementType(), type.getEncoding());
  return generic(loc, {sum}, {scalarMap}, scalar, scalarMap, init, 0, {},
                 [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
                   return arith::MulFOp::create(
                       bb, l, a[0], cst(bb, l, a[0].getType(), inv));
                 });
}

Value StepBuilder::buildCrossEntropy(Location loc, Value output, Value target) {
  // mean over positions of logsumexp(y) - y[t], classes on the last axis.
  auto type = cast<RankedTensorType>(output.getType());
  unsigned rank = type.getRank();
  Type elt = type.getElementType();
  auto rows = like(type, type.getShape().drop_back());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = id.dropResult(rank - 1);
  SmallVector<bool> lastReduced(rank, false);
  lastReduced.back() = true;
  double negInf = -std::numeric_limits<double>::infinity();
  Location maxLoc = part(loc, "row_max");
  Value max = generic(maxLoc, {output}, {id}, rows, rowMap,
                      filled(maxLoc, rows, negInf), rank, lastReduced,
                      [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                        return arith::MaximumFOp::create(bb, l, a[1], a[0]);
                      });
  // Shifting by the row maximum changes nothing mathematically; like
  // PyTorch's log-softmax, no gradient flows through it.
  stopGradient.insert(max);
  Location sumExpLoc = part(loc, "sum_exp");
  Value sumExp = generic(sumExpLoc, {output, max}, {id, rowMap}, rows, rowMap,
                         filled(sumExpLoc, rows, 0), rank, lastReduced,
                         [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                           Value s = arith::SubFOp::create(bb, l, a[0], a[1]);
                           Value e = math::ExpOp::create(bb, l, s);
                           return arith::AddFOp::create(bb, l, a[2], e);
                         });
  Location pickedLoc = part(loc, "target_logit");
  Value picked = generic(
      pickedLoc, {output, target}, {id, rowMap}, rows, rowMap,
      filled(pickedLoc, rows, 0), rank, lastReduced,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value cls = linalg::IndexOp::create(bb, l, rank - 1);
        Value t = arith::IndexCastOp::create(bb, l, bb.getIndexType(), a[1]);
        Value hit =
            arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq, cls, t);
        Value v = arith::SelectOp::create(bb, l, hit, a[0],
                                          cst(bb, l, a[0].getType(), 0));
        return arith::AddFOp::create(bb, l, a[2], v);
      });
  unsigned outer = rank - 1;
  AffineMap rowId = b.getMultiDimIdentityMap(outer);
  Location rowLoc = part(loc, "per_position");
  Value rowsInit = tensor::EmptyOp::create(b, rowLoc, rows.getShape(), elt,
                                           rows.getEncoding());
  Value perRow =
      generic(rowLoc, {sumExp, max, picked}, {rowId, rowId, rowId}, rows, rowId,
              rowsInit, outer, SmallVector<bool>(outer, false),
              [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                Value lse = arith::AddFOp::create(
                    bb, l, math::LogOp::create(bb, l, a[0]), a[1]);
                return arith::SubFOp::create(bb, l, lse, a[2]);
              });
  auto scalar = like(type, {});
  Location totalLoc = part(loc, "sum");
  Value total = generic(totalLoc, {perRow}, {rowId}, scalar,
                        AffineMap::get(outer, 0, {}, b.getContext()),
                        filled(totalLoc, scalar, 0), outer,
                        SmallVector<bool>(outer, true),
                        [](OpBuilder &bb, Location l, ValueRange a) -> Value {
                          return arith::AddFOp::create(bb, l, a[1], a[0]);
                        });
  double inv = 1.0 / static_cast<double>(rows.getNumElements());
  AffineMap scalarMap = AffineMap::get(0, 0, {}, b.getContext());
  loc = part(loc, "mean");
  Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, elt,
                                       type.getEncoding());
  return generic(loc, {total}, {scalarMap}, scalar, scalarMap, init, 0, {},
                 [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
                   return arith::MulFOp::create(
                       bb, l, a[0], cst(bb, l, a[0].getType(), inv));
                 });
}

Value StepBuilder::buildLoss(Location loc, Value output, Value target) {
  return crossEntropy ? buildCrossEntropy(loc, output, target)
                      : buildMSE(loc, output, target);
}

void StepBuilder::buildUpdate(Location loc, Value weight, Value grad,
                              ArrayRef<Value> state, Value step,
                              Value &newWeight, SmallVector<Value> &newState) {
  auto type = cast<RankedTensorType>(weight.getType());
  unsigned rank = type.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<Value> ins = {weight, grad};
  llvm::append_range(ins, state);
  SmallVector<AffineMap> maps(ins.size(), id);
  if (step) {
    ins.push_back(step);
    maps.push_back(AffineMap::get(rank, 0, {}, b.getContext()));
  }
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (unsigned i = 0; i <= state.size(); ++i) {
    inits.push_back(tensor::EmptyOp::create(
        b, loc, type.getShape(), type.getElementType(), type.getEncoding()));
    types.push_back(type);
    maps.push_back(id);
  }
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  const Hyper &h = hyper;
  auto update = linalg::GenericOp::create(
      b, loc, types, ins, inits, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange a) {
        Type t = a[0].getType();
        auto c = [&](double v) { return cst(bb, l, t, v); };
        auto mul = [&](Value x, Value y) -> Value {
          return arith::MulFOp::create(bb, l, x, y);
        };
        auto add = [&](Value x, Value y) -> Value {
          return arith::AddFOp::create(bb, l, x, y);
        };
        auto sub = [&](Value x, Value y) -> Value {
          return arith::SubFOp::create(bb, l, x, y);
        };
        Value p = a[0], g = a[1];
        // A low-precision gradient (mixed precision) is widened here.
        if (g.getType() != t)
          g = arith::ExtFOp::create(bb, l, t, g);
        // L2 weight decay enters the gradient (not for AdamW).
        if (h.weightDecay != 0 && h.optimizer != Optimizer::AdamW)
          g = add(g, mul(c(h.weightDecay), p));
        SmallVector<Value> yields;
        switch (h.optimizer) {
        case Optimizer::SGD:
          yields.push_back(sub(p, mul(c(h.lr), g)));
          break;
        case Optimizer::Momentum: {
          Value buf = add(mul(c(h.momentum), a[2]), g);
          yields = {sub(p, mul(c(h.lr), buf)), buf};
          break;
        }
        case Optimizer::Adam:
        case Optimizer::AdamW: {
          if (h.optimizer == Optimizer::AdamW)
            p = mul(p, c(1 - h.lr * h.weightDecay));
          Value m = add(mul(c(h.beta1), a[2]), mul(c(1 - h.beta1), g));
          Value v = add(mul(c(h.beta2), a[3]), mul(c(1 - h.beta2), mul(g, g)));
          Value t1 = add(a[4], c(1));
          Value bc1 = sub(c(1), math::PowFOp::create(bb, l, c(h.beta1), t1));
          Value bc2 = sub(c(1), math::PowFOp::create(bb, l, c(h.beta2), t1));
          Value denom =
              add(arith::DivFOp::create(bb, l, math::SqrtOp::create(bb, l, v),
                                        math::SqrtOp::create(bb, l, bc2)),
                  c(h.eps));
          Value stepSize = arith::DivFOp::create(bb, l, c(h.lr), bc1);
          Value delta = mul(stepSize, arith::DivFOp::create(bb, l, m, denom));
          yields = {sub(p, delta), m, v};
          break;
        }
        }
        linalg::YieldOp::create(bb, l, yields);
      });
  newWeight = update.getResult(0);
  for (unsigned i = 0; i < state.size(); ++i)
    newState.push_back(update.getResult(1 + i));
}

LogicalResult StepBuilder::run() {
  MLIRContext *ctx = func.getContext();
  Block &body = func.getBody().front();
  returnOp = body.getTerminator();
  for (Operation &op : body.without_terminator())
    if (auto phase = op.getAttrOfType<StringAttr>("dist.phase"))
      if (phase.getValue() != "forward")
        return op.emitOpError() << "dist-autodiff: @" << func.getSymName()
                                << " is already a training step (it has "
                                << phase.getValue() << " ops)";
  if (returnOp->getNumOperands() != 1)
    return func.emitError()
           << "dist-autodiff: @" << func.getSymName() << " has "
           << returnOp->getNumOperands()
           << " results; the loss needs exactly one (the model output)";
  Value output = returnOp->getOperand(0);
  auto outType = dyn_cast<RankedTensorType>(output.getType());
  if (!outType || !isa<FloatType>(outType.getElementType()))
    return func.emitError()
           << "dist-autodiff: the output of @" << func.getSymName()
           << " must be a floating-point tensor, got " << output.getType();
  if (crossEntropy && outType.getRank() < 1)
    return func.emitError() << "dist-autodiff: cross-entropy needs logits "
                               "with a class axis (the last), got "
                            << outType;

  // Weights: floating-point arguments that are not batched inputs, not
  // frozen (BatchNorm statistics) and not named in `frozen`.
  SmallVector<unsigned> weightIdx;
  unsigned numInputs = 0;
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    auto name = func.getArgAttrOfType<StringAttr>(i, "dist.name");
    bool isFrozen = func.getArgAttr(i, "dist.frozen") ||
                    (name && frozen.contains(name.getValue()));
    if (name)
      unmatchedFrozen.erase(name.getValue());
    bool weight = type && isa<FloatType>(type.getElementType()) &&
                  !func.getArgAttr(i, "dist.batch_dim") && !isFrozen;
    if (weight) {
      weightIdx.push_back(i);
      continue;
    }
    if (isFrozen)
      continue; // a constant of the step, wherever it is
    if (!weightIdx.empty())
      return func.emitError()
             << "dist-autodiff: argument #" << arg.getArgNumber()
             << " is an input after a weight; the inputs must come first";
    ++numInputs;
  }
  if (weightIdx.empty())
    return func.emitError() << "dist-autodiff: @" << func.getSymName()
                            << " has no weights (floating-point arguments "
                               "without dist.batch_dim) to train";
  // Layers for pipeline parallelism: from the data flow when the forward
  // program has none (a CNN, a model exported without block names). Every
  // forward op has a layer from here on.
  if (!dist::hasLayerTags(func) &&
      failed(dist::inferLayers(func, dist::kInferredLayers)))
    return failure();
  int64_t outputLayer = 0;
  if (Operation *def = output.getDefiningOp())
    outputLayer = layerOf(def);
  // Mixed precision: the low-precision copy of each argument. A weight's
  // gradient is its copy's (2 bytes per parameter, as DeepSpeed and Apex
  // keep them); the update widens it as it reads it.
  DenseMap<Value, Value> casts;
  if (computeType) {
    if (failed(lowerComputePrecision(func, computeType, casts)))
      return failure();
    output = returnOp->getOperand(0);
    // A cast takes the earliest layer among the ops it feeds (a tied
    // embedding's copy is made where the embedding runs and sent to the
    // head's stage); the output's cast the output's layer.
    for (Operation &op : body.without_terminator()) {
      if (op.hasAttr("dist.layer"))
        continue;
      std::optional<int64_t> layer;
      for (Operation *user : op.getUsers()) {
        // A read inside a body (a gather's table) counts for its op.
        user = body.findAncestorOpInBlock(*user);
        if (user && user->hasAttr("dist.layer"))
          layer = std::min(layer.value_or(layerOf(user)), layerOf(user));
      }
      op.setAttr("dist.layer",
                 b.getI64IntegerAttr(layer.value_or(outputLayer)));
    }
  }
  for (Operation &op : body.without_terminator())
    if (!op.hasAttr("dist.phase"))
      op.setAttr("dist.phase", b.getStringAttr("forward"));

  // The target, after the inputs.
  Location loc = func.getLoc();
  RankedTensorType targetType =
      crossEntropy
          ? RankedTensorType::get(outType.getShape().drop_back(),
                                  b.getI64Type(), outType.getEncoding())
          : outType;
  SmallVector<NamedAttribute> targetAttrs = {
      b.getNamedAttr("dist.name", b.getStringAttr("target"))};
  if (targetType.getRank() > 0)
    targetAttrs.push_back(
        b.getNamedAttr("dist.batch_dim", b.getI64IntegerAttr(0)));
  if (failed(func.insertArgument(numInputs, targetType,
                                 b.getDictionaryAttr(targetAttrs),
                                 NameLoc::get(b.getStringAttr("target"), loc))))
    return failure();
  for (unsigned &i : weightIdx)
    ++i;
  Value target = body.getArgument(numInputs);

  // Forward ops before the loss: the sweep's range.
  Operation *lastForward = returnOp->getPrevNode();
  b.setInsertionPoint(returnOp);
  // Generated ops are named after what they compute, at the function's
  // location: diagnostics and the search's per-microbatch identities
  // (name, location, type) tell them apart.
  auto named = [&](StringRef name, Location at) -> Location {
    return NameLoc::get(b.getStringAttr(name), at);
  };
  Value loss = buildLoss(named("loss", loc), output, target);
  tagSince(lastForward, outputLayer, "forward");

  // Activity: values that depend on a weight.
  DenseSet<Value> active;
  for (unsigned i : weightIdx)
    active.insert(body.getArgument(i));
  auto isFloatValue = [](Value v) {
    return isa<FloatType>(getElementTypeOrSelf(v.getType()));
  };
  for (Operation &op : body.without_terminator()) {
    // Operands and values read inside regions; an init that a linalg body
    // overwrites carries nothing into the result.
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    bool reads = llvm::any_of(op.getOpOperands(), [&](OpOperand &operand) {
      return active.contains(operand.get()) &&
             (!linalgOp || !linalgOp.isDpsInit(&operand) ||
              linalgOp.payloadUsesValueFromOperand(&operand));
    });
    for (Region &region : op.getRegions())
      region.walk([&](Operation *nested) {
        for (Value v : nested->getOperands())
          reads |= active.contains(v);
      });
    if (!reads)
      continue;
    for (Value r : op.getResults())
      if (isFloatValue(r) && !stopGradient.contains(r))
        active.insert(r);
  }
  if (!active.contains(loss))
    return func.emitError()
           << "dist-autodiff: the output of @" << func.getSymName()
           << " does not depend on any weight";

  // Backward: seed dloss = 1, then every op in reverse.
  SmallVector<Operation *> sweep;
  for (Operation &op : body.without_terminator())
    sweep.push_back(&op);
  AdjointEmitter adjoints(b, active);
  Operation *marker = returnOp->getPrevNode();
  adjoints.accumulate(
      loss, adjoints.filled(named("loss.grad", loc),
                            cast<RankedTensorType>(loss.getType()), 1.0));
  tagSince(marker, outputLayer, "backward");
  DenseSet<Operation *> castOps;
  for (auto &entry : casts)
    castOps.insert(entry.second.getDefiningOp());
  int64_t nextAdjointId = 0;
  DenseMap<Operation *, IntegerAttr> idOf;
  for (Operation *op : llvm::reverse(sweep)) {
    if (castOps.contains(op))
      continue;
    marker = returnOp->getPrevNode();
    if (failed(adjoints.emit(op)))
      return failure();
    tagSince(marker, layerOf(op), "backward");
    // Which forward op each adjoint op belongs to: PaSE gives an op and its
    // adjoint one configuration, as its paper does (docs/design/pase.md).
    if (marker->getNextNode() != returnOp) {
      IntegerAttr id = b.getI64IntegerAttr(nextAdjointId++);
      op->setAttr(dist::kVjpIdAttr, id);
      idOf[op] = id;
      for (Operation *adjoint = marker->getNextNode(); adjoint != returnOp;
           adjoint = adjoint->getNextNode())
        adjoint->setAttr(dist::kVjpOfAttr, id);
    }
    // The adjoint's ops at the forward op's location get one of their own
    // (".grad"): the search tells a forward op from its adjoint by name,
    // location and type, and diagnostics say which one they mean.
    Location gradLoc = part(op->getLoc(), "grad");
    for (Operation *adjoint = marker->getNextNode(); adjoint != returnOp;
         adjoint = adjoint->getNextNode())
      if (adjoint->getLoc() == op->getLoc())
        adjoint->setLoc(gradLoc);
  }
  // The sums of a value's gradient contributions are emitted with the
  // adjoints of its readers (each reader after the first the sweep visits
  // adds its own), but belong to the value's producer (its adjoint reads
  // the sum): tagged with a reader, they would join the readers (an
  // Inception block's branches, a residual's two paths) in the search's
  // graph where the forward program has no edge. The sums of a weight's
  // gradient belong to no forward op.
  for (auto &[value, ops] : adjoints.sumOps()) {
    IntegerAttr id = idOf.lookup(value.getDefiningOp());
    for (Operation *sum : ops) {
      if (id)
        sum->setAttr(dist::kVjpOfAttr, id);
      else
        sum->removeAttr(dist::kVjpOfAttr);
    }
  }

  // State arguments, after the weights.
  SmallVector<Value> weights, grads;
  SmallVector<SmallVector<Value>> states;
  for (unsigned i : weightIdx) {
    Value weight = body.getArgument(i);
    weights.push_back(weight);
    auto cast = casts.find(weight);
    grads.push_back(
        adjoints.lookup(cast == casts.end() ? weight : cast->second));
  }
  auto weightName = [&](unsigned w) -> std::string {
    if (auto name =
            func.getArgAttrOfType<StringAttr>(weightIdx[w], "dist.name"))
      return name.str();
    return "arg" + std::to_string(weightIdx[w]);
  };
  SmallVector<std::pair<Type, std::string>> stateArgs;
  static constexpr StringLiteral suffixes[] = {".m", ".v"};
  for (unsigned w = 0; w < weights.size(); ++w)
    for (unsigned s = 0; s < hyper.stateCount(); ++s)
      stateArgs.push_back(
          {weights[w].getType(), weightName(w) + suffixes[s].str()});
  if (hyper.hasStep())
    stateArgs.push_back({RankedTensorType::get({}, outType.getElementType(),
                                               outType.getEncoding()),
                         "step"});
  for (auto &[type, name] : stateArgs) {
    unsigned index = func.getNumArguments();
    // Marked, so that memory reports count it apart from the weights.
    if (failed(func.insertArgument(
            index, type,
            b.getDictionaryAttr(
                {b.getNamedAttr("dist.name", b.getStringAttr(name)),
                 b.getNamedAttr("dist.optimizer_state", b.getUnitAttr())}),
            NameLoc::get(b.getStringAttr(name), loc))))
      return failure();
  }
  unsigned firstState = func.getNumArguments() - stateArgs.size();
  Value step =
      hyper.hasStep() ? body.getArgument(func.getNumArguments() - 1) : Value();

  // Updates, one per weight, tagged with the weight's first user's layer.
  SmallVector<Value> newWeights, newState;
  for (unsigned w = 0; w < weights.size(); ++w) {
    SmallVector<Value> state;
    for (unsigned s = 0; s < hyper.stateCount(); ++s)
      state.push_back(
          body.getArgument(firstState + w * hyper.stateCount() + s));
    if (!grads[w]) {
      // Like torch.optim, a weight without a gradient is left alone.
      newWeights.push_back(weights[w]);
      llvm::append_range(newState, state);
      continue;
    }
    int64_t layer = 0;
    if (auto attr =
            func.getArgAttrOfType<IntegerAttr>(weightIdx[w], "dist.layer"))
      layer = attr.getInt();
    else
      for (Operation *user : weights[w].getUsers())
        if (user->getBlock() == &body) {
          layer = layerOf(user);
          break;
        }
    marker = returnOp->getPrevNode();
    Value newWeight;
    buildUpdate(named(weightName(w) + ".update", weights[w].getLoc()),
                weights[w], grads[w], state, step, newWeight, newState);
    newWeights.push_back(newWeight);
    tagSince(marker, layer, "update");
  }
  if (step) {
    marker = returnOp->getPrevNode();
    Location loc = named("step.update", step.getLoc());
    auto type = cast<RankedTensorType>(step.getType());
    AffineMap scalarMap = AffineMap::get(0, 0, {}, ctx);
    Value init = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{}, type.getElementType(), type.getEncoding());
    newState.push_back(
        generic(loc, {step}, {scalarMap}, type, scalarMap, init, 0, {},
                [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
                  return arith::AddFOp::create(bb, l, a[0],
                                               cst(bb, l, a[0].getType(), 1));
                }));
    tagSince(marker, outputLayer, "update");
  }

  // Results: loss, weights, state.
  SmallVector<Value> results = {loss};
  llvm::append_range(results, newWeights);
  llvm::append_range(results, newState);
  SmallVector<DictionaryAttr> resultAttrs;
  auto nameAttr = [&](StringRef name) {
    return b.getDictionaryAttr(
        {b.getNamedAttr("dist.name", b.getStringAttr(name))});
  };
  resultAttrs.push_back(nameAttr("loss"));
  for (unsigned w = 0; w < weights.size(); ++w)
    resultAttrs.push_back(nameAttr(weightName(w)));
  for (auto &entry : stateArgs)
    resultAttrs.push_back(nameAttr(entry.second));
  returnOp->setOperands(results);
  func.setFunctionType(FunctionType::get(ctx, func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  func.setAllResultAttrs(resultAttrs);
  return success();
}

namespace {
struct DistAutodiffPass
    : public dist::impl::DistAutodiffPassBase<DistAutodiffPass> {
  using DistAutodiffPassBase::DistAutodiffPassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    if (!(lr > 0) || beta1 < 0 || beta1 >= 1 || beta2 < 0 || beta2 >= 1 ||
        !(eps >= 0) || !(weightDecay >= 0) || momentum < 0) {
      mlir::emitError(module.getLoc())
          << "dist-autodiff: need lr > 0, 0 <= beta1, beta2 < 1, eps >= 0, "
             "weight-decay >= 0 and momentum >= 0";
      return signalPassFailure();
    }
    Hyper hyper{optimizer, lr, momentum, beta1, beta2, eps, weightDecay};
    FloatType computeType;
    if (compute == dist::ComputePrecision::F16)
      computeType = Float16Type::get(&getContext());
    else if (compute == dist::ComputePrecision::BF16)
      computeType = BFloat16Type::get(&getContext());
    llvm::StringSet<> frozenNames, unmatched;
    for (const std::string &name : frozen) {
      frozenNames.insert(name);
      unmatched.insert(name);
    }
    bool any = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      any = true;
      StepBuilder builder(func, hyper, loss == dist::LossKind::CrossEntropy,
                          computeType, frozenNames, unmatched);
      if (failed(builder.run()))
        return signalPassFailure();
    }
    if (!unmatched.empty()) {
      mlir::emitError(module.getLoc())
          << "dist-autodiff: frozen=" << unmatched.begin()->getKey()
          << ": no argument has this dist.name";
      return signalPassFailure();
    }
    if (!any) {
      mlir::emitError(module.getLoc())
          << "dist-autodiff: the module has no function with a body";
      return signalPassFailure();
    }
  }
};
} // namespace
