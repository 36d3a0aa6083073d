//===- PadDimension.cpp - Pad a dimension through a program ---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Megatron pads its vocabulary to a multiple of the tensor-parallel degree.
// Here the padding keeps the program's results: the dimension's class is
// found through the structured-op interface, an abstract interpretation
// proves that the padded positions never reach a real one, and the program
// is retyped in place (see PadDimension.h).
//
//===----------------------------------------------------------------------===//

#include "PadDimension.h"

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/EntryFunction.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTPADDIMENSIONPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir::dist;

namespace {

/// Gives the ops `to` the stage tags of `from` (none when `from` is null).
void copyTags(Operation *from, ArrayRef<Operation *> to) {
  for (Operation *op : to)
    copyStageTags(from, op);
}

/// What a value holds at its padded positions. `Real` is what the real
/// positions hold too (a value that does not vary along the padded loop:
/// an operand not indexed by it, a constant; as finite as the program's
/// own values are taken to be), `Finite` some finite value, `Index` the
/// padded loop's `linalg.index` (a position past the real size), and
/// `Acc + i` the accumulator of a reduction's init `i` (its real partial
/// result).
enum class Pad : uint8_t { Zero, NegInf, Real, Finite, Any, Index, Acc };

Pad accOf(unsigned init) {
  return static_cast<Pad>(static_cast<unsigned>(Pad::Acc) + init);
}
bool isAcc(Pad p) { return p >= Pad::Acc; }
/// Inits a reduction may have (the accumulators' states must fit).
constexpr unsigned kMaxInits = 200;

bool isFiniteLike(Pad p) {
  return p == Pad::Zero || p == Pad::Real || p == Pad::Finite;
}

Pad join(Pad a, Pad b) {
  if (a == b)
    return a;
  if (isFiniteLike(a) && isFiniteLike(b))
    return Pad::Finite;
  return Pad::Any;
}

Pad stateOfConstant(Attribute value) {
  if (auto f = dyn_cast<FloatAttr>(value)) {
    const APFloat &v = f.getValue();
    if (v.isZero())
      return Pad::Zero;
    if (v.isInfinity() && v.isNegative())
      return Pad::NegInf;
    return v.isFinite() ? Pad::Real : Pad::Any;
  }
  if (auto i = dyn_cast<IntegerAttr>(value))
    return i.getValue().isZero() ? Pad::Zero : Pad::Real;
  if (auto splat = dyn_cast<SplatElementsAttr>(value))
    return stateOfConstant(splat.getSplatValue<Attribute>());
  return Pad::Any;
}

/// The state of a scalar op of a structured op's body whose operands hold
/// `in`; `loop` is the padded loop (for linalg.index), `oldSize` its real
/// size.
Pad evalScalar(Operation &op, ArrayRef<Pad> in, int64_t loop, int64_t oldSize) {
  if (op.getNumRegions() || op.getNumResults() != 1)
    return Pad::Any;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return stateOfConstant(constant.getValue());
  if (auto index = dyn_cast<linalg::IndexOp>(op))
    return static_cast<int64_t>(index.getDim()) == loop ? Pad::Index
                                                        : Pad::Real;
  // The same computation as at the real positions.
  if (!in.empty() && llvm::all_of(in, [](Pad p) { return p == Pad::Real; }))
    return Pad::Real;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return isAcc(in[0]) ? Pad::Any : in[0];
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    // A padded index equals no index in range: the real size bounds every
    // index the program compares it with (as a gather's indices); a
    // constant past it would match.
    if (cmp.getPredicate() == arith::CmpIPredicate::eq &&
        (in[0] == Pad::Index) != (in[1] == Pad::Index)) {
      Value other = op.getOperand(in[0] == Pad::Index ? 1 : 0);
      auto constant = other.getDefiningOp<arith::ConstantOp>();
      auto value =
          constant ? dyn_cast<IntegerAttr>(constant.getValue()) : nullptr;
      if (!value || value.getValue().getSExtValue() < oldSize)
        return Pad::Zero;
    }
    return Pad::Finite;
  }
  if (isa<arith::CmpFOp>(op))
    return Pad::Finite;
  if (isa<arith::SelectOp>(op)) {
    if (in[0] == Pad::Zero)
      return in[2];
    Pad p = join(in[1], in[2]);
    // Real choices under a condition that varies: some finite value.
    return p == Pad::Real && in[0] != Pad::Real ? Pad::Finite : p;
  }
  // Numbers from here on: an index or a real value is some finite number.
  SmallVector<Pad> v(in);
  for (Pad &p : v)
    if (p == Pad::Index || p == Pad::Real)
      p = Pad::Finite;
  if (llvm::any_of(v, isAcc) &&
      !isa<arith::AddFOp, arith::AddIOp, arith::SubFOp, arith::SubIOp,
           arith::MaximumFOp, arith::MaxNumFOp>(op))
    return Pad::Any; // (casts of an accumulator need not round-trip)
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::ExtSIOp, arith::ExtUIOp,
          arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp, arith::TruncIOp>(
          op))
    return isFiniteLike(v[0]) || v[0] == Pad::NegInf ? v[0] : Pad::Any;
  if (isa<arith::AddFOp, arith::AddIOp>(op)) {
    if (v[0] == Pad::Zero)
      return in[1];
    if (v[1] == Pad::Zero)
      return in[0];
    for (int i = 0; i < 2; ++i)
      if (v[i] == Pad::NegInf &&
          (v[1 - i] == Pad::Finite || v[1 - i] == Pad::NegInf))
        return Pad::NegInf;
    return v[0] == Pad::Finite && v[1] == Pad::Finite ? Pad::Finite : Pad::Any;
  }
  if (isa<arith::SubFOp, arith::SubIOp>(op)) {
    if (v[1] == Pad::Zero)
      return in[0];
    if (v[0] == Pad::NegInf && v[1] == Pad::Finite)
      return Pad::NegInf;
    return isFiniteLike(v[0]) && v[1] == Pad::Finite ? Pad::Finite : Pad::Any;
  }
  if (isa<arith::MulFOp, arith::MulIOp>(op)) {
    if ((v[0] == Pad::Zero && isFiniteLike(v[1])) ||
        (v[1] == Pad::Zero && isFiniteLike(v[0])))
      return Pad::Zero;
    return v[0] == Pad::Finite && v[1] == Pad::Finite ? Pad::Finite : Pad::Any;
  }
  if (isa<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(op)) {
    // Only by what the real positions divide by: any other divisor may be
    // zero.
    if (in[1] != Pad::Real)
      return Pad::Any;
    return isFiniteLike(v[0]) ? v[0] : Pad::Any;
  }
  if (isa<arith::NegFOp>(op))
    return isFiniteLike(v[0]) ? v[0] : Pad::Any;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op)) {
    if (v[0] == Pad::NegInf)
      return v[1];
    if (v[1] == Pad::NegInf)
      return v[0];
    return isFiniteLike(v[0]) && isFiniteLike(v[1]) ? join(v[0], v[1])
                                                    : Pad::Any;
  }
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op)) {
    for (int i = 0; i < 2; ++i)
      if (v[i] == Pad::NegInf &&
          (isFiniteLike(v[1 - i]) || v[1 - i] == Pad::NegInf))
        return Pad::NegInf;
    return isFiniteLike(v[0]) && isFiniteLike(v[1]) ? join(v[0], v[1])
                                                    : Pad::Any;
  }
  if (isa<math::ExpOp>(op))
    return v[0] == Pad::NegInf  ? Pad::Zero
           : isFiniteLike(v[0]) ? Pad::Finite
                                : Pad::Any;
  // Logarithms and roots of some finite value may be NaN.
  if (isa<math::LogOp>(op))
    return v[0] == Pad::Zero ? Pad::NegInf : Pad::Any;
  if (isa<math::SqrtOp>(op))
    return v[0] == Pad::Zero ? Pad::Zero : Pad::Any;
  // f(0) = 0, finite for finite inputs.
  if (isa<math::TanhOp, math::ErfOp, math::SinOp, math::AbsFOp, math::FloorOp,
          math::CeilOp, math::RoundOp>(op))
    return isFiniteLike(v[0]) ? v[0] : Pad::Any;
  if (isa<math::CosOp>(op))
    return isFiniteLike(v[0]) ? Pad::Finite : Pad::Any;
  return Pad::Any;
}

