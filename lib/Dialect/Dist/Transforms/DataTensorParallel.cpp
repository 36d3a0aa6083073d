//===- DataTensorParallel.cpp - Data and tensor parallelism
//----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Distributes a sequential program on a dp x tp grid of devices.
//
// Policy and mechanism are separate. The policy gives layouts to the
// arguments (batch dimension split over `dp`, Megatron column/row splits of
// the weights over `tp`). The mechanism propagates layouts through the
// program in order using only the linalg structured-op interface: loops
// take the split of the operand dimensions that index them; operands are
// sliced or all-gathered to match; split reduction loops produce partial
// sums that are all-reduced immediately. Each op is then instantiated once
// per device with local shapes, and the collectives between devices are
// explicit `dist` ops.
//
// Upstream `shard` sharding-propagation/partition was tried first for the
// mechanism; on these programs it crashes on rank-0 tensors (the loss) and
// its propagation prefers all-gathers over Megatron's splits (see
// docs/design/dtp.md).
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTDTPPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

/// Grid axes.
constexpr int kNone = -1;
constexpr int kDataAxis = 0;
constexpr int kTensorAxis = 1;

/// Which grid axis splits each dimension of a tensor.
using Layout = SmallVector<int, 4>;

/// A distributed value: one local value per device (grid order), or a fresh
/// tensor (tensor.empty, optionally filled) materialized lazily in whatever
/// layout its user needs.
struct DistValue {
  RankedTensorType fullType; // without placement
  Layout layout;
  SmallVector<Value> locals;
  bool fresh = false;
  Value fillScalar; // for fresh tensors produced by linalg.fill
};

class DTPRewriter {
public:
  DTPRewriter(func::FuncOp func, int64_t dp, int64_t tp, bool tpInner)
      : func(func), builder(func.getContext()), dp(dp), tp(tp),
        tpInner(tpInner) {}

  LogicalResult run();

private:
  int64_t numDevices() const { return dp * tp; }
  int64_t axisSize(int axis) const { return axis == kDataAxis ? dp : tp; }
  /// Device id of grid index g (= d * tp + t).
  int64_t deviceOf(int64_t g) const {
    int64_t d = g / tp, t = g % tp;
    return tpInner ? d * tp + t : t * dp + d;
  }
  int64_t coord(int64_t g, int axis) const {
    return axis == kDataAxis ? g / tp : g % tp;
  }
  /// Grid indices of the group along `axis` through grid index g, in axis
  /// order.
  SmallVector<int64_t> groupOf(int64_t g, int axis) const {
    SmallVector<int64_t> group;
    for (int64_t i = 0; i < axisSize(axis); ++i)
      group.push_back(axis == kDataAxis ? i * tp + g % tp : (g / tp) * tp + i);
    return group;
  }

  RankedTensorType localType(RankedTensorType full, const Layout &layout,
                             int64_t g) const {
    SmallVector<int64_t> shape(full.getShape());
    for (auto [d, axis] : llvm::enumerate(layout))
      if (axis != kNone)
        shape[d] /= axisSize(axis);
    return RankedTensorType::get(
        shape, full.getElementType(),
        DeviceAttr::get(full.getContext(), deviceOf(g)));
  }
  bool divides(RankedTensorType full, const Layout &layout) const {
    for (auto [d, axis] : llvm::enumerate(layout))
      if (axis != kNone && full.getDimSize(d) % axisSize(axis) != 0)
        return false;
    return true;
  }

  /// Per-device values of `v` in `target` layout (slicing locally, or
  /// all-gathering first where a dimension is split on another axis).
  SmallVector<Value> conform(Location loc, DistValue &v, const Layout &target);
  /// Sums partial per-device values over `axis` (all_reduce per group).
  SmallVector<Value> allReduce(Location loc, ArrayRef<Value> locals, int axis);

  LogicalResult visitStructured(linalg::LinalgOp op);
  LogicalResult visitReplicated(Operation *op);
  LogicalResult visitFresh(Operation *op);

  DistValue &lookup(Value v) { return values[v]; }

  func::FuncOp func;
  OpBuilder builder;
  int64_t dp, tp;
  bool tpInner;
  DenseMap<Value, DistValue> values;
  /// Scalars (not placed) are shared by all devices.
  IRMapping scalars;

public:
  /// The new step function and the layouts of its results.
  func::FuncOp step;
  SmallVector<Layout> argLayouts, resultLayouts;
  SmallVector<RankedTensorType> argTypes, resultTypes;
};

} // namespace

