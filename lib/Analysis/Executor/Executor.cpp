//===- Executor.cpp - Reference executor of dist programs
//-------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The concrete domain of the program-order interpreter. Linalg structured
// ops are executed from their interface alone: the iteration domain
// (static loop ranges), one affine access per operand (indexing maps turned
// into per-loop strides), and the body compiled once into scalar
// instructions. So every named op, generic op and future structured op
// runs through one engine.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Executor.h"
#include "DistIR/Analysis/Interpreter.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace distir;
using namespace distir::detail;

//===----------------------------------------------------------------------===//
// RuntimeValue
//===----------------------------------------------------------------------===//

int64_t RuntimeValue::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

RuntimeValue RuntimeValue::tensor(Type elementType, ArrayRef<int64_t> shape) {
  RuntimeValue value;
  value.elementType = elementType;
  value.shape.assign(shape.begin(), shape.end());
  value.isTensor = true;
  value.data =
      std::make_shared<std::vector<double>>(value.getNumElements(), 0.0);
  return value;
}

RuntimeValue RuntimeValue::scalar(Type type, double v) {
  RuntimeValue value;
  value.elementType = type;
  value.data = std::make_shared<std::vector<double>>(1, v);
  return value;
}

static SmallVector<int64_t> getStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Calls `fn(index, flat)` for every multi-index of `shape`, in row-major
/// order.
template <typename Fn>
static void forEachIndex(ArrayRef<int64_t> shape, Fn fn) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  if (total == 0)
    return;
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    fn(ArrayRef<int64_t>(index), flat);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

namespace {

//===----------------------------------------------------------------------===//
// Structured-op engine
//===----------------------------------------------------------------------===//

/// flat element index = offset + sum(coeff[l] * loop[l]).
struct Access {
  SmallVector<int64_t> coeff;
  int64_t offset = 0;
};

/// Adds `scale` * `expr` to `coeff`/`offset`; fails on non-linear exprs.
static LogicalResult linearize(AffineExpr expr, int64_t scale,
                               SmallVectorImpl<int64_t> &coeff,
                               int64_t &offset) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
    coeff[dim.getPosition()] += scale;
    return success();
  }
  if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
    offset += scale * constant.getValue();
    return success();
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return failure();
  if (binary.getKind() == AffineExprKind::Add)
    return success(
        succeeded(linearize(binary.getLHS(), scale, coeff, offset)) &&
        succeeded(linearize(binary.getRHS(), scale, coeff, offset)));
  if (binary.getKind() == AffineExprKind::Mul) {
    if (auto c = dyn_cast<AffineConstantExpr>(binary.getRHS()))
      return linearize(binary.getLHS(), scale * c.getValue(), coeff, offset);
    if (auto c = dyn_cast<AffineConstantExpr>(binary.getLHS()))
      return linearize(binary.getRHS(), scale * c.getValue(), coeff, offset);
  }
  return failure();
}

static FailureOr<Access> planAccess(AffineMap map, ArrayRef<int64_t> shape) {
  Access access;
  access.coeff.assign(map.getNumDims(), 0);
  SmallVector<int64_t> strides = getStrides(shape);
  for (auto [r, expr] : llvm::enumerate(map.getResults()))
    if (failed(linearize(expr, strides[r], access.coeff, access.offset)))
      return failure();
  return access;
}

/// One instruction of a compiled body.
struct Instr {
  ScalarOp op;
  SmallVector<unsigned, 3> args;
  unsigned result;
  /// linalg.index: the loop whose index to load (-1 otherwise).
  int64_t indexDim = -1;
  /// tensor.extract from a tensor the body captures (e.g. a Gather's
  /// table): its elements and strides; `args` hold the indices.
  std::shared_ptr<std::vector<double>> table;
  SmallVector<int64_t, 4> tableShape;
};

/// A region body compiled to scalar instructions over numbered slots.
struct Body {
  std::vector<Instr> instrs;
  std::vector<double> slots;
  SmallVector<unsigned> yields;
  /// Set when a tensor.extract indexed outside its tensor.
  bool outOfBounds = false;
};

/// The body of a contraction, `yield(out + in0 * in1)`, run without
/// interpreting it: convolutions and matmuls spend nearly all of a run here.
/// Each product and sum is rounded as the interpreted body would round it.
struct MultiplyAccumulate {
  Rounding product, sum;