/// The states a structured op's body yields, its arguments holding `args`.
SmallVector<Pad> evalBody(Block &body, ArrayRef<Pad> args, int64_t loop,
                          int64_t oldSize) {
  DenseMap<Value, Pad> state;
  for (auto [arg, p] : llvm::zip(body.getArguments(), args))
    state[arg] = p;
  auto get = [&](Value v) {
    auto it = state.find(v);
    if (it != state.end())
      return it->second;
    // A value from outside the body: a constant, or some real value.
    if (auto constant = v.getDefiningOp<arith::ConstantOp>())
      return stateOfConstant(constant.getValue());
    return Pad::Real;
  };
  for (Operation &op : body.without_terminator()) {
    SmallVector<Pad> in;
    for (Value operand : op.getOperands())
      in.push_back(get(operand));
    Pad result = evalScalar(op, in, loop, oldSize);
    for (Value r : op.getResults())
      state[r] = result;
  }
  SmallVector<Pad> yielded;
  for (Value v : body.getTerminator()->getOperands())
    yielded.push_back(get(v));
  return yielded;
}

class DimensionPadder {
public:
  DimensionPadder(func::FuncOp func, int64_t oldSize, int64_t size,
                  bool zeroResults)
      : func(func), oldSize(oldSize), size(size), zeroResults(zeroResults) {}

