//===- AutodiffRules.cpp - Vector-Jacobian products of tensor ops ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// One rule covers every structured op. For a linalg op over iteration space
// I with inputs x_j read through maps m_j and result y written through m_y,
// the adjoint of x_i is a linalg.generic over the same I that reads dy
// through m_y and the forward inputs through their maps, writes through
// m_i, and reduces over every loop that m_i does not name (matmul's
// dA = dC B^T, a broadcast's sum, a reduction's broadcast, a transpose, a
// convolution's input and filter gradients all follow). Its body recomputes
// the forward body and applies the scalar derivative table. Ops that are
// not structured (reshapes, slices, pad) have small rules of their own;
// `linalg.matmul` keeps named matmuls in the backward pass (what the cost
// model and the tensor-parallel rules know best).
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SmallBitVector.h"

#include <limits>

using namespace mlir;
using namespace distir::autodiff;

Value distir::autodiff::createFilled(OpBuilder &b, Location loc,
                                     RankedTensorType type, double value) {
  Value empty = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  Value v = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), value));
  return linalg::FillOp::create(b, loc, ValueRange{v}, ValueRange{empty})
      .getResult(0);
}

Value distir::autodiff::createElementwise(
    OpBuilder &b, Location loc, ValueRange ins, RankedTensorType type,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value init = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  SmallVector<AffineMap> maps(ins.size() + 1,
                              b.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iters(type.getRank(),
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ins, ValueRange{init}, maps, iters,
             [&](OpBuilder &bb, Location l, ValueRange args) {
               linalg::YieldOp::create(bb, l, body(bb, l, args));
             })
      .getResult(0);
}

void AdjointEmitter::accumulate(Value v, Value grad) {
  Value &slot = adjoints[v];
  if (!slot) {
    slot = grad;
    return;
  }
  slot = createElementwise(
      b, grad.getLoc(), {slot, grad}, cast<RankedTensorType>(v.getType()),
      [](OpBuilder &bb, Location l, ValueRange args) -> Value {
        return arith::AddFOp::create(bb, l, args[0], args[1]);
      });
  auto sum = cast<linalg::GenericOp>(slot.getDefiningOp());
  SmallVector<Operation *> &ops = sumOpsOf[v];
  if (auto init = sum.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
    ops.push_back(init);
  ops.push_back(sum);
}

Value AdjointEmitter::transpose(Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  Value init = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{t.getDimSize(1), t.getDimSize(0)},
      t.getElementType(), t.getEncoding());
  return linalg::TransposeOp::create(b, loc, x, init, ArrayRef<int64_t>{1, 0})
      .getResult()[0];
}

Value AdjointEmitter::matmul(Location loc, Value x, Value y) {
  auto tx = cast<RankedTensorType>(x.getType());
  auto ty = cast<RankedTensorType>(y.getType());
  auto type = RankedTensorType::get({tx.getDimSize(0), ty.getDimSize(1)},
                                    tx.getElementType(), tx.getEncoding());
  Value init = filled(loc, type, 0);
  return linalg::MatmulOp::create(b, loc, TypeRange{type}, ValueRange{x, y},
                                  ValueRange{init})
      .getResult(0);
}

LogicalResult AdjointEmitter::emit(Operation *op) {
  if (llvm::none_of(op->getResults(),
                    [&](Value r) { return static_cast<bool>(lookup(r)); }))
    return success();
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
    if (!matmul.hasUserDefinedMaps() &&
        llvm::all_equal({getElementTypeOrSelf(matmul.getInputs()[0]),
                         getElementTypeOrSelf(matmul.getInputs()[1]),
                         getElementTypeOrSelf(matmul.getResult(0))}))
      return emitMatmul(op);
  if (isa<linalg::SoftmaxOp>(op))
    return emitSoftmax(op);
  if (isa<linalg::LinalgOp>(op))
    return emitStructured(op);
  return emitTensorOp(op);
}

LogicalResult AdjointEmitter::emitMatmul(Operation *op) {
  auto mm = cast<linalg::MatmulOp>(op);
  Location loc = op->getLoc();
  Value a = mm.getInputs()[0], w = mm.getInputs()[1], init = mm.getOutputs()[0];
  Value dc = lookup(mm.getResult(0));
  // B given as W^T (the importer's Linear and Gemm transB): dA = dC W, and
  // W's gradient comes straight from dW = dC^T A in W's layout. One
  // weight-sized buffer then accumulates the gradient over microbatches
  // (Megatron's main_grad), not one for dW^T and another for its
  // transpose.
  Value wT;
  if (auto t = w.getDefiningOp<linalg::TransposeOp>();
      t && t.getPermutation() == ArrayRef<int64_t>{1, 0} && w.hasOneUse())
    wT = t.getInput();
  // Each transpose gets a location of its own: a weight's transpose is
  // made once and shared by every microbatch, an activation's per
  // microbatch, and the search tells them apart by location and type.
  auto named = [&](StringRef name) {
    return NameLoc::get(b.getStringAttr(name), loc);
  };
  if (isActive(a))
    accumulate(a, matmul(loc, dc, wT ? wT : transpose(named("B^T"), w)));
  if (wT && isActive(wT))
    accumulate(wT, matmul(loc, transpose(named("dC^T"), dc), a));
  else if (isActive(w))
    accumulate(w, matmul(loc, transpose(named("A^T"), a), dc));
  // The body adds into the init.
  if (isActive(init))
    accumulate(init, dc);
  return success();
}

LogicalResult AdjointEmitter::emitSoftmax(Operation *op) {
  // y = softmax(x) along d: dx = y * (dy - sum_d(dy * y)).
  auto softmax = cast<linalg::SoftmaxOp>(op);
  Value x = softmax.getInput();
  if (!isActive(x))
    return success();
  Location loc = op->getLoc();
  Value y = softmax.getResult()[0], dy = lookup(y);
  auto type = cast<RankedTensorType>(y.getType());
  int64_t rank = type.getRank(), dim = softmax.getDimension();
  SmallVector<int64_t> reducedShape(type.getShape());
  reducedShape.erase(reducedShape.begin() + dim);
  auto reducedType = RankedTensorType::get(reducedShape, type.getElementType(),
                                           type.getEncoding());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap reduced = id.dropResult(dim);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  SmallVector<utils::IteratorType> reduceIters = iters;
  reduceIters[dim] = utils::IteratorType::reduction;
  Value sum = linalg::GenericOp::create(
                  b, loc, TypeRange{reducedType}, ValueRange{dy, y},
                  ValueRange{filled(loc, reducedType, 0)},
                  ArrayRef<AffineMap>{id, id, reduced}, reduceIters,
                  [&](OpBuilder &bb, Location l, ValueRange args) {
                    Value p = arith::MulFOp::create(bb, l, args[0], args[1]);
                    linalg::YieldOp::create(
                        bb, l, Value(arith::AddFOp::create(bb, l, args[2], p)));
                  })
                  .getResult(0);
  Value init = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  Value dx =
      linalg::GenericOp::create(
          b, loc, TypeRange{type}, ValueRange{dy, y, sum}, ValueRange{init},
          ArrayRef<AffineMap>{id, id, reduced, id}, iters,
          [&](OpBuilder &bb, Location l, ValueRange args) {
            Value d = arith::SubFOp::create(bb, l, args[0], args[2]);
            linalg::YieldOp::create(
                bb, l, Value(arith::MulFOp::create(bb, l, args[1], d)));
          })
          .getResult(0);
  accumulate(x, dx);
  return success();
}

/// Reverse sweep over the recomputed body ops `clones`, from the adjoints
/// seeded in `adjoints`. Returns the first op without a derivative, if any.
static std::optional<OperationName>
reverseBody(OpBuilder &b, ArrayRef<Operation *> clones,
            DenseMap<Value, Value> &adjoints) {
  std::optional<OperationName> unknown;
  for (Operation *clone : llvm::reverse(clones)) {
    if (clone->getNumResults() != 1)
      continue;
    if (Value grad = adjoints.lookup(clone->getResult(0)))
      if (failed(addScalarAdjoints(b, clone, grad, adjoints)) && !unknown)
        unknown = clone->getName();
  }
  return unknown;
}

/// The error for a body op without a derivative, on the linalg op (which
/// carries the model's location).
static LogicalResult noDerivative(Operation *op, OperationName scalar) {
  return op->emitOpError()
         << "has no gradient rule: '" << scalar
         << "' in its body has no derivative (dist-autodiff differentiates "
            "add, sub, mul, div, neg, max, min, select, float casts, exp, "
            "log, sqrt, rsqrt, tanh, erf, sin, cos, abs, pow)";
}

/// Drops the recomputed forward values that the derivative does not read
/// from `op`'s body, then the inputs that the body no longer reads: an
/// adjoint must not keep forward activations alive for nothing.
static Value pruneInputs(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  for (Operation &nested : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&nested))
      nested.erase();
  // An input that the body does not read may still be the only operand
  // that bounds a loop (a pooling window): keep one per such loop.
  unsigned numLoops = op.getNumLoops();
  llvm::SmallBitVector bounded(numLoops);
  auto bound = [&](AffineMap map) {
    for (AffineExpr expr : map.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        bounded.set(dim.getPosition());
  };
  SmallVector<OpOperand *> inputs = op.getDpsInputOperands();
  llvm::SmallBitVector keep(inputs.size());
  for (auto [i, input] : llvm::enumerate(inputs))
    if (!op.getMatchingBlockArgument(input).use_empty()) {
      keep.set(i);
      bound(op.getMatchingIndexingMap(input));
    }
  for (OpOperand &init : op.getDpsInitsMutable())
    bound(op.getMatchingIndexingMap(&init));
  for (auto [i, input] : llvm::enumerate(inputs)) {
    if (keep.test(i))
      continue;
    llvm::SmallBitVector before = bounded;
    bound(op.getMatchingIndexingMap(input));
    if (bounded != before)
      keep.set(i);
  }
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  llvm::BitVector unused(body.getNumArguments());
  for (auto [i, input] : llvm::enumerate(inputs)) {
    if (!keep.test(i)) {
      unused.set(input->getOperandNumber());
      continue;
    }
    ins.push_back(input->get());
    maps.push_back(op.getMatchingIndexingMap(input));
  }
  if (unused.none())
    return op.getResult(0);
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));
  OpBuilder b(op);
  auto pruned = linalg::GenericOp::create(b, op.getLoc(), op->getResultTypes(),
                                          ins, op.getDpsInits(), maps,
                                          op.getIteratorTypesArray());
  pruned.getRegion().takeBody(op.getRegion());
  pruned.getRegion().front().eraseArguments(unused);
  op->replaceAllUsesWith(pruned);
  op->erase();
  return pruned.getResult(0);
}