  /// The kernel for `body` when it is `yield(out + in0 * in1)` with the sum
  /// of the output's element type `outType` (so storing rounds no further).
  static std::optional<MultiplyAccumulate>
  match(const Body &body, unsigned numInputs, Type outType) {
    if (numInputs != 2 || body.yields.size() != 1 || body.instrs.size() != 2)
      return std::nullopt;
    const Instr &mul = body.instrs[0], &add = body.instrs[1];
    auto plain = [](const Instr &instr) {
      return instr.indexDim < 0 && !instr.table && instr.args.size() == 2;
    };
    if (!plain(mul) || !plain(add) || mul.op.kind != ScalarKind::MulF ||
        add.op.kind != ScalarKind::AddF || body.yields[0] != add.result ||
        add.op.resultType != outType)
      return std::nullopt;
    // Operands 0 and 1 multiplied (either order), the output (slot 2) added.
    auto isPair = [](ArrayRef<unsigned> args, unsigned a, unsigned b) {
      return (args[0] == a && args[1] == b) || (args[0] == b && args[1] == a);
    };
    if (!isPair(mul.args, 0, 1) || !isPair(add.args, 2, mul.result))
      return std::nullopt;
    return MultiplyAccumulate{mul.op.rounding, add.op.rounding};
  }

  /// Runs `n` points of the innermost loop from `offsets`, leaving them at
  /// the last point (as the odometer expects).
  void run(ArrayRef<std::vector<double> *> storage,
           MutableArrayRef<int64_t> offsets, const int64_t *step,
           int64_t n) const {
    const double *a = storage[0]->data(), *b = storage[1]->data();
    double *out = storage[2]->data();
    int64_t ia = offsets[0], ib = offsets[1], io = offsets[2];
    for (int64_t j = 0;; ++j) {
      out[io] = sum.apply(out[io] + product.apply(a[ia] * b[ib]));
      if (j + 1 == n)
        break;
      ia += step[0];
      ib += step[1];
      io += step[2];
    }
    offsets[0] = ia;
    offsets[1] = ib;
    offsets[2] = io;
  }
};

class Execution : public Interpreter<Execution, RuntimeValue> {
public:
  // Interpreter domain interface.
  LogicalResult visitOp(Operation *op, ArrayRef<RuntimeValue> operands,
                        SmallVectorImpl<RuntimeValue> &results);
  std::optional<int64_t> getConcreteInt(const RuntimeValue &value) {
    if (value.isTensor || !value.elementType.isIntOrIndex())
      return std::nullopt;
    return static_cast<int64_t>((*value.data)[0]);
  }
  RuntimeValue makeIndex(int64_t v) {
    return RuntimeValue::scalar(IndexType::get(context), v);
  }

  MLIRContext *context = nullptr;

private:
  /// Compiles `block` (arguments first, then captured scalars, then one slot
  /// per op). `extraArgs` are block arguments filled by the caller.
  FailureOr<Body> compileBody(Block &block);
  void runBody(Body &body, ArrayRef<int64_t> loopIndex);

  LogicalResult runStructured(linalg::LinalgOp op,
                              ArrayRef<RuntimeValue> operands,
                              SmallVectorImpl<RuntimeValue> &results);
  LogicalResult runElementwise(Operation *op, ArrayRef<RuntimeValue> operands,
                               SmallVectorImpl<RuntimeValue> &results);
  LogicalResult runTensorOp(Operation *op, ArrayRef<RuntimeValue> operands,
                            SmallVectorImpl<RuntimeValue> &results);
  LogicalResult runCommunication(Operation *op, ArrayRef<RuntimeValue> operands,
                                 SmallVectorImpl<RuntimeValue> &results);
};

} // namespace

FailureOr<Body> Execution::compileBody(Block &block) {
  Body body;
  DenseMap<Value, unsigned> slotOf;
  auto newSlot = [&](double init) {
    body.slots.push_back(init);
    return static_cast<unsigned>(body.slots.size() - 1);
  };
  for (BlockArgument arg : block.getArguments())
    slotOf[arg] = newSlot(0);
  auto slotFor = [&](Operation *user, Value v) -> FailureOr<unsigned> {
    auto it = slotOf.find(v);
    if (it != slotOf.end())
      return it->second;
    // A scalar captured from the enclosing function.
    const RuntimeValue *captured = lookup(v);
    if (!captured || captured->isTensor) {
      user->emitError() << "reference executor: body uses a value it cannot "
                           "see as a scalar";
      return failure();
    }
    unsigned slot = newSlot((*captured->data)[0]);
    slotOf[v] = slot;
    return slot;
  };
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      for (Value v : op.getOperands()) {
        FailureOr<unsigned> slot = slotFor(&op, v);
        if (failed(slot))
          return failure();
        body.yields.push_back(*slot);
      }
      break;
    }
    Instr instr;
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      instr.indexDim = index.getDim();
    } else if (auto extract = dyn_cast<tensor::ExtractOp>(op);
               extract && !slotOf.count(extract.getTensor())) {
      const RuntimeValue *table = lookup(extract.getTensor());
      if (!table || !table->isTensor) {
        op.emitError() << "reference executor: body extracts from a tensor "
                          "it cannot see";
        return failure();
      }
      instr.table = table->data;
      instr.tableShape.assign(table->shape.begin(), table->shape.end());
      for (Value v : extract.getIndices()) {
        FailureOr<unsigned> slot = slotFor(&op, v);
        if (failed(slot))
          return failure();
        instr.args.push_back(*slot);
      }
    } else {
      FailureOr<ScalarOp> scalar = compileScalarOp(&op);
      if (failed(scalar))
        return failure();
      instr.op = *scalar;
      for (Value v : op.getOperands()) {
        FailureOr<unsigned> slot = slotFor(&op, v);
        if (failed(slot))
          return failure();
        instr.args.push_back(*slot);
      }
    }
    instr.result = newSlot(0);
    slotOf[op.getResult(0)] = instr.result;
    body.instrs.push_back(std::move(instr));
  }
  return body;
}