  LogicalResult discover(Value start, int64_t dim);
  LogicalResult check();
  void apply();
  DimensionPadding summary();

  std::string why;
  Operation *failedOp = nullptr;

private:
  LogicalResult fail(Operation *op, const Twine &reason) {
    why =
        (op ? "'" + op->getName().getStringRef().str() + "' " : std::string()) +
        reason.str();
    failedOp = op;
    return failure();
  }
  LogicalResult add(Value v, int64_t d, Operation *at);
  LogicalResult visit(Operation *op);
  LogicalResult joinReshape(Operation *op, Value collapsed, Value expanded,
                            ArrayRef<ReassociationIndices> groups);
  LogicalResult evaluate(OpOperand *&toMask);
  LogicalResult evaluateStructured(linalg::LinalgOp op, OpOperand *&toMask);
  Pad operandState(OpOperand &o) const;
  Pad stateOf(Value v) const;
  RankedTensorType padded(Value v) const {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dimOf.lookup(v)] = size;
    return RankedTensorType::get(shape, type.getElementType(),
                                 type.getEncoding());
  }
  Value insertMask(Value v, OpBuilder &b);

  func::FuncOp func;
  int64_t oldSize, size;
  DenseMap<Value, int64_t> dimOf;
  DenseMap<Operation *, int64_t> loopOf;
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> worklist;
  DenseMap<Value, Pad> state;
  /// Operands that read their value with -inf at the padded positions.
  llvm::SetVector<OpOperand *> maskedUses;
  bool zeroResults;
};

LogicalResult DimensionPadder::add(Value v, int64_t d, Operation *at) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || d >= type.getRank() || type.getDimSize(d) != oldSize)
    return fail(at, "ties the padded dimension (" + Twine(oldSize) +
                        ") to a dimension of another size");
  auto [it, inserted] = dimOf.try_emplace(v, d);
  if (!inserted && it->second != d)
    return fail(at, "ties the padded dimension to two dimensions of one "
                    "value");
  if (inserted)
    worklist.push_back(v);
  return success();
}

LogicalResult
DimensionPadder::joinReshape(Operation *op, Value collapsed, Value expanded,
                             ArrayRef<ReassociationIndices> groups) {
  auto expandedType = cast<RankedTensorType>(expanded.getType());
  // The padded dimension must stay one dimension (with unit ones).
  auto alone = [&](const ReassociationIndices &group) -> int64_t {
    int64_t found = -1;
    for (int64_t d : group)
      if (expandedType.getDimSize(d) != 1) {
        if (found >= 0)
          return -1;
        found = d;
      }
    return found;
  };
  if (auto it = dimOf.find(collapsed); it != dimOf.end()) {
    int64_t d = alone(groups[it->second]);
    if (d < 0)
      return fail(op, "merges the padded dimension with another");
    if (failed(add(expanded, d, op)))
      return failure();
  }
  if (auto it = dimOf.find(expanded); it != dimOf.end()) {
    for (auto [c, group] : llvm::enumerate(groups))
      if (llvm::is_contained(group, it->second)) {
        if (alone(group) != it->second)
          return fail(op, "merges the padded dimension with another");
        if (failed(add(collapsed, c, op)))
          return failure();
      }
  }
  return success();
}

/// Whether `v`, computed in a structured op's body, depends on a loop index.
static bool dependsOnLoopIndex(Value v) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<linalg::IndexOp>(def))
      return true;
    llvm::append_range(work, def->getOperands());
  }
  return false;
}