SmallVector<Value> DTPRewriter::conform(Location loc, DistValue &v,
                                        const Layout &target) {
  int64_t n = numDevices();
  if (v.fresh) {
    // Materialize the fresh tensor directly in the requested layout.
    SmallVector<Value> out;
    for (int64_t g = 0; g < n; ++g) {
      RankedTensorType type = localType(v.fullType, target, g);
      Value local =
          tensor::EmptyOp::create(builder, loc, type.getShape(),
                                  type.getElementType(), type.getEncoding());
      if (v.fillScalar)
        local = linalg::FillOp::create(builder, loc, ValueRange{v.fillScalar},
                                       ValueRange{local})
                    .getResult(0);
      out.push_back(local);
    }
    return out;
  }
  SmallVector<Value> locals = v.locals;
  Layout current = v.layout;
  // Gather the dimensions split on an axis the target does not want there.
  for (auto [d, axis] : llvm::enumerate(current)) {
    if (axis == kNone || axis == target[d])
      continue;
    SmallVector<Value> gathered(n);
    SmallVector<bool> done(n, false);
    for (int64_t g = 0; g < n; ++g) {
      if (done[g])
        continue;
      SmallVector<int64_t> group = groupOf(g, axis);
      SmallVector<Value> operands;
      for (int64_t member : group)
        operands.push_back(locals[member]);
      auto op =
          AllGatherOp::create(builder, loc, operands, static_cast<int64_t>(d));
      for (auto [i, member] : llvm::enumerate(group)) {
        gathered[member] = op.getResult(i);
        done[member] = true;
      }
    }
    locals = gathered;
    current[d] = kNone;
  }
  // Slice the dimensions the target splits and we hold whole.
  bool needSlice = false;
  for (auto [d, axis] : llvm::enumerate(target))
    needSlice |= axis != kNone && current[d] != axis;
  if (!needSlice)
    return locals;
  for (int64_t g = 0; g < n; ++g) {
    auto type = cast<RankedTensorType>(locals[g].getType());
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1);
    for (auto [d, axis] : llvm::enumerate(target)) {
      if (axis == kNone || current[d] == axis)
        continue;
      sizes[d] /= axisSize(axis);
      offsets[d] = coord(g, axis) * sizes[d];
    }
    auto sliceType =
        RankedTensorType::get(sizes, type.getElementType(), type.getEncoding());
    locals[g] = tensor::ExtractSliceOp::create(
        builder, loc, sliceType, locals[g], ValueRange{}, ValueRange{},
        ValueRange{}, offsets, sizes, strides);
  }
  return locals;
}

SmallVector<Value> DTPRewriter::allReduce(Location loc, ArrayRef<Value> locals,
                                          int axis) {
  int64_t n = numDevices();
  SmallVector<Value> out(n);
  SmallVector<bool> done(n, false);
  for (int64_t g = 0; g < n; ++g) {
    if (done[g])
      continue;
    SmallVector<int64_t> group = groupOf(g, axis);
    SmallVector<Value> operands;
    for (int64_t member : group)
      operands.push_back(locals[member]);
    auto op = AllReduceOp::create(builder, loc, ReductionKind::Sum, operands);
    for (auto [i, member] : llvm::enumerate(group)) {
      out[member] = op.getResult(i);
      done[member] = true;
    }
  }
  return out;
}

/// Whether an init operand is a tensor that is all zeros (so that partial
/// sums over a split reduction loop add up to the right result).
static bool isZeroInit(const DistValue &v) {
  if (!v.fresh || !v.fillScalar)
    return false;
  auto constant = v.fillScalar.getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return false;
  if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
    return f.getValue().isZero();
  if (auto i = dyn_cast<IntegerAttr>(constant.getValue()))
    return i.getValue().isZero();
  return false;
}