void Execution::runBody(Body &body, ArrayRef<int64_t> loopIndex) {
  double args[4];
  for (Instr &instr : body.instrs) {
    if (instr.indexDim >= 0) {
      body.slots[instr.result] = static_cast<double>(loopIndex[instr.indexDim]);
      continue;
    }
    if (instr.table) {
      int64_t offset = 0;
      for (auto [d, arg] : llvm::enumerate(instr.args)) {
        int64_t i = static_cast<int64_t>(body.slots[arg]);
        if (i < 0 || i >= instr.tableShape[d]) {
          body.outOfBounds = true;
          i = 0;
        }
        offset = offset * instr.tableShape[d] + i;
      }
      body.slots[instr.result] =
          instr.table->empty() ? 0 : (*instr.table)[offset];
      continue;
    }
    size_t n = std::min<size_t>(instr.args.size(), 4);
    for (size_t i = 0; i < n; ++i)
      args[i] = body.slots[instr.args[i]];
    body.slots[instr.result] =
        evalScalarOp(instr.op, ArrayRef<double>(args, n));
  }
}

LogicalResult Execution::runStructured(linalg::LinalgOp op,
                                       ArrayRef<RuntimeValue> operands,
                                       SmallVectorImpl<RuntimeValue> &results) {
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  if (llvm::any_of(loops, ShapedType::isDynamic))
    return op->emitError() << "reference executor: dynamic loop ranges";
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numInputs = op.getNumDpsInputs();

  // Outputs start as copies of the inits.
  SmallVector<RuntimeValue> outputs;
  for (unsigned i = 0; i < op.getNumDpsInits(); ++i) {
    const RuntimeValue &init = operands[numInputs + i];
    RuntimeValue out = init;
    out.data = std::make_shared<std::vector<double>>(*init.data);
    outputs.push_back(out);
  }
  SmallVector<Access> accesses;
  for (auto [i, operand] : llvm::enumerate(operands)) {
    ArrayRef<int64_t> shape =
        i < numInputs ? operand.shape : outputs[i - numInputs].shape;
    FailureOr<Access> access = planAccess(maps[i], shape);
    if (failed(access))
      return op->emitError() << "reference executor: non-linear indexing map "
                             << AffineMapAttr::get(maps[i]);
    accesses.push_back(*access);
  }
  FailureOr<Body> body = compileBody(op->getRegion(0).front());
  if (failed(body))
    return failure();

  std::vector<std::vector<double> *> storage;
  for (unsigned i = 0; i < operands.size(); ++i)
    storage.push_back(i < numInputs ? operands[i].data.get()
                                    : outputs[i - numInputs].data.get());
  SmallVector<Rounding> roundings;
  for (RuntimeValue &out : outputs)
    roundings.push_back(Rounding::get(out.elementType));
  std::optional<MultiplyAccumulate> mac =
      outputs.size() == 1
          ? MultiplyAccumulate::match(*body, numInputs, outputs[0].elementType)
          : std::nullopt;
  if (mac && !loops.empty()) {
    // The longest parallel loop goes innermost (a contraction's own innermost
    // loop is often a 3-wide kernel window). Each output element still sums
    // its terms in the reduction loops' order: the output's offset does not
    // move with a reduction loop, so the result is the same to the bit.
    // (The output must index each parallel loop by a dim of its own and no
    // reduction loop: then the parallel loops pick the output element.)
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    AffineMap outMap = maps[numInputs];
    bool outputByParallel =
        outMap.isProjectedPermutation() &&
        llvm::all_of(llvm::seq<unsigned>(0, loops.size()), [&](unsigned l) {
          bool inOutput = outMap.isFunctionOfDim(l);
          return iterators[l] == utils::IteratorType::parallel ? inOutput
                                                               : !inOutput;
        });
    std::optional<size_t> longest;
    for (size_t l = 0; l < loops.size(); ++l)
      if (iterators[l] == utils::IteratorType::parallel &&
          (!longest || loops[l] > loops[*longest]))
        longest = l;
    if (outputByParallel && longest && loops[*longest] > loops.back()) {
      auto toBack = [&](auto &values) {
        auto moved = values[*longest];
        values.erase(values.begin() + *longest);
        values.push_back(moved);
      };
      toBack(loops);
      for (Access &access : accesses)
        toBack(access.coeff);
    }
  }
  // Odometer over the loops with each operand's offset kept incrementally:
  // when loop l steps and the loops inside it wrap to 0, offset i moves by
  // carry[l][i] = coeff_i[l] - sum over l' > l of coeff_i[l'] (n_l' - 1).
  int64_t total = 1;
  for (int64_t n : loops)
    total *= n;
  size_t numOperands = operands.size(), numLoops = loops.size();
  SmallVector<int64_t> carry(numLoops * numOperands, 0);
  SmallVector<int64_t> offsets(numOperands);
  for (size_t i = 0; i < numOperands; ++i) {
    offsets[i] = accesses[i].offset;
    int64_t inner = 0;
    for (size_t l = numLoops; l-- > 0;) {
      int64_t c = accesses[i].coeff[l];
      carry[l * numOperands + i] = c - inner;
      inner += c * (loops[l] - 1);
    }
  }
  // The innermost loop runs as a tight loop (its offsets move by its own
  // coefficients); the odometer steps the loops outside it.
  SmallVector<int64_t> index(numLoops, 0);
  int64_t inner = numLoops ? loops[numLoops - 1] : 1;
  const int64_t *innerStep =
      numLoops ? &carry[(numLoops - 1) * numOperands] : nullptr;
  for (int64_t flat = 0; flat < total && inner > 0; flat += inner) {
    if (mac) {
      mac->run(storage, offsets, innerStep, inner);
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        if (j) {
          index[numLoops - 1] = j;
          for (size_t i = 0; i < numOperands; ++i)
            offsets[i] += innerStep[i];
        }
        for (size_t i = 0; i < numOperands; ++i)
          body->slots[i] = (*storage[i])[offsets[i]];
        runBody(*body, index);
        for (auto [o, slot] : llvm::enumerate(body->yields))
          (*storage[numInputs + o])[offsets[numInputs + o]] =
              roundings[o].apply(body->slots[slot]);
      }
      if (numLoops)
        index[numLoops - 1] = 0;
    }
    for (size_t l = numLoops - 1; numLoops && l-- > 0;) {
      if (++index[l] < loops[l]) {
        const int64_t *step = &carry[l * numOperands];
        for (size_t i = 0; i < numOperands; ++i)
          offsets[i] += step[i];
        break;
      }
      index[l] = 0;
    }
  }
  if (body->outOfBounds)
    return op->emitError()
           << "reference executor: tensor.extract index out of bounds";
  for (RuntimeValue &out : outputs)
    results.push_back(std::move(out));
  return success();
}