namespace {
/// How a reduction body combines each point into the accumulator.
enum class Combine { None, Add, Max, Min };
} // namespace

LogicalResult AdjointEmitter::emitStructured(Operation *op) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (op->getNumResults() != 1 || linalgOp.getNumDpsInits() != 1)
    return op->emitOpError()
           << "has " << op->getNumResults()
           << " results: dist-autodiff differentiates single-result linalg "
              "ops";
  Location loc = op->getLoc();
  Value y = op->getResult(0), dy = lookup(y);
  Block *body = linalgOp.getBlock();
  Value root = body->getTerminator()->getOperand(0);
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  BlockArgument outArg = linalgOp.getMatchingBlockArgument(init);
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  AffineMap outMap = maps[init->getOperandNumber()];

  // A reduction body must be `out = combine(out, h(inputs))`.
  Combine combine = Combine::None;
  Operation *combineOp = nullptr;
  if (linalgOp.getNumReductionLoops() > 0) {
    combineOp = root.getDefiningOp();
    if (combineOp && combineOp->getBlock() == body &&
        combineOp->getNumOperands() == 2 && outArg.hasOneUse() &&
        llvm::is_contained(combineOp->getOperands(), Value(outArg))) {
      if (isa<arith::AddFOp>(combineOp))
        combine = Combine::Add;
      else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combineOp))
        combine = Combine::Max;
      else if (isa<arith::MinimumFOp, arith::MinNumFOp>(combineOp))
        combine = Combine::Min;
    }
    if (combine == Combine::None)
      return op->emitOpError()
             << "has no gradient rule: a reduction body must combine each "
                "point into the accumulator with arith.addf, maximumf or "
                "minimumf";
    root = combineOp->getOperand(0) == outArg ? combineOp->getOperand(1)
                                              : combineOp->getOperand(0);
  }
  bool readsInit =
      combine == Combine::None && linalgOp.payloadUsesValueFromOperand(init);

  // A tensor that the body reads directly with tensor.extract (a gather's
  // table, e.g. an embedding) gets a rule of its own; other reads of values
  // that depend on the weights have none.
  tensor::ExtractOp gather;
  WalkResult captured = body->walk([&](Operation *nested) {
    for (Value v : nested->getOperands()) {
      if (!isActive(v) || body->getParent()->isAncestor(v.getParentRegion()))
        continue;
      auto extract = dyn_cast<tensor::ExtractOp>(nested);
      if (!extract || gather || combine != Combine::None) {
        op->emitOpError()
            << "has no gradient rule for this read of a value that depends "
               "on the weights inside its body (supported: one "
               "tensor.extract in a body without reduction loops, a gather)";
        return WalkResult::interrupt();
      }
      gather = extract;
    }
    return WalkResult::advance();
  });
  if (captured.wasInterrupted())
    return failure();
  if (gather && failed(emitGather(op, gather)))
    return failure();

  // Forward operands that the adjoint bodies read: the inputs, the init if
  // a parallel body reads it.
  SmallVector<OpOperand *> forward;
  for (OpOperand *input : linalgOp.getDpsInputOperands())
    forward.push_back(input);
  if (readsInit)
    forward.push_back(init);
  if (combine == Combine::Add && isActive(init->get()))
    accumulate(init->get(), dy);
  else if (combine != Combine::None && isActive(init->get()))
    return op->emitOpError() << "has no gradient rule for a max/min "
                                "reduction into an init that depends on the "
                                "weights";

  unsigned numLoops = linalgOp.getNumLoops();
  // A max/min reduction passes the gradient to one point of each window,
  // the first (in loop order) that equals the result, as PyTorch's max
  // pooling does: `first` holds that point's linear index over the
  // reduction loops.
  bool selectsOne = combine == Combine::Max || combine == Combine::Min;
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  SmallVector<utils::IteratorType> kinds = linalgOp.getIteratorTypesArray();
  auto linearIndex = [&](OpBuilder &bb, Location l) -> Value {
    Value linear = arith::ConstantIntOp::create(bb, l, 0, 64);
    for (unsigned loop = 0; loop < numLoops; ++loop) {
      if (kinds[loop] != utils::IteratorType::reduction)
        continue;
      Value size = arith::ConstantIntOp::create(bb, l, ranges[loop], 64);
      Value index = arith::IndexCastOp::create(
          bb, l, bb.getI64Type(), linalg::IndexOp::create(bb, l, loop));
      linear = arith::AddIOp::create(
          bb, l, arith::MulIOp::create(bb, l, linear, size), index);
    }
    return linear;
  };
  Value first;
  if (selectsOne) {
    auto yType = cast<RankedTensorType>(y.getType());
    auto indexType = RankedTensorType::get(yType.getShape(), b.getI64Type(),
                                           yType.getEncoding());
    Value none = arith::ConstantIntOp::create(
        b, loc, std::numeric_limits<int64_t>::max(), 64);
    Value init =
        linalg::FillOp::create(
            b, loc, ValueRange{none},
            ValueRange{tensor::EmptyOp::create(
                b, loc, yType.getShape(), b.getI64Type(), yType.getEncoding())})
            .getResult(0);
    SmallVector<Value> ins;
    SmallVector<AffineMap> insMaps;
    for (OpOperand *input : linalgOp.getDpsInputOperands()) {
      ins.push_back(input->get());
      insMaps.push_back(maps[input->getOperandNumber()]);
    }
    ins.push_back(y);
    insMaps.push_back(outMap);
    insMaps.push_back(outMap);
    auto firstOp = linalg::GenericOp::create(
        b, loc, TypeRange{indexType}, ins, ValueRange{init}, insMaps, kinds,
        [&](OpBuilder &bb, Location l, ValueRange args) {
          IRMapping mapping;
          for (OpOperand *input : linalgOp.getDpsInputOperands())
            mapping.map(linalgOp.getMatchingBlockArgument(input),
                        args[input->getOperandNumber()]);
          for (Operation &nested : body->without_terminator())
            if (&nested != combineOp)
              bb.clone(nested, mapping);
          Value hit = arith::CmpFOp::create(bb, l, arith::CmpFPredicate::OEQ,
                                            mapping.lookupOrDefault(root),
                                            args[args.size() - 2]);
          Value candidate = arith::SelectOp::create(
              bb, l, hit, linearIndex(bb, l),
              arith::ConstantIntOp::create(
                  bb, l, std::numeric_limits<int64_t>::max(), 64));
          linalg::YieldOp::create(
              bb, l,
              Value(arith::MinSIOp::create(bb, l, args.back(), candidate)));
        });
    first = firstOp.getResult(0);
  }
  for (OpOperand *x : forward) {
    if (!isActive(x->get()))
      continue;
    auto xType = dyn_cast<RankedTensorType>(x->get().getType());
    if (!xType)
      return op->emitOpError()
             << "has no gradient rule for its scalar operand #"
             << x->getOperandNumber() << ", which depends on the weights";
    AffineMap xMap = maps[x->getOperandNumber()];
    // A loop is parallel in the adjoint when x's map names it alone in one
    // result (each point writes its own element); loops that x's map drops
    // or combines (a convolution's o + k) accumulate.
    llvm::SmallBitVector plain(numLoops), mixed(numLoops);
    for (AffineExpr expr : xMap.getResults()) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        if (plain.test(dim.getPosition()))
          mixed.set(dim.getPosition());
        plain.set(dim.getPosition());
        continue;
      }
      expr.walk([&](AffineExpr e) {
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          mixed.set(dim.getPosition());
      });
    }
    SmallVector<utils::IteratorType> iters;
    for (unsigned l = 0; l < numLoops; ++l)
      iters.push_back(plain.test(l) && !mixed.test(l)
                          ? utils::IteratorType::parallel
                          : utils::IteratorType::reduction);

    SmallVector<Value> ins = {dy};
    SmallVector<AffineMap> insMaps = {outMap};
    for (OpOperand *f : forward) {
      ins.push_back(f->get());
      insMaps.push_back(maps[f->getOperandNumber()]);
    }
    if (selectsOne) {
      ins.push_back(first);
      insMaps.push_back(outMap);
    }
    insMaps.push_back(xMap);
    Value zeros = filled(loc, xType, 0);

    bool reached = false;
    std::optional<OperationName> unknown;
    auto adjointOp = linalg::GenericOp::create(
        b, loc, TypeRange{xType}, ins, ValueRange{zeros}, insMaps, iters,
        [&](OpBuilder &bb, Location l, ValueRange args) {
          IRMapping mapping;
          for (auto [i, f] : llvm::enumerate(forward))
            mapping.map(linalgOp.getMatchingBlockArgument(f), args[1 + i]);
          SmallVector<Operation *> clones;
          for (Operation &nested : body->without_terminator())
            if (&nested != combineOp)
              clones.push_back(bb.clone(nested, mapping));
          Value g = args[0];
          Value rootClone = mapping.lookupOrDefault(root);
          if (selectsOne) {
            // The gradient goes to the point that holds the result.
            Value hit = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq,
                                              linearIndex(bb, l),
                                              args[1 + forward.size()]);
            Value zero = arith::ConstantOp::create(
                bb, l, bb.getFloatAttr(g.getType(), 0));
            g = arith::SelectOp::create(bb, l, hit, g, zero);
          }
          DenseMap<Value, Value> scalarAdjoints;
          scalarAdjoints[rootClone] = g;
          unknown = reverseBody(bb, clones, scalarAdjoints);
          Value target = mapping.lookup(linalgOp.getMatchingBlockArgument(x));
          Value acc = args.back();
          Value contribution = scalarAdjoints.lookup(target);
          reached = static_cast<bool>(contribution);
          Value sum = acc;
          if (contribution)
            sum = arith::AddFOp::create(bb, l, acc, contribution);
          linalg::YieldOp::create(bb, l, sum);
        });
    if (unknown)
      return noDerivative(op, *unknown);
    if (!reached) {
      adjointOp->erase();
      continue;
    }
    accumulate(x->get(), pruneInputs(adjointOp));
  }
  return success();
}