LogicalResult DTPRewriter::visitStructured(linalg::LinalgOp op) {
  Location loc = op.getLoc();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numLoops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool readsIndex = !op->getRegion(0).front().getOps<linalg::IndexOp>().empty();

  // 1. Loop splits from the inputs' layouts, each grid axis at most once.
  SmallVector<int> loopAxis(numLoops, kNone);
  SmallVector<bool> axisUsed(2, false);
  if (!readsIndex)
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (!isa<RankedTensorType>(input->get().getType()))
        continue;
      DistValue &v = lookup(input->get());
      if (v.fresh)
        continue;
      AffineMap map = maps[input->getOperandNumber()];
      for (auto [d, axis] : llvm::enumerate(v.layout)) {
        auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
        if (axis == kNone || !dim || axisUsed[axis] ||
            loopAxis[dim.getPosition()] != kNone)
          continue;
        loopAxis[dim.getPosition()] = axis;
        axisUsed[axis] = true;
      }
    }

  // A split reduction loop needs zero inits (partial sums) and loops that
  // split a dimension unevenly are not split at all.
  auto layoutFor = [&](AffineMap map, RankedTensorType type) -> Layout {
    Layout layout(type.getRank(), kNone);
    for (unsigned r = 0; r < map.getNumResults(); ++r)
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(r)))
        layout[r] = loopAxis[dim.getPosition()];
    return layout;
  };
  bool splitsReduction = false;
  for (unsigned l = 0; l < numLoops; ++l)
    if (loopAxis[l] != kNone && iterators[l] == utils::IteratorType::reduction)
      splitsReduction = true;
  for (OpOperand &init : op.getDpsInitsMutable())
    if (splitsReduction && !isZeroInit(lookup(init.get())))
      llvm::fill(loopAxis, kNone); // fall back: replicate this op
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (type && !divides(lookup(operand.get()).fullType,
                         layoutFor(maps[operand.getOperandNumber()], type)))
      llvm::fill(loopAxis, kNone);
  }

  // 2. Operands in the layouts the loops imply.
  int64_t n = numDevices();
  SmallVector<SmallVector<Value>> localOperands(op->getNumOperands());
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    if (!isa<RankedTensorType>(v.getType())) {
      localOperands[operand.getOperandNumber()].assign(n, scalars.lookup(v));
      continue;
    }
    DistValue &dv = lookup(v);
    localOperands[operand.getOperandNumber()] = conform(
        loc, dv, layoutFor(maps[operand.getOperandNumber()], dv.fullType));
  }

  // 3. One op per device.
  SmallVector<SmallVector<Value>> localResults(op->getNumResults());
  for (int64_t g = 0; g < n; ++g) {
    IRMapping mapping;
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      mapping.map(operand, localOperands[i][g]);
    // Scalars captured by the body keep their single definition.
    op->getRegion(0).walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (!operand.getParentRegion()->isProperAncestor(&op->getRegion(0)) &&
            scalars.contains(operand))
          mapping.map(operand, scalars.lookup(operand));
    });
    Operation *clone = builder.clone(*op, mapping);
    for (auto [i, result] : llvm::enumerate(clone->getResults())) {
      result.setType(localOperands[op.getNumDpsInputs() + i][g].getType());
      localResults[i].push_back(result);
    }
  }

  // 4. Results: partial sums over split reduction loops are reduced now.
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    DistValue out;
    out.fullType = lookup(op.getDpsInits()[i]).fullType;
    AffineMap map = maps[op.getNumDpsInputs() + i];
    out.layout = layoutFor(map, out.fullType);
    SmallVector<Value> locals = localResults[i];
    for (unsigned l = 0; l < numLoops; ++l)
      if (loopAxis[l] != kNone &&
          iterators[l] == utils::IteratorType::reduction)
        locals = allReduce(loc, locals, loopAxis[l]);
    out.locals = locals;
    values[result] = out;
  }
  return success();
}

LogicalResult DTPRewriter::visitFresh(Operation *op) {
  DistValue v;
  v.fresh = true;
  v.fullType = cast<RankedTensorType>(op->getResult(0).getType());
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    if (!lookup(fill.getOutputs()[0]).fresh ||
        lookup(fill.getOutputs()[0]).fillScalar)
      return failure(); // not a fill of an empty tensor: handle generally
    v.fillScalar = scalars.lookup(fill.getInputs()[0]);
  }
  values[op->getResult(0)] = v;
  return success();
}