LogicalResult
Execution::runElementwise(Operation *op, ArrayRef<RuntimeValue> operands,
                          SmallVectorImpl<RuntimeValue> &results) {
  FailureOr<ScalarOp> scalar = compileScalarOp(op);
  if (failed(scalar))
    return failure();
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type) {
    SmallVector<double, 3> args;
    for (const RuntimeValue &v : operands)
      args.push_back((*v.data)[0]);
    results.push_back(RuntimeValue::scalar(op->getResult(0).getType(),
                                           evalScalarOp(*scalar, args)));
    return success();
  }
  RuntimeValue out =
      RuntimeValue::tensor(type.getElementType(), type.getShape());
  SmallVector<double, 3> args(operands.size());
  for (int64_t e = 0, n = out.getNumElements(); e < n; ++e) {
    for (auto [i, v] : llvm::enumerate(operands))
      args[i] = v.isTensor ? (*v.data)[e] : (*v.data)[0];
    (*out.data)[e] = evalScalarOp(*scalar, args);
  }
  results.push_back(std::move(out));
  return success();
}

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

/// Resolves mixed static/dynamic values (offsets, sizes, ...) to integers.
static SmallVector<int64_t>
resolveMixed(ArrayRef<OpFoldResult> mixed, Execution &exec,
             function_ref<const RuntimeValue *(Value)> lookupFn) {
  SmallVector<int64_t> out;
  for (OpFoldResult ofr : mixed) {
    if (auto attr = dyn_cast<Attribute>(ofr))
      out.push_back(cast<IntegerAttr>(attr).getInt());
    else
      out.push_back(
          static_cast<int64_t>((*lookupFn(cast<Value>(ofr))->data)[0]));
  }
  return out;
}