LogicalResult AdjointEmitter::emitGather(Operation *op,
                                         tensor::ExtractOp extract) {
  // dT[i(p)] += dy[p] * d(body)/d(T[i(p)]) over every point p of the op.
  // Dimensions of T indexed by a loop of the op reuse that loop; the others
  // (the gathered ones) get a loop of their own, and a point contributes
  // where that loop equals the gathered index: a one-hot product, as many
  // multiply-adds as a matmul with the table (a scatter-add would do one
  // per point of the op).
  auto linalgOp = cast<linalg::LinalgOp>(op);
  Location loc = op->getLoc();
  Value table = extract.getTensor();
  auto tableType = cast<RankedTensorType>(table.getType());
  Block *body = linalgOp.getBlock();
  Value y = op->getResult(0), dy = lookup(y);
  unsigned numLoops = linalgOp.getNumLoops();
  SmallVector<AffineExpr> tableExprs;
  SmallVector<std::pair<Value, unsigned>> gathered; // (index value, loop)
  unsigned extraLoops = 0;
  for (auto [k, index] : llvm::enumerate(extract.getIndices())) {
    if (auto loopIndex = index.getDefiningOp<linalg::IndexOp>()) {
      tableExprs.push_back(b.getAffineDimExpr(loopIndex.getDim()));
      continue;
    }
    unsigned loop = numLoops + extraLoops++;
    tableExprs.push_back(b.getAffineDimExpr(loop));
    gathered.push_back({index, loop});
  }
  // Loop ranges of the new loops come from a tensor of the table's shape
  // read through the table's map: the adjoint's init.
  unsigned total = numLoops + extraLoops;
  auto widen = [&](AffineMap map) {
    return AffineMap::get(total, 0, map.getResults(), b.getContext());
  };
  SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  SmallVector<Value> ins = {dy};
  SmallVector<AffineMap> insMaps = {widen(maps[init->getOperandNumber()])};
  SmallVector<OpOperand *> forward;
  for (OpOperand *input : linalgOp.getDpsInputOperands()) {
    forward.push_back(input);
    ins.push_back(input->get());
    insMaps.push_back(widen(maps[input->getOperandNumber()]));
  }
  bool readsInit = linalgOp.payloadUsesValueFromOperand(init);
  if (readsInit) {
    forward.push_back(init);
    ins.push_back(init->get());
    insMaps.push_back(widen(maps[init->getOperandNumber()]));
  }
  AffineMap tableMap = AffineMap::get(total, 0, tableExprs, b.getContext());
  insMaps.push_back(tableMap);
  llvm::SmallBitVector plain(total);
  for (AffineExpr e : tableExprs)
    plain.set(cast<AffineDimExpr>(e).getPosition());
  SmallVector<utils::IteratorType> iters;
  for (unsigned l = 0; l < total; ++l)
    iters.push_back(plain.test(l) ? utils::IteratorType::parallel
                                  : utils::IteratorType::reduction);
  std::optional<OperationName> unknown;
  bool reached = false;
  auto adjointOp = linalg::GenericOp::create(
      b, loc, TypeRange{tableType}, ins, ValueRange{filled(loc, tableType, 0)},
      insMaps, iters, [&](OpBuilder &bb, Location l, ValueRange args) {
        IRMapping mapping;
        for (auto [i, f] : llvm::enumerate(forward))
          mapping.map(linalgOp.getMatchingBlockArgument(f), args[1 + i]);
        SmallVector<Operation *> clones;
        for (Operation &nested : body->without_terminator())
          clones.push_back(bb.clone(nested, mapping));
        Value root = body->getTerminator()->getOperand(0);
        DenseMap<Value, Value> scalarAdjoints;
        scalarAdjoints[mapping.lookupOrDefault(root)] = args[0];
        unknown = reverseBody(bb, clones, scalarAdjoints);
        Value contribution =
            scalarAdjoints.lookup(mapping.lookup(extract.getResult()));
        Value acc = args.back();
        if (!contribution) {
          linalg::YieldOp::create(bb, l, acc);
          return;
        }
        reached = true;
        Value zero =
            arith::ConstantOp::create(bb, l, bb.getFloatAttr(acc.getType(), 0));
        for (auto [index, loop] : gathered) {
          Value hit = arith::CmpIOp::create(
              bb, l, arith::CmpIPredicate::eq, mapping.lookup(index),
              linalg::IndexOp::create(bb, l, loop));
          contribution =
              arith::SelectOp::create(bb, l, hit, contribution, zero);
        }
        linalg::YieldOp::create(
            bb, l, Value(arith::AddFOp::create(bb, l, acc, contribution)));
      });
  if (unknown)
    return noDerivative(op, *unknown);
  if (!reached) {
    adjointOp->erase();
    return success();
  }
  accumulate(table, pruneInputs(adjointOp));
  return success();
}