LogicalResult DimensionPadder::visit(Operation *op) {
  // A lookup reading a table by index (an embedding: `tensor.extract` in a
  // structured op's body at a row computed from data, not from a loop)
  // reads one of the old rows: valid indices lie in them, as an ONNX
  // Gather's must. Nothing else changes (a tied LM head's vocabulary).
  if (auto extract = dyn_cast<tensor::ExtractOp>(op);
      extract && isa<linalg::LinalgOp>(op->getParentOp()) &&
      op->getParentOp()->getBlock() == &func.getBody().front()) {
    auto it = dimOf.find(extract.getTensor());
    if (it != dimOf.end() &&
        !dependsOnLoopIndex(extract.getIndices()[it->second]))
      return success();
  }
  if (op->getBlock() != &func.getBody().front())
    return fail(op, "reads the padded dimension inside another op's region "
                    "(no padding rule for it)");
  if (isa<func::ReturnOp>(op))
    return success();
  ops.insert(op);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    std::optional<int64_t> loop;
    auto loopOfOperand = [&](OpOperand &o, int64_t d) -> LogicalResult {
      AffineMap map = linalgOp.getMatchingIndexingMap(&o);
      auto e = dyn_cast<AffineDimExpr>(map.getResult(d));
      if (!e)
        return fail(op, "indexes the padded dimension by an expression");
      if (loop && *loop != static_cast<int64_t>(e.getPosition()))
        return fail(op, "reads the padded dimension in two loops");
      loop = e.getPosition();
      return success();
    };
    for (OpOperand &o : op->getOpOperands())
      if (auto it = dimOf.find(o.get()); it != dimOf.end())
        if (failed(loopOfOperand(o, it->second)))
          return failure();
    for (OpResult r : op->getResults())
      if (auto it = dimOf.find(r); it != dimOf.end())
        if (failed(loopOfOperand(
                *linalgOp.getDpsInitOperand(r.getResultNumber()), it->second)))
          return failure();
    if (!loop)
      return success();
    loopOf[op] = *loop;
    auto positionOf = [&](OpOperand &o) -> FailureOr<int64_t> {
      AffineMap map = linalgOp.getMatchingIndexingMap(&o);
      int64_t found = -1;
      for (auto [i, e] : llvm::enumerate(map.getResults())) {
        if (auto d = dyn_cast<AffineDimExpr>(e);
            d && static_cast<int64_t>(d.getPosition()) == *loop) {
          if (found >= 0)
            return fail(op, "indexes the padded dimension twice");
          found = i;
        } else if (e.isFunctionOfDim(*loop)) {
          return fail(op, "indexes the padded dimension by an expression");
        }
      }
      return found;
    };
    for (OpOperand &o : op->getOpOperands()) {
      if (isa<BaseMemRefType>(o.get().getType()))
        return fail(op, "reads a buffer");
      if (!isa<RankedTensorType>(o.get().getType()))
        continue;
      FailureOr<int64_t> d = positionOf(o);
      if (failed(d))
        return failure();
      if (*d >= 0 && failed(add(o.get(), *d, op)))
        return failure();
    }
    for (OpResult r : op->getResults()) {
      FailureOr<int64_t> d =
          positionOf(*linalgOp.getDpsInitOperand(r.getResultNumber()));
      if (failed(d))
        return failure();
      if (*d >= 0 && failed(add(r, *d, op)))
        return failure();
    }
    return success();
  }
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    for (Value v : op->getOperands())
      if (auto it = dimOf.find(v); it != dimOf.end())
        for (Value w : {Value(softmax.getInput()), Value(softmax.getOutput()),
                        Value(softmax.getResult()[0])})
          if (failed(add(w, it->second, op)))
            return failure();
    if (auto it = dimOf.find(softmax.getResult()[0]); it != dimOf.end())
      for (Value w : {Value(softmax.getInput()), Value(softmax.getOutput())})
        if (failed(add(w, it->second, op)))
          return failure();
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return joinReshape(op, collapse.getResult(), collapse.getSrc(),
                       collapse.getReassociationIndices());
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return joinReshape(op, expand.getSrc(), expand.getResult(),
                       expand.getReassociationIndices());
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> toResult;
    int64_t next = 0;
    for (int64_t d = 0; d < slice.getSourceType().getRank(); ++d)
      toResult.push_back(dropped.test(d) ? -1 : next++);
    auto full = [&](int64_t d) {
      return slice.getStaticOffsets()[d] == 0 &&
             slice.getStaticSizes()[d] == oldSize &&
             slice.getStaticStrides()[d] == 1;
    };
    for (int64_t d = 0; d < static_cast<int64_t>(toResult.size()); ++d) {
      bool inSource = dimOf.lookup(slice.getSource()) == d &&
                      dimOf.count(slice.getSource());
      bool inResult = toResult[d] >= 0 && dimOf.count(slice.getResult()) &&
                      dimOf.lookup(slice.getResult()) == toResult[d];
      if (!inSource && !inResult)
        continue;
      if (!full(d) || toResult[d] < 0)
        return fail(op, "slices the padded dimension");
      if (failed(add(slice.getSource(), d, op)) ||
          failed(add(slice.getResult(), toResult[d], op)))
        return failure();
    }
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    if (insert.getSourceType().getRank() != insert.getDestType().getRank())
      return fail(op, "inserts a rank-reduced slice into the padded tensor");
    for (Value v : op->getOperands()) {
      auto it = dimOf.find(v);
      if (it == dimOf.end())
        continue;
      int64_t d = it->second;
      if (insert.getStaticOffsets()[d] != 0 ||
          insert.getStaticSizes()[d] != oldSize ||
          insert.getStaticStrides()[d] != 1)
        return fail(op, "inserts into part of the padded dimension");
      for (Value w : {Value(insert.getSource()), Value(insert.getDest()),
                      Value(insert.getResult())})
        if (failed(add(w, d, op)))
          return failure();
    }
    if (auto it = dimOf.find(insert.getResult()); it != dimOf.end())
      for (Value w : {Value(insert.getSource()), Value(insert.getDest())})
        if (failed(add(w, it->second, op)))
          return failure();
    return success();
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    for (Value v : {Value(pad.getSource()), Value(pad.getResult())})
      if (auto it = dimOf.find(v); it != dimOf.end()) {
        int64_t d = it->second;
        if (pad.getStaticLow()[d] != 0 || pad.getStaticHigh()[d] != 0)
          return fail(op, "pads the padded dimension");
        if (failed(add(pad.getSource(), d, op)) ||
            failed(add(pad.getResult(), d, op)))
          return failure();
      }
    return success();
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
    if (!empty.getDynamicSizes().empty())
      return fail(op, "has dynamic sizes");
    return success();
  }
  if (isa<arith::ConstantOp>(op))
    return success();
  return fail(op, "reads the padded dimension (no padding rule for it)");
}