/// Concatenation of `parts` (same shape except `dim`) along `dim`.
static RuntimeValue concatAlong(ArrayRef<const RuntimeValue *> parts,
                                int64_t dim, Type elementType) {
  SmallVector<int64_t> shape(parts.front()->shape.begin(),
                             parts.front()->shape.end());
  shape[dim] = 0;
  for (const RuntimeValue *p : parts)
    shape[dim] += p->shape[dim];
  RuntimeValue out = RuntimeValue::tensor(elementType, shape);
  SmallVector<int64_t> outStrides = getStrides(shape);
  int64_t base = 0;
  for (const RuntimeValue *p : parts) {
    forEachIndex(p->shape, [&](ArrayRef<int64_t> index, int64_t flat) {
      int64_t o = 0;
      for (size_t d = 0; d < index.size(); ++d)
        o += (index[d] + (static_cast<int64_t>(d) == dim ? base : 0)) *
             outStrides[d];
      (*out.data)[o] = (*p->data)[flat];
    });
    base += p->shape[dim];
  }
  return out;
}

/// Where the tile of mesh position `position` under `sharding` starts in a
/// tensor of `shape`.
static SmallVector<int64_t> tileOrigin(dist::ShardingAttr sharding,
                                       ArrayRef<int64_t> shape,
                                       int64_t position) {
  SmallVector<int64_t> coordinates =
      sharding.getMesh().getCoordinates(position);
  SmallVector<int64_t> origin;
  for (auto [d, size] : llvm::enumerate(shape))
    origin.push_back(
        sharding.getShardRange(d, size, sharding.getShardIndex(d, coordinates))
            .first);
  return origin;
}

/// Chunk `i` of `n` equal chunks of `value` along `dim`.
static RuntimeValue chunkAlong(const RuntimeValue &value, int64_t dim,
                               int64_t i, int64_t n) {
  SmallVector<int64_t> shape(value.shape.begin(), value.shape.end());
  shape[dim] /= n;
  RuntimeValue out = RuntimeValue::tensor(value.elementType, shape);
  SmallVector<int64_t> strides = getStrides(value.shape);
  forEachIndex(shape, [&](ArrayRef<int64_t> index, int64_t flat) {
    int64_t o = 0;
    for (size_t d = 0; d < index.size(); ++d)
      o += (index[d] + (static_cast<int64_t>(d) == dim ? i * shape[dim] : 0)) *
           strides[d];
    (*out.data)[flat] = (*value.data)[o];
  });
  return out;
}