LogicalResult AdjointEmitter::emitTensorOp(Operation *op) {
  Location loc = op->getLoc();
  auto zerosOf = [&](Value v) {
    return filled(loc, cast<RankedTensorType>(v.getType()), 0);
  };
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    Value src = expand.getSrc();
    if (isActive(src))
      accumulate(src, tensor::CollapseShapeOp::create(
                          b, loc, src.getType(), lookup(expand.getResult()),
                          expand.getReassociationIndices()));
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    Value src = collapse.getSrc();
    if (isActive(src))
      accumulate(src, tensor::ExpandShapeOp::create(
                          b, loc, src.getType(), lookup(collapse.getResult()),
                          collapse.getReassociationIndices()));
    return success();
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    Value src = slice.getSource();
    if (isActive(src))
      accumulate(src, tensor::InsertSliceOp::create(
                          b, loc, lookup(slice.getResult()), zerosOf(src),
                          slice.getMixedOffsets(), slice.getMixedSizes(),
                          slice.getMixedStrides()));
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    Value dy = lookup(insert.getResult());
    Value src = insert.getSource(), dest = insert.getDest();
    if (isActive(src))
      accumulate(src, tensor::ExtractSliceOp::create(
                          b, loc, cast<RankedTensorType>(src.getType()), dy,
                          insert.getMixedOffsets(), insert.getMixedSizes(),
                          insert.getMixedStrides()));
    if (isActive(dest))
      accumulate(dest, tensor::InsertSliceOp::create(
                           b, loc, zerosOf(src), dy, insert.getMixedOffsets(),
                           insert.getMixedSizes(), insert.getMixedStrides()));
    return success();
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    Value src = pad.getSource();
    if (isActive(pad.getConstantPaddingValue()))
      return op->emitOpError() << "has no gradient rule for a padding value "
                                  "that depends on the weights";
    if (isActive(src)) {
      auto srcType = cast<RankedTensorType>(src.getType());
      SmallVector<OpFoldResult> sizes, strides;
      for (int64_t d : srcType.getShape()) {
        sizes.push_back(b.getIndexAttr(d));
        strides.push_back(b.getIndexAttr(1));
      }
      accumulate(src, tensor::ExtractSliceOp::create(
                          b, loc, srcType, lookup(pad.getResult()),
                          pad.getMixedLowPad(), sizes, strides));
    }
    return success();
  }
  return op->emitOpError()
         << "has no gradient rule (dist-autodiff differentiates linalg ops, "
            "tensor.expand_shape/collapse_shape/extract_slice/insert_slice/"
            "pad)";
}