LogicalResult DimensionPadder::discover(Value start, int64_t dim) {
  if (failed(add(start, dim, nullptr)))
    return failure();
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &func.getBody().front())
        return fail(arg.getOwner()->getParentOp(),
                    "carries the padded dimension in a block argument");
    } else if (failed(visit(v.getDefiningOp()))) {
      return failure();
    }
    // (A user may be an op inside a structured op's body: no rule.)
    for (Operation *user : v.getUsers())
      if (failed(visit(user)))
        return failure();
  }
  return success();
}

Pad DimensionPadder::stateOf(Value v) const {
  auto it = state.find(v);
  return it == state.end() ? Pad::Any : it->second;
}

Pad DimensionPadder::operandState(OpOperand &o) const {
  if (maskedUses.contains(&o))
    return Pad::NegInf;
  return stateOf(o.get());
}

LogicalResult DimensionPadder::evaluateStructured(linalg::LinalgOp op,
                                                  OpOperand *&toMask) {
  int64_t loop = loopOf.lookup(op);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool parallel = iterators[loop] == utils::IteratorType::parallel;
  Block &body = *op.getBlock();
  // A body that reads a tensor itself (a gather) could read past its end.
  for (Operation &inner : body)
    if (llvm::any_of(inner.getOperandTypes(), llvm::IsaPred<ShapedType>))
      return fail(op, "reads a tensor inside its body");
  if (op.getNumDpsInits() > static_cast<int64_t>(kMaxInits))
    return fail(op, "has too many outputs");
  unsigned numInputs = op.getNumDpsInputs();
  auto argsWith = [&](OpOperand *maskedInput) {
    SmallVector<Pad> args;
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value v = input->get();
      if (dimOf.count(v))
        args.push_back(input == maskedInput ? Pad::NegInf
                                            : operandState(*input));
      else if (auto c = v.getDefiningOp<arith::ConstantOp>();
               c && stateOfConstant(c.getValue()) != Pad::Any)
        args.push_back(stateOfConstant(c.getValue()));
      else
        args.push_back(Pad::Real); // not indexed by the padded loop
    }
    for (OpOperand &init : op.getDpsInitsMutable())
      args.push_back(parallel ? operandState(init)
                              : accOf(init.getOperandNumber() - numInputs));
    return args;
  };
  if (parallel) {
    for (OpOperand &init : op.getDpsInitsMutable())
      if (!dimOf.count(init.get()))
        return fail(op, "writes one element from every padded position");
    SmallVector<Pad> args = argsWith(nullptr);
    SmallVector<Pad> yielded = evalBody(body, args, loop, oldSize);
    // Reductions over other loops feed each yield back as the next step's
    // accumulator: iterate to a fixed point.
    if (llvm::is_contained(iterators, utils::IteratorType::reduction))
      for (bool changed = true; changed;) {
        changed = false;
        for (auto [i, p] : llvm::enumerate(yielded)) {
          Pad joined = join(args[numInputs + i], p);
          changed |= joined != args[numInputs + i];
          args[numInputs + i] = joined;
        }
        if (changed)
          yielded = evalBody(body, args, loop, oldSize);
      }
    for (auto [r, p] : llvm::zip(op->getResults(), yielded))
      state[r] = p;
    return success();
  }
  // A reduction over the padded loop: each padded step must leave every
  // accumulator as it is.
  auto keeps = [&](ArrayRef<Pad> yielded) {
    for (auto [i, p] : llvm::enumerate(yielded))
      if (p != accOf(i))
        return false;
    return true;
  };
  if (keeps(evalBody(body, argsWith(nullptr), loop, oldSize)))
    return success();
  // A maximum over padded zeros: -inf at the padded positions of one input
  // would keep it.
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value v = input->get();
    if (dimOf.count(v) && !maskedUses.contains(input) &&
        isFiniteLike(stateOf(v)) &&
        isa<FloatType>(getElementTypeOrSelf(v.getType())) &&
        keeps(evalBody(body, argsWith(input), loop, oldSize))) {
      toMask = input;
      return failure();
    }
  }
  return fail(op, "reduces over the padded dimension, and its padded "
                  "positions would change the result");
}