LogicalResult Execution::runTensorOp(Operation *op,
                                     ArrayRef<RuntimeValue> operands,
                                     SmallVectorImpl<RuntimeValue> &results) {
  auto lookupFn = [&](Value v) { return lookup(v); };
  auto resultType = [&](unsigned i = 0) {
    return cast<RankedTensorType>(op->getResult(i).getType());
  };
  auto reshaped = [&](const RuntimeValue &source) {
    RuntimeValue out = source;
    out.shape.assign(resultType().getShape().begin(),
                     resultType().getShape().end());
    out.isTensor = true;
    return out;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](tensor::EmptyOp) {
        results.push_back(RuntimeValue::tensor(resultType().getElementType(),
                                               resultType().getShape()));
        return success();
      })
      .Case<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
            tensor::ReshapeOp>([&](Operation *) {
        results.push_back(reshaped(operands[0]));
        return success();
      })
      .Case([&](tensor::ExtractSliceOp slice) {
        SmallVector<int64_t> offsets =
            resolveMixed(slice.getMixedOffsets(), *this, lookupFn);
        SmallVector<int64_t> sizes =
            resolveMixed(slice.getMixedSizes(), *this, lookupFn);
        SmallVector<int64_t> strides =
            resolveMixed(slice.getMixedStrides(), *this, lookupFn);
        const RuntimeValue &source = operands[0];
        SmallVector<int64_t> srcStrides = getStrides(source.shape);
        RuntimeValue out = RuntimeValue::tensor(resultType().getElementType(),
                                                resultType().getShape());
        forEachIndex(sizes, [&](ArrayRef<int64_t> index, int64_t flat) {
          int64_t o = 0;
          for (size_t d = 0; d < index.size(); ++d)
            o += (offsets[d] + index[d] * strides[d]) * srcStrides[d];
          (*out.data)[flat] = (*source.data)[o];
        });
        results.push_back(std::move(out));
        return success();
      })
      .Case([&](tensor::InsertSliceOp insert) {
        SmallVector<int64_t> offsets =
            resolveMixed(insert.getMixedOffsets(), *this, lookupFn);
        SmallVector<int64_t> sizes =
            resolveMixed(insert.getMixedSizes(), *this, lookupFn);
        SmallVector<int64_t> strides =
            resolveMixed(insert.getMixedStrides(), *this, lookupFn);
        const RuntimeValue &source = operands[0];
        RuntimeValue out = operands[1];
        out.data = std::make_shared<std::vector<double>>(*operands[1].data);
        SmallVector<int64_t> dstStrides = getStrides(out.shape);
        forEachIndex(sizes, [&](ArrayRef<int64_t> index, int64_t flat) {
          int64_t o = 0;
          for (size_t d = 0; d < index.size(); ++d)
            o += (offsets[d] + index[d] * strides[d]) * dstStrides[d];
          (*out.data)[o] = (*source.data)[flat];
        });
        results.push_back(std::move(out));
        return success();
      })
      .Case([&](tensor::ConcatOp concat) {
        SmallVector<const RuntimeValue *> parts;
        for (const RuntimeValue &v : operands)
          parts.push_back(&v);
        results.push_back(
            concatAlong(parts, concat.getDim(), resultType().getElementType()));
        return success();
      })
      .Case([&](tensor::ExtractOp) {
        const RuntimeValue &source = operands[0];
        SmallVector<int64_t> strides = getStrides(source.shape);
        int64_t o = 0;
        for (size_t d = 1; d < operands.size(); ++d)
          o += static_cast<int64_t>((*operands[d].data)[0]) * strides[d - 1];
        results.push_back(RuntimeValue::scalar(op->getResult(0).getType(),
                                               (*source.data)[o]));
        return success();
      })
      .Case([&](tensor::InsertOp) {
        RuntimeValue out = operands[1];
        out.data = std::make_shared<std::vector<double>>(*operands[1].data);
        SmallVector<int64_t> strides = getStrides(out.shape);
        int64_t o = 0;
        for (size_t d = 2; d < operands.size(); ++d)
          o += static_cast<int64_t>((*operands[d].data)[0]) * strides[d - 2];
        (*out.data)[o] = (*operands[0].data)[0];
        results.push_back(std::move(out));
        return success();
      })
      .Case([&](tensor::FromElementsOp) {
        RuntimeValue out = RuntimeValue::tensor(resultType().getElementType(),
                                                resultType().getShape());
        for (auto [i, v] : llvm::enumerate(operands))
          (*out.data)[i] = (*v.data)[0];
        results.push_back(std::move(out));
        return success();
      })
      .Case([&](tensor::SplatOp) {
        RuntimeValue out = RuntimeValue::tensor(resultType().getElementType(),
                                                resultType().getShape());
        std::fill(out.data->begin(), out.data->end(), (*operands[0].data)[0]);
        results.push_back(std::move(out));
        return success();
      })
      .Case([&](tensor::DimOp) {
        int64_t dim = static_cast<int64_t>((*operands[1].data)[0]);
        results.push_back(
            RuntimeValue::scalar(op->getResult(0).getType(),
                                 static_cast<double>(operands[0].shape[dim])));
        return success();
      })
      .Case<tensor::GenerateOp, tensor::PadOp>(
          [&](Operation *) -> LogicalResult {
            // Both evaluate their body at output indices; pad only outside the
            // source.
            auto pad = dyn_cast<tensor::PadOp>(op);
            Block &block = op->getRegion(0).front();
            FailureOr<Body> body = compileBody(block);
            if (failed(body))
              return failure();
            RankedTensorType type = resultType();
            RuntimeValue out =
                RuntimeValue::tensor(type.getElementType(), type.getShape());
            SmallVector<int64_t> low, srcStrides;
            if (pad) {
              low = resolveMixed(pad.getMixedLowPad(), *this, lookupFn);
              srcStrides = getStrides(operands[0].shape);
            }
            Rounding rounding = Rounding::get(type.getElementType());
            forEachIndex(type.getShape(), [&](ArrayRef<int64_t> index,
                                              int64_t flat) {
              if (pad) {
                int64_t o = 0;
                bool inside = true;
                for (size_t d = 0; d < index.size() && inside; ++d) {
                  int64_t s = index[d] - low[d];
                  inside = s >= 0 && s < operands[0].shape[d];
                  o += s * srcStrides[d];
                }
                if (inside) {
                  (*out.data)[flat] = (*operands[0].data)[o];
                  return;
                }
              }
              for (size_t d = 0; d < index.size(); ++d)
                body->slots[d] = static_cast<double>(index[d]);
              runBody(*body, index);
              (*out.data)[flat] = rounding.apply(body->slots[body->yields[0]]);
            });
            results.push_back(std::move(out));
            return success();
          })
      .Default([&](Operation *) {
        return op->emitError() << "reference executor: unsupported op '"
                               << op->getName() << "'";
      });
}

//===----------------------------------------------------------------------===//
// Communication ops: their sequential meaning
//===----------------------------------------------------------------------===//