LogicalResult DTPRewriter::visitReplicated(Operation *op) {
  // Gather every tensor operand whole and run the op on every device.
  int64_t n = numDevices();
  SmallVector<SmallVector<Value>> localOperands;
  for (Value v : op->getOperands()) {
    if (auto type = dyn_cast<RankedTensorType>(v.getType())) {
      DistValue &dv = lookup(v);
      localOperands.push_back(
          conform(op->getLoc(), dv, Layout(type.getRank(), kNone)));
    } else {
      localOperands.push_back(SmallVector<Value>(n, scalars.lookup(v)));
    }
  }
  SmallVector<SmallVector<Value>> localResults(op->getNumResults());
  for (int64_t g = 0; g < n; ++g) {
    IRMapping mapping;
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      mapping.map(operand, localOperands[i][g]);
    Operation *clone = builder.clone(*op, mapping);
    for (auto [i, result] : llvm::enumerate(clone->getResults())) {
      if (auto type = dyn_cast<RankedTensorType>(result.getType()))
        result.setType(localType(
            withDevice(type, 0).clone(type.getShape(), type.getElementType()),
            Layout(type.getRank(), kNone), g));
      localResults[i].push_back(result);
    }
  }
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    DistValue out;
    out.fullType =
        RankedTensorType::get(type.getShape(), type.getElementType());
    out.layout = Layout(type.getRank(), kNone);
    out.locals = localResults[i];
    values[result] = out;
  }
  return success();
}

LogicalResult DTPRewriter::run() {
  MLIRContext *ctx = func.getContext();
  Block &body = func.getBody().front();
  int64_t n = numDevices();

  // Policy: argument layouts.
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return emitError(arg.getLoc())
             << "argument #" << arg.getArgNumber()
             << " is not a ranked tensor; dist-dtp distributes tensors only";
    Layout layout(type.getRank(), kNone);
    if (auto batch = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                        "dist.batch_dim")) {
      int64_t d = batch.getInt();
      if (d < 0 || d >= type.getRank())
        return emitError(arg.getLoc())
               << "dist.batch_dim " << d << " is out of range for " << type;
      if (type.getDimSize(d) % dp != 0)
        return emitError(arg.getLoc())
               << "dp=" << dp << " does not divide the batch dimension ("
               << type.getDimSize(d) << ") of argument #" << arg.getArgNumber();
      if (dp > 1)
        layout[d] = kDataAxis;
    }
    if (auto layer = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                        "dist.layer");
        layer && tp > 1) {
      if (type.getRank() != 2)
        return emitError(arg.getLoc())
               << "tensor parallelism needs 2-D weights, argument #"
               << arg.getArgNumber() << " is " << type;
      // Megatron: column split, then row split, alternating by layer.
      int64_t d = layer.getInt() % 2 == 0 ? 1 : 0;
      if (type.getDimSize(d) % tp != 0)
        return emitError(arg.getLoc())
               << "tp=" << tp << " does not divide dimension " << d << " ("
               << type.getDimSize(d) << ") of weight argument #"
               << arg.getArgNumber();
      layout[d] = kTensorAxis;
    }
    argLayouts.push_back(layout);
    argTypes.push_back(
        RankedTensorType::get(type.getShape(), type.getElementType()));
  }
  if (dp > 1 && llvm::none_of(argLayouts, [](const Layout &l) {
        return llvm::is_contained(l, kDataAxis);
      }))
    return func.emitError()
           << "data parallelism needs the batch inputs marked with a "
              "dist.batch_dim argument attribute";

  // The step function: one local argument per (argument, device).
  SmallVector<Type> stepArgTypes;
  for (auto [i, type] : llvm::enumerate(argTypes))
    for (int64_t g = 0; g < n; ++g)
      stepArgTypes.push_back(localType(type, argLayouts[i], g));
  builder.setInsertionPoint(func);
  step = func::FuncOp::create(builder, func.getLoc(),
                              (func.getSymName() + "_dtp").str(),
                              builder.getFunctionType(stepArgTypes, {}));
  Block *stepBody = step.addEntryBlock();
  builder.setInsertionPointToStart(stepBody);
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    DistValue v;
    v.fullType = argTypes[i];
    v.layout = argLayouts[i];
    for (int64_t g = 0; g < n; ++g)
      v.locals.push_back(stepBody->getArgument(i * n + g));
    values[arg] = v;
  }

  for (Operation &op : body.without_terminator()) {
    bool tensorOp = llvm::any_of(
        op.getResultTypes(), [](Type t) { return isa<RankedTensorType>(t); });
    if (!tensorOp && op.getNumRegions() == 0 &&
        llvm::none_of(op.getOperandTypes(),
                      [](Type t) { return isa<RankedTensorType>(t); })) {
      // Scalars are shared: one definition serves every device.
      Operation *clone = builder.clone(op, scalars);
      for (auto [from, to] : llvm::zip(op.getResults(), clone->getResults()))
        scalars.map(from, to);
      continue;
    }
    if (isa<DistDialect>(op.getDialect()))
      return op.emitOpError()
             << "dist-dtp expects a sequential program without "
                "communication ops";
    if (isa<tensor::EmptyOp>(op) && op.getNumOperands() == 0) {
      (void)visitFresh(&op);
      continue;
    }
    if (isa<linalg::FillOp>(op) && succeeded(visitFresh(&op)))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (failed(visitStructured(linalgOp)))
        return failure();
      continue;
    }
    if (op.getNumRegions() != 0 ||
        llvm::any_of(op.getResultTypes(), [](Type t) {
          auto r = dyn_cast<RankedTensorType>(t);
          return isa<TensorType>(t) && (!r || !r.hasStaticShape());
        }))
      return op.emitOpError() << "dist-dtp cannot distribute this op";
    if (failed(visitReplicated(&op)))
      return failure();
  }

  // Results stay in their layouts; the wrapper gathers them.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> stepResults;
  for (Value v : ret.getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return ret.emitOpError() << "dist-dtp returns tensors only";
    DistValue &dv = lookup(v);
    Layout layout = dv.fresh ? Layout(type.getRank(), kNone) : dv.layout;
    SmallVector<Value> locals = conform(ret.getLoc(), dv, layout);
    resultLayouts.push_back(layout);
    resultTypes.push_back(dv.fullType);
    llvm::append_range(stepResults, locals);
  }
  func::ReturnOp::create(builder, ret.getLoc(), stepResults);
  step.setFunctionType(builder.getFunctionType(
      stepArgTypes, ValueRange(stepResults).getTypes()));
  (void)ctx;
  return success();
}