LogicalResult DimensionPadder::evaluate(OpOperand *&toMask) {
  state.clear();
  for (BlockArgument arg : func.getArguments())
    if (dimOf.count(arg))
      state[arg] = Pad::Zero;
  for (Operation &op : func.getBody().front()) {
    if (!ops.contains(&op))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      state[constant.getResult()] = splat ? stateOfConstant(splat) : Pad::Zero;
    } else if (isa<tensor::EmptyOp>(op)) {
      state[op.getResult(0)] = Pad::Any;
    } else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                   tensor::ExtractSliceOp>(op)) {
      state[op.getResult(0)] = operandState(op.getOpOperand(0));
    } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      state[insert.getResult()] = join(operandState(insert.getSourceMutable()),
                                       operandState(insert.getDestMutable()));
    } else if (auto pad = dyn_cast<tensor::PadOp>(op)) {
      Pad p = operandState(pad.getSourceMutable());
      if (!llvm::all_of(pad.getStaticLow(), [](int64_t x) { return x == 0; }) ||
          !llvm::all_of(pad.getStaticHigh(), [](int64_t x) { return x == 0; }))
        p = join(p, evalBody(pad.getRegion().front(), {}, -1, oldSize)[0]);
      state[pad.getResult()] = p;
    } else if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
      OpOperand &in = softmax.getInputMutable();
      Pad p = operandState(in);
      if (static_cast<int64_t>(softmax.getDimension()) ==
          dimOf.lookup(in.get())) {
        if (p != Pad::NegInf) {
          if (isFiniteLike(p)) {
            toMask = &in;
            return failure();
          }
          return fail(&op, "normalizes over the padded dimension, and its "
                           "padded inputs are not -inf");
        }
        p = Pad::Zero;
      } else {
        p = isFiniteLike(p) ? Pad::Finite : Pad::Any;
      }
      state[softmax.getResult()[0]] = p;
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (failed(evaluateStructured(linalgOp, toMask)))
        return failure();
    }
  }
  if (!zeroResults)
    return success();
  // Results returned padded are fed back as arguments (updated weights,
  // optimizer state): they must hold zeros where an argument would.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (OpOperand &o : ret->getOpOperands())
    if (dimOf.count(o.get()) && stateOf(o.get()) != Pad::Zero)
      return fail(nullptr, "result #" + Twine(o.getOperandNumber()) +
                               " would not hold zeros at its padded "
                               "positions");
  return success();
}

LogicalResult DimensionPadder::check() {
  // Masks for one use at a time, or for every use of a masked value (the
  // logits everywhere: their gradient is zero at the padded positions
  // too). Each restart masks one more use.
  std::string firstWhy;
  Operation *firstOp = nullptr;
  for (bool everyUse : {true, false}) {
    maskedUses.clear();
    for (;;) {
      OpOperand *toMask = nullptr;
      if (succeeded(evaluate(toMask)))
        return success();
      if (!toMask)
        break;
      if (!everyUse) {
        maskedUses.insert(toMask);
        continue;
      }
      for (OpOperand &use : toMask->get().getUses())
        if (!isa<func::ReturnOp>(use.getOwner()))
          maskedUses.insert(&use);
    }
    if (firstWhy.empty()) {
      firstWhy = why;
      firstOp = failedOp;
    }
  }
  why = firstWhy;
  failedOp = firstOp;
  return failure();
}

Value DimensionPadder::insertMask(Value v, OpBuilder &b) {
  auto type = cast<RankedTensorType>(v.getType());
  Location loc = v.getLoc();
  // (Masked values are op results: arguments are masked through their pad.)
  Operation *tagsFrom = v.getDefiningOp();
  int64_t rank = type.getRank(), dim = dimOf.lookup(v);
  Value empty = tensor::EmptyOp::create(
      b, loc, type.getShape(), type.getElementType(), type.getEncoding());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto floatType = cast<FloatType>(type.getElementType());
  int64_t limit = oldSize;
  auto mask = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{v}, ValueRange{empty},
      ArrayRef<AffineMap>{identity, identity}, iterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value i = linalg::IndexOp::create(nb, l, dim);
        Value bound = arith::ConstantIndexOp::create(nb, l, limit);
        Value real =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, i, bound);
        Value negInf = arith::ConstantOp::create(
            nb, l,
            nb.getFloatAttr(floatType,
                            APFloat::getInf(floatType.getFloatSemantics(),
                                            /*Negative=*/true)));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, real, args[0], negInf)});
      });
  copyTags(tagsFrom, {empty.getDefiningOp(), mask.getOperation()});
  return mask.getResult(0);
}