static RuntimeValue reduceAll(ArrayRef<RuntimeValue> values,
                              dist::ReductionKind kind) {
  RuntimeValue out =
      RuntimeValue::tensor(values[0].elementType, values[0].shape);
  std::vector<double> &acc = *out.data;
  acc = *values[0].data;
  for (const RuntimeValue &v : values.drop_front())
    for (size_t e = 0; e < acc.size(); ++e) {
      double x = (*v.data)[e];
      switch (kind) {
      case dist::ReductionKind::Sum:
      case dist::ReductionKind::Avg:
        acc[e] += x;
        break;
      case dist::ReductionKind::Prod:
        acc[e] *= x;
        break;
      // As arith.maximumf / minimumf (the bodies reduced this way): NaN
      // propagates, +0 is above -0.
      case dist::ReductionKind::Max:
        acc[e] = (std::isnan(acc[e]) || std::isnan(x))
                     ? std::numeric_limits<double>::quiet_NaN()
                     : (acc[e] == x ? (std::signbit(acc[e]) ? x : acc[e])
                                    : std::max(acc[e], x));
        break;
      case dist::ReductionKind::Min:
        acc[e] = (std::isnan(acc[e]) || std::isnan(x))
                     ? std::numeric_limits<double>::quiet_NaN()
                     : (acc[e] == x ? (std::signbit(acc[e]) ? acc[e] : x)
                                    : std::min(acc[e], x));
        break;
      }
    }
  for (double &x : acc) {
    if (kind == dist::ReductionKind::Avg)
      x /= static_cast<double>(values.size());
    x = roundToType(out.elementType, x);
  }
  return out;
}

LogicalResult
Execution::runCommunication(Operation *op, ArrayRef<RuntimeValue> operands,
                            SmallVectorImpl<RuntimeValue> &results) {
  auto placed = [&](RuntimeValue v) { return v; }; // data is immutable
  auto all = [&](ArrayRef<const RuntimeValue *> ptrs) {
    return SmallVector<const RuntimeValue *>(ptrs.begin(), ptrs.end());
  };
  SmallVector<const RuntimeValue *> ptrs;
  for (const RuntimeValue &v : operands)
    ptrs.push_back(&v);
  int64_t n =
      op->getNumOperands() == 1 ? op->getNumResults() : op->getNumOperands();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](dist::SendOp) {
        results.push_back(placed(operands[0]));
        return success();
      })
      .Case([&](dist::AllReduceOp ar) {
        RuntimeValue sum = reduceAll(operands, ar.getKind());
        results.append(operands.size(), sum);
        return success();
      })
      .Case([&](dist::ReduceOp r) {
        results.push_back(reduceAll(operands, r.getKind()));
        return success();
      })
      .Case([&](dist::AllGatherOp g) {
        RuntimeValue whole =
            concatAlong(all(ptrs), g.getDim(), operands[0].elementType);
        results.append(operands.size(), whole);
        return success();
      })
      .Case([&](dist::GatherOp g) {
        results.push_back(
            concatAlong(all(ptrs), g.getDim(), operands[0].elementType));
        return success();
      })
      .Case([&](dist::ReduceScatterOp rs) {
        RuntimeValue sum = reduceAll(operands, rs.getKind());
        for (int64_t i = 0; i < n; ++i)
          results.push_back(chunkAlong(sum, rs.getDim(), i, n));
        return success();
      })
      .Case([&](dist::BroadcastOp) {
        results.append(op->getNumResults(), operands[0]);
        return success();
      })
      .Case([&](dist::ReshardOp r) {
        // The whole tensor from the source tiles, then each destination's.
        ArrayRef<int64_t> shape = r.getShape();
        Type element = operands[0].elementType;
        RuntimeValue whole = RuntimeValue::tensor(element, shape);
        SmallVector<int64_t> strides = getStrides(shape);
        auto offsetOf = [&](ArrayRef<int64_t> index, ArrayRef<int64_t> lo) {
          int64_t o = 0;
          for (size_t d = 0; d < index.size(); ++d)
            o += (index[d] + lo[d]) * strides[d];
          return o;
        };
        for (size_t p = 0; p < operands.size(); ++p) {
          const RuntimeValue &tile = operands[p];
          SmallVector<int64_t> lo = tileOrigin(r.getSource(), shape, p);
          forEachIndex(tile.shape, [&](ArrayRef<int64_t> index, int64_t flat) {
            (*whole.data)[offsetOf(index, lo)] = (*tile.data)[flat];
          });
        }
        for (unsigned q = 0; q < op->getNumResults(); ++q) {
          auto type = cast<RankedTensorType>(op->getResult(q).getType());
          RuntimeValue out = RuntimeValue::tensor(element, type.getShape());
          SmallVector<int64_t> lo = tileOrigin(r.getDestination(), shape, q);
          forEachIndex(out.shape, [&](ArrayRef<int64_t> index, int64_t flat) {
            (*out.data)[flat] = (*whole.data)[offsetOf(index, lo)];
          });
          results.push_back(std::move(out));
        }
        return success();
      })
      .Case([&](dist::ScatterOp s) {
        for (int64_t i = 0; i < n; ++i)
          results.push_back(chunkAlong(operands[0], s.getDim(), i, n));
        return success();
      })
      .Case([&](dist::AllToAllOp a) {
        for (int64_t j = 0; j < n; ++j) {
          SmallVector<RuntimeValue> chunks;
          for (const RuntimeValue &v : operands)
            chunks.push_back(chunkAlong(v, a.getSplitDim(), j, n));
          SmallVector<const RuntimeValue *> parts;
          for (const RuntimeValue &c : chunks)
            parts.push_back(&c);
          results.push_back(
              concatAlong(parts, a.getConcatDim(), operands[0].elementType));
        }
        return success();
      })
      .Default([&](Operation *) {
        return op->emitError() << "reference executor: unsupported op '"
                               << op->getName() << "'";
      });
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