namespace {
struct DistDTPPass : public dist::impl::DistDTPPassBase<DistDTPPass> {
  using DistDTPPassBase::DistDTPPassBase;

  void runOnOperation() final;
  LogicalResult rewriteWrapper(func::FuncOp func, DTPRewriter &rewriter,
                               int64_t sourceDevice);
};
} // namespace

/// Replaces the body of `func` by: distribute the inputs from
/// `sourceDevice`, call the step function, gather the results back.
LogicalResult DistDTPPass::rewriteWrapper(func::FuncOp func,
                                          DTPRewriter &rewriter,
                                          int64_t sourceDevice) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Type> resultTypes(ret.getOperandTypes());
  // Drop the old body but keep the arguments.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    op.erase();
  OpBuilder b = OpBuilder::atBlockEnd(&body);
  Location loc = func.getLoc();
  int64_t n = rewriter.step.getNumArguments() /
              std::max<size_t>(1, body.getNumArguments());
  auto deviceOf = [&](Type t) { return getDevice(t).getId(); };

  SmallVector<Value> stepArgs;
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    auto type = cast<RankedTensorType>(arg.getType());
    // Every device gets the whole input, then keeps its shard.
    SmallVector<Type> targets;
    SmallVector<int64_t> devices;
    bool sourceInGroup = false;
    for (int64_t g = 0; g < n; ++g) {
      int64_t d = deviceOf(rewriter.step.getArgumentTypes()[i * n + g]);
      devices.push_back(d);
      sourceInGroup |= d == deviceOf(type);
    }
    SmallVector<Value> whole(n);
    if (n == 1 && devices[0] == deviceOf(type)) {
      whole[0] = arg;
    } else {
      SmallVector<Type> broadcastTypes;
      if (!sourceInGroup)
        broadcastTypes.push_back(type);
      for (int64_t d : devices)
        broadcastTypes.push_back(withDevice(type, d));
      auto bcast = BroadcastOp::create(b, loc, broadcastTypes, arg);
      for (int64_t g = 0; g < n; ++g)
        whole[g] = bcast.getResult(g + (sourceInGroup ? 0 : 1));
    }
    for (int64_t g = 0; g < n; ++g) {
      auto local =
          cast<RankedTensorType>(rewriter.step.getArgumentTypes()[i * n + g]);
      if (local.getShape() == type.getShape()) {
        stepArgs.push_back(whole[g]);
        continue;
      }
      SmallVector<int64_t> offsets, sizes(local.getShape()),
          strides(local.getRank(), 1);
      for (auto [d, axis] : llvm::enumerate(rewriter.argLayouts[i]))
        offsets.push_back(
            axis == kNone ? 0
                          : (axis == kDataAxis ? g / tp : g % tp) * sizes[d]);
      stepArgs.push_back(tensor::ExtractSliceOp::create(
          b, loc, local, whole[g], ValueRange{}, ValueRange{}, ValueRange{},
          offsets, sizes, strides));
    }
  }
  auto call = func::CallOp::create(b, loc, rewriter.step, stepArgs);

  // Results: gather split dimensions, then bring device 0's copy home.
  SmallVector<Value> results;
  for (auto [r, type] : llvm::enumerate(resultTypes)) {
    auto placed = cast<RankedTensorType>(type);
    SmallVector<Value> locals;
    for (int64_t g = 0; g < n; ++g)
      locals.push_back(call.getResult(r * n + g));
    // Gather dimension by dimension, over each axis's groups.
    for (auto [d, axis] : llvm::enumerate(rewriter.resultLayouts[r])) {
      if (axis == kNone)
        continue;
      int64_t size = axis == kDataAxis ? dp : tp;
      SmallVector<Value> next(n);
      for (int64_t g = 0; g < n; ++g) {
        bool leader = (axis == kDataAxis ? g / tp : g % tp) == 0;
        if (!leader)
          continue;
        SmallVector<Value> group;
        SmallVector<int64_t> members;
        for (int64_t i = 0; i < size; ++i) {
          int64_t m = axis == kDataAxis ? i * tp + g % tp : (g / tp) * tp + i;
          members.push_back(m);
          group.push_back(locals[m]);
        }
        auto gather =
            AllGatherOp::create(b, loc, group, static_cast<int64_t>(d));
        for (auto [i, m] : llvm::enumerate(members))
          next[m] = gather.getResult(i);
      }
      locals = next;
    }
    Value home = locals[0];
    if (deviceOf(home.getType()) != deviceOf(placed))
      home = SendOp::create(b, loc, placed, home);
    results.push_back(home);
  }
  func::ReturnOp::create(b, loc, results);
  (void)sourceDevice;
  return success();
}

void DistDTPPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &msg) {
    mlir::emitError(module.getLoc()) << msg;
    signalPassFailure();
  };
  if (dp < 1 || tp < 1 || pp < 1 || microbatches < 1)
    return fail("dist-dtp degrees must be >= 1 (dp=" + Twine(dp) +
                ", tp=" + Twine(tp) + ", pp=" + Twine(pp) +
                ", microbatches=" + Twine(microbatches) + ")");
  if (pp != 1)
    return fail("dist-dtp: pipeline parallelism (pp=" + Twine(pp) +
                ") is not implemented yet");
  if (microbatches != 1)
    return fail("dist-dtp: microbatching (microbatches=" + Twine(microbatches) +
                ") is not implemented yet");
  if (mapping != "tp-inner" && mapping != "dp-inner")
    return fail("dist-dtp: unknown mapping '" + mapping +
                "' (expected tp-inner or dp-inner)");

  func::FuncOp func;
  if (!entry.empty()) {
    func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal())
      return fail("dist-dtp: no function @" + entry + " with a body");
  } else {
    for (auto candidate : module.getOps<func::FuncOp>())
      if (!candidate.isExternal() && candidate.isPublic()) {
        if (func)
          return fail("dist-dtp: several public functions; choose one with "
                      "entry=NAME");
        func = candidate;
      }
    if (!func)
      return fail("dist-dtp: no public function to distribute");
  }

  // The program must be sequential: every tensor on one device.
  std::optional<int64_t> device;
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                           op->getResultTypes())) {
      if (!isa<TensorType>(t))
        continue;
      DeviceAttr d = getDevice(t);
      if (!d) {
        op->emitOpError() << "dist-dtp needs placed tensors; got " << t;
        return WalkResult::interrupt();
      }
      if (device && *device != d.getId()) {
        op->emitOpError() << "dist-dtp expects a program on one device, "
                             "found devices "
                          << *device << " and " << d.getId();
        return WalkResult::interrupt();
      }
      device = d.getId();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return signalPassFailure();
  if (!device)
    device = 0;

  DTPRewriter rewriter(func, dp, tp, mapping == "tp-inner");
  if (failed(rewriter.run()))
    return signalPassFailure();
  if (failed(rewriteWrapper(func, rewriter, *device)))
    return signalPassFailure();
}