void DimensionPadder::apply() {
  Block &entry = func.getBody().front();
  OpBuilder b(func.getContext());
  // Arguments: padded with zeros on entry.
  for (BlockArgument arg : func.getArguments()) {
    if (!dimOf.count(arg))
      continue;
    // Tags of its first reader in program order (a forward op).
    Operation *firstUser = nullptr;
    for (Operation *user : arg.getUsers()) {
      Operation *top = entry.findAncestorOpInBlock(*user);
      if (!firstUser || top->isBeforeInBlock(firstUser))
        firstUser = top;
    }
    b.setInsertionPointToStart(&entry);
    auto type = cast<RankedTensorType>(arg.getType());
    Location loc = arg.getLoc();
    Value zero =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
    Value pad = tensor::createPadHighOp(padded(arg), arg, zero,
                                        /*nofold=*/false, loc, b);
    // (An unused argument has no reader: nothing reads its pad either.)
    copyTags(firstUser, {zero.getDefiningOp(), pad.getDefiningOp()});
    arg.replaceAllUsesExcept(pad, pad.getDefiningOp());
    dimOf[pad] = dimOf.lookup(arg);
  }
  // Op results: retyped in place (shapes are static, so every op's loop
  // ranges follow its operands).
  for (Operation *op : ops) {
    for (Value r : op->getResults()) {
      if (!dimOf.count(r))
        continue;
      RankedTensorType type = padded(r);
      if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
        b.setInsertionPointAfter(op);
        Value replacement;
        if (auto splat = dyn_cast<SplatElementsAttr>(constant.getValue())) {
          replacement = arith::ConstantOp::create(
              b, op->getLoc(), type,
              SplatElementsAttr::get(type, splat.getSplatValue<Attribute>()));
        } else {
          Value zero = arith::ConstantOp::create(
              b, op->getLoc(), b.getZeroAttr(type.getElementType()));
          replacement =
              tensor::createPadHighOp(type, r, zero,
                                      /*nofold=*/false, op->getLoc(), b);
        }
        SmallVector<Operation *> created{replacement.getDefiningOp()};
        if (auto pad = replacement.getDefiningOp<tensor::PadOp>())
          created.push_back(pad.getConstantPaddingValue().getDefiningOp());
        copyTags(op, created);
        r.replaceAllUsesExcept(replacement, replacement.getDefiningOp());
        dimOf[replacement] = dimOf.lookup(r);
        continue;
      }
      r.setType(type);
    }
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      expand.setStaticOutputShape(expand.getResultType().getShape());
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
        slice && dimOf.count(slice.getSource())) {
      SmallVector<int64_t> sizes(slice.getStaticSizes());
      sizes[dimOf.lookup(slice.getSource())] = size;
      slice.setStaticSizes(sizes);
    }
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op);
        insert && dimOf.count(insert.getSource())) {
      SmallVector<int64_t> sizes(insert.getStaticSizes());
      sizes[dimOf.lookup(insert.getSource())] = size;
      insert.setStaticSizes(sizes);
    }
  }
  // Masks: one per masked value (its uses now read the padded value),
  // read by the uses that need -inf.
  llvm::MapVector<Value, SmallVector<OpOperand *>> masks;
  for (OpOperand *use : maskedUses)
    masks[use->get()].push_back(use);
  for (auto &[v, uses] : masks) {
    b.setInsertionPointAfterValue(v);
    Value mask = insertMask(v, b);
    for (OpOperand *use : uses)
      use->set(mask);
  }
  // Results: cut back to their size.
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  b.setInsertionPoint(ret);
  for (OpOperand &o : ret->getOpOperands()) {
    if (!dimOf.count(o.get()))
      continue;
    auto type = cast<RankedTensorType>(
        func.getFunctionType().getResult(o.getOperandNumber()));
    SmallVector<int64_t> zeros(type.getRank(), 0), ones(type.getRank(), 1);
    Value cut = tensor::ExtractSliceOp::create(
        b, ret.getLoc(), type, o.get(), ValueRange{}, ValueRange{},
        ValueRange{}, zeros, type.getShape(), ones);
    copyTags(o.get().getDefiningOp(), {cut.getDefiningOp()});
    o.set(cut);
  }
}