LogicalResult Execution::visitOp(Operation *op, ArrayRef<RuntimeValue> operands,
                                 SmallVectorImpl<RuntimeValue> &results) {
  if (isa<dist::DistDialect>(op->getDialect()))
    return runCommunication(op, operands, results);
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return runStructured(linalgOp, operands, results);
  if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
    const RuntimeValue &in = operands[0];
    RuntimeValue out = RuntimeValue::tensor(
        cast<RankedTensorType>(op->getResult(0).getType()).getElementType(),
        in.shape);
    int64_t dim = softmax.getDimension();
    SmallVector<int64_t> strides = getStrides(in.shape);
    SmallVector<int64_t> outer(in.shape.begin(), in.shape.end());
    outer[dim] = 1;
    Rounding rounding = Rounding::get(out.elementType);
    forEachIndex(outer, [&](ArrayRef<int64_t> index, int64_t) {
      int64_t base = 0;
      for (size_t d = 0; d < index.size(); ++d)
        base += index[d] * strides[d];
      double maxValue = -INFINITY, sum = 0;
      for (int64_t k = 0; k < in.shape[dim]; ++k)
        maxValue = std::max(maxValue, (*in.data)[base + k * strides[dim]]);
      for (int64_t k = 0; k < in.shape[dim]; ++k)
        sum += std::exp((*in.data)[base + k * strides[dim]] - maxValue);
      for (int64_t k = 0; k < in.shape[dim]; ++k) {
        int64_t o = base + k * strides[dim];
        (*out.data)[o] =
            rounding.apply(std::exp((*in.data)[o] - maxValue) / sum);
      }
    });
    results.push_back(std::move(out));
    return success();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
      auto type = cast<RankedTensorType>(dense.getType());
      RuntimeValue out =
          RuntimeValue::tensor(type.getElementType(), type.getShape());
      if (isa<FloatType>(type.getElementType())) {
        int64_t i = 0;
        for (APFloat v : dense.getValues<APFloat>())
          (*out.data)[i++] = v.convertToDouble();
      } else if (type.getElementType().isIntOrIndex()) {
        bool isBool = type.getElementType().isInteger(1);
        int64_t i = 0;
        // Convert each branch separately: a conditional of uint64_t and
        // int64_t would read negative values as unsigned.
        for (APInt v : dense.getValues<APInt>())
          (*out.data)[i++] = isBool ? static_cast<double>(v.getZExtValue())
                                    : static_cast<double>(v.getSExtValue());
      } else {
        return op->emitError()
               << "reference executor: unsupported constant element type "
               << type.getElementType();
      }
      results.push_back(std::move(out));
      return success();
    }
  }
  if (isa<tensor::TensorDialect>(op->getDialect()))
    return runTensorOp(op, operands, results);
  if (isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return runElementwise(op, operands, results);
  return op->emitError() << "reference executor: unsupported op '"
                         << op->getName() << "'";
}

FailureOr<SmallVector<RuntimeValue>>
distir::execute(func::FuncOp func, ArrayRef<RuntimeValue> inputs) {
  if (inputs.size() != func.getNumArguments())
    return func.emitError()
           << "@" << func.getSymName() << " takes " << func.getNumArguments()
           << " inputs, got " << inputs.size();
  for (auto [i, input] : llvm::enumerate(inputs)) {
    Type expected = func.getArgumentTypes()[i];
    auto tensor = dyn_cast<RankedTensorType>(expected);
    Type elementType = tensor ? tensor.getElementType() : expected;
    bool shapeOk = tensor ? input.isTensor && ArrayRef<int64_t>(input.shape) ==
                                                  tensor.getShape()
                          : !input.isTensor;
    if (!shapeOk || input.elementType != elementType) {
      std::string got;
      llvm::raw_string_ostream os(got);
      os << input.elementType;
      if (input.isTensor) {
        os << " tensor of shape [";
        llvm::interleaveComma(input.shape, os);
        os << "]";
      } else {
        os << " scalar";
      }
      return func.emitError() << "input #" << i << " is " << got << " but @"
                              << func.getSymName() << " expects " << expected;
    }
  }
  Execution execution;
  execution.context = func.getContext();
  return execution.callFunction(func, inputs);
}