DimensionPadding DimensionPadder::summary() {
  DimensionPadding s;
  for (BlockArgument arg : func.getArguments())
    if (dimOf.count(arg))
      s.args.push_back(arg.getArgNumber());
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (OpOperand &o : ret->getOpOperands())
    if (dimOf.count(o.get()))
      s.results.push_back(o.getOperandNumber());
  s.values = static_cast<int64_t>(dimOf.size());
  DenseSet<Value> values;
  for (OpOperand *use : maskedUses)
    values.insert(use->get());
  s.masked = static_cast<int64_t>(values.size());
  return s;
}

} // namespace

FailureOr<DimensionPadding>
distir::dist::padDimension(func::FuncOp func, unsigned arg, int64_t dim,
                           int64_t size, bool apply, bool zeroResults,
                           std::string &why, Operation **failedOp) {
  if (func.isExternal() || !func.getBody().hasOneBlock()) {
    why = "the function has no single-block body";
    return failure();
  }
  auto type = dyn_cast<RankedTensorType>(func.getArgument(arg).getType());
  if (!type || dim < 0 || dim >= type.getRank() || type.isDynamicDim(dim)) {
    why = "argument #" + std::to_string(arg) + " has no static dimension " +
          std::to_string(dim);
    return failure();
  }
  int64_t oldSize = type.getDimSize(dim);
  if (size <= oldSize) {
    why = "the padded size " + std::to_string(size) +
          " does not exceed the dimension's size " + std::to_string(oldSize);
    return failure();
  }
  DimensionPadder padder(func, oldSize, size, zeroResults);
  if (failed(padder.discover(func.getArgument(arg), dim)) ||
      failed(padder.check())) {
    why = padder.why;
    if (failedOp)
      *failedOp = padder.failedOp;
    return failure();
  }
  // Summarize before the rewrite: results and arguments as they are now.
  DimensionPadding summary = padder.summary();
  if (apply) {
    padder.apply();
    if (failed(mlir::verify(func))) {
      why = "the padded function does not verify (a bug in the padding)";
      return failure();
    }
  }
  return summary;
}

namespace {

struct DistPadDimensionPass
    : public distir::dist::impl::DistPadDimensionPassBase<
          DistPadDimensionPass> {
  using DistPadDimensionPassBase::DistPadDimensionPassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    int64_t dim = this->dim, size = this->size, multiple = this->multiple;
    std::string arg = this->arg, entry = this->entry;
    auto fail = [&](const Twine &message) {
      mlir::emitError(module.getLoc()) << "dist-pad-dimension: " << message;
      signalPassFailure();
    };
    std::string entryError;
    func::FuncOp func =
        lookupEntryFunction(module, entry, "entry=NAME", entryError);
    if (!func)
      return fail(entryError);
    // The argument: by dist.name, else by number.
    std::optional<unsigned> number;
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto name = func.getArgAttrOfType<StringAttr>(i, "dist.name");
          name && name.getValue() == arg)
        number = i;
    unsigned parsed;
    if (!number && !StringRef(arg).getAsInteger(10, parsed) &&
        parsed < func.getNumArguments())
      number = parsed;
    if (!number)
      return fail("@" + func.getSymName() + " has no argument '" + arg +
                  "' (a dist.name or an argument number)");
    auto type = dyn_cast<RankedTensorType>(func.getArgument(*number).getType());
    if (!type || dim < 0 || dim >= type.getRank() || type.isDynamicDim(dim))
      return fail("argument '" + arg + "' has no static dimension " +
                  Twine(dim));
    int64_t target = size;
    if (target == 0) {
      if (multiple <= 0)
        return fail("give size=N or multiple=M");
      target = llvm::divideCeil(type.getDimSize(dim), multiple) * multiple;
      if (target == type.getDimSize(dim)) {
        if (report)
          mlir::emitRemark(func.getArgument(*number).getLoc())
              << "dist-pad-dimension: " << type.getDimSize(dim)
              << " is already a multiple of " << multiple;
        return;
      }
    }
    std::string why;
    Operation *failedOp = nullptr;
    FailureOr<DimensionPadding> padding =
        padDimension(func, *number, dim, target, /*apply=*/true,
                     /*zeroResults=*/false, why, &failedOp);
    if (failed(padding)) {
      mlir::emitError(failedOp ? failedOp->getLoc() : module.getLoc())
          << "dist-pad-dimension: cannot pad dimension " << dim << " of '"
          << arg << "' to " << target << ": " << why;
      return signalPassFailure();
    }
    if (report)
      mlir::emitRemark(func.getArgument(*number).getLoc())
          << "dist-pad-dimension: " << type.getDimSize(dim) << " -> " << target
          << " in " << padding->values << " values, " << padding->args.size()
          << " arguments padded, " << padding->results.size()
          << " results cut, " << padding->masked << " masked to -inf";
  }
};

} // namespace
