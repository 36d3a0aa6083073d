//===- DataTensorParallel.cpp - Data, tensor and pipeline parallelism -----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Distributes a sequential program over dp x tp x pp devices with K
// microbatches.
//
// Policy and mechanism are separate. The policy gives layouts to the
// arguments (batch dimension split over the batch axis, Megatron column/row
// splits of the weights over `tp`) and stages to ops (`dist.layer` tags,
// balanced contiguous layer groups). The mechanism propagates layouts
// through the program in order using only the linalg structured-op
// interface: loops take the split of the operand dimensions that index
// them; operands are sliced or gathered to match; split reduction loops
// produce partial sums that are reduced at once. Each op is instantiated
// per grid point with local shapes, and every transfer between devices is
// an explicit `dist` op.
//
// The batch axis has dp * K points: point b = d * K + m is microbatch m on
// data-parallel replica d. Points of one replica live on the same device,
// so "collectives" along the batch axis are local concatenations and sums
// over microbatches followed by one dist collective over the replicas.
//
// Every op instance belongs to a task (stage, microbatch, phase). The
// schedule (GPipe, 1F1B, eager 1F1B) orders the tasks; the program order of
// the step function follows it, so the schedule is explicit in the IR.
//
// Upstream `shard` sharding-propagation/partition was tried first for the
// mechanism; on these programs it crashes on rank-0 tensors (the loss) and
// prefers all-gathers over Megatron's splits (docs/design/dtp.md).
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/IR/EntryFunction.h"
#include "DistIR/Dialect/Dist/IR/OneHot.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"
#include "DistIR/Search/Reshard.h"
#include "InferLayers.h"
#include "PadDimension.h"
#include "TensorParallelPlan.h"
#include "UnflattenReshapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <numeric>

namespace distir::dist {
#define GEN_PASS_DEF_DISTDTPPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

/// Layout axes.
constexpr int kNone = -1;
constexpr int kBatchAxis = 0;
constexpr int kTensorAxis = 1;

/// An axis over a dimension seen as [groups, n, rest]: point t of the axis
/// (n points) holds block t of every group, in group order. For the tensor
/// axis this keeps the Q, K and V thirds of a fused attention projection
/// split by heads, and heads split inside a (batch, heads) product; for the
/// batch axis it keeps the batch split after a reshape merges it behind
/// other dims (the [S, B, E] -> [S * B, E] rows of nn.MultiheadAttention's
/// projections). Encoded as base + 2 * groups, so the parity is the base.
int groupedAxis(int base, int64_t groups) {
  return groups <= 1 ? base : base + 2 * static_cast<int>(groups);
}
int groupedTensorAxis(int64_t groups) {
  return groupedAxis(kTensorAxis, groups);
}
/// kBatchAxis or kTensorAxis (kNone stays kNone).
int baseAxis(int axis) { return axis < 0 ? axis : axis % 2; }
int64_t groupsOf(int axis) { return axis <= kTensorAxis ? 1 : axis / 2; }
bool isBatchAxis(int axis) { return baseAxis(axis) == kBatchAxis; }
/// Whether a layout splits the batch (the value depends on the microbatch).
bool splitsBatch(ArrayRef<int> layout) {
  return llvm::any_of(layout, isBatchAxis);
}

/// Which axis splits each dimension of a tensor.
using Layout = SmallVector<int, 4>;

using Phase = PipelinePhase;
using Schedule = PipelineSchedule;
using Task = PipelineTask;

/// A distributed value: one local value per grid point, or a fresh tensor
/// (tensor.empty, optionally filled, or broadcast from replicated values)
/// materialized where and how it is used.
struct DistValue {
  RankedTensorType fullType; // without placement
  Layout layout;
  SmallVector<Value> locals; // per grid point; shared over microbatches
                             // when the layout does not split the batch
  int64_t stage = 0;
  bool fresh = false;
  Value fillScalar;
  /// A fresh value computed by this element-wise op from replicated inputs
  /// (the loss gradient's seed broadcast to [batch, ...]): each consumer
  /// computes its own shard, so a batch-sized value is never made whole
  /// and shared by the microbatches.
  linalg::LinalgOp broadcast;
};

struct Config {
  /// With per-stage degrees (stageTp), tp is their least common multiple:
  /// the degree the tensor-parallel plan is made for.
  int64_t dp, tp, pp, k;
  DeviceOrder order;
  /// stage-tp: each stage's degree (empty: tp everywhere). The stages'
  /// meshes follow each other in device order; inside one, tensor ranks
  /// are fastest when tpInner.
  SmallVector<int64_t> stageTp;
  bool tpInner = true;
  Schedule schedule;
  bool annotate;
  bool report;
  /// stage-transfer other than send: the module's cluster, to plan and
  /// price the transfers of tensor-parallel replicas between stages.
  std::optional<Cluster> plannedTransfers;
  /// A forced strategy (stage-transfer=<strategy>), else the fastest.
  std::optional<reshard::Strategy> transferStrategy;
};

/// `v` padded at the end of each dimension with zeros up to `shape`.
static Value padWithZeros(OpBuilder &b, Location loc, Value v,
                          ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(v.getType());
  auto paddedType =
      RankedTensorType::get(shape, type.getElementType(), type.getEncoding());
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  return tensor::createPadHighOp(paddedType, v, zero, /*nofold=*/false, loc, b);
}

/// Pads the weight of `pad.projection` as the plan says, in `func`: the
/// projection reads the argument padded with zero columns (through its
/// casts and transposes, rebuilt at the padded size) into a padded init,
/// and its users read the result cut back to its size. Returns the padded
/// argument type.
static RankedTensorType padProjection(func::FuncOp func,
                                      const WeightPadding &pad) {
  auto projection = cast<linalg::LinalgOp>(pad.projection);
  BlockArgument arg = func.getArgument(pad.arg);
  auto argType = cast<RankedTensorType>(arg.getType());
  OpBuilder b(projection);
  Location loc = projection.getLoc();
  auto tagged = [&](Operation *op) { copyStageTags(projection, op); };
  // The chain from the argument to the projection (single uses, checked by
  // the plan): each op and the operand it reads the weight through.
  SmallVector<std::pair<linalg::LinalgOp, unsigned>> chain;
  for (Value through = arg;;) {
    OpOperand &use = *through.getUses().begin();
    auto op = cast<linalg::LinalgOp>(use.getOwner());
    chain.push_back({op, use.getOperandNumber()});
    if (op == projection)
      break;
    through = op->getResult(0);
  }
  SmallVector<int64_t> shape(argType.getShape());
  shape[pad.dim] = pad.size;
  Value v = padWithZeros(b, loc, arg, shape);
  // The pad replaces the argument's first reader: its stage.
  copyStageTags(chain.front().first, v.getDefiningOp());
  int64_t dim = pad.dim, extra = pad.size - argType.getDimSize(pad.dim);
  // The padded loop of `op`'s result, read through its input map.
  auto resultDimOf = [](linalg::LinalgOp op, OpOperand &input, int64_t d,
                        OpOperand &init) {
    auto loop =
        cast<AffineDimExpr>(op.getMatchingIndexingMap(&input).getResult(d));
    return static_cast<int64_t>(
        *op.getMatchingIndexingMap(&init).getResultPosition(loop));
  };
  // Clones `op` reading `v` for `input` into a fresh init `extra` larger
  // along the padded dimension (`init`'s defining ops cloned at that size).
  auto rebuild = [&](linalg::LinalgOp op, OpOperand &input) {
    OpOperand &init = op.getDpsInitsMutable()[0];
    int64_t out = resultDimOf(op, input, dim, init);
    auto initType = cast<RankedTensorType>(init.get().getType());
    SmallVector<int64_t> outShape(initType.getShape());
    outShape[out] += extra;
    auto outType = RankedTensorType::get(outShape, initType.getElementType(),
                                         initType.getEncoding());
    IRMapping mapping;
    mapping.map(input.get(), v);
    Value oldInit = init.get();
    Operation *def = oldInit.getDefiningOp(); // checked by the plan
    if (auto fill = dyn_cast<linalg::FillOp>(def)) {
      Operation *newEmpty = b.clone(*fill.getOutputs()[0].getDefiningOp());
      newEmpty->getResult(0).setType(outType);
      IRMapping fillMapping;
      fillMapping.map(fill.getOutputs()[0], newEmpty->getResult(0));
      Operation *newFill = b.clone(*fill, fillMapping);
      newFill->getResult(0).setType(outType);
      mapping.map(oldInit, newFill->getResult(0));
    } else {
      Operation *newEmpty = b.clone(*def);
      newEmpty->getResult(0).setType(outType);
      mapping.map(oldInit, newEmpty->getResult(0));
    }
    Operation *clone = b.clone(*op, mapping);
    clone->getResult(0).setType(outType);
    dim = out;
    v = clone->getResult(0);
  };
  for (auto [op, operand] : chain)
    rebuild(op, op->getOpOperand(operand));
  auto resultType = cast<RankedTensorType>(projection->getResult(0).getType());
  SmallVector<int64_t> zeros(resultType.getRank(), 0),
      ones(resultType.getRank(), 1);
  Value cut = tensor::ExtractSliceOp::create(
      b, loc, resultType, v, ValueRange{}, ValueRange{}, ValueRange{}, zeros,
      resultType.getShape(), ones);
  tagged(cut.getDefiningOp());
  projection->getResult(0).replaceAllUsesWith(cut);
  for (auto [op, operand] : llvm::reverse(chain)) {
    SmallVector<Value> inits(op.getDpsInits());
    op->erase();
    for (Value init : inits)
      while (init && init.use_empty()) {
        Operation *def = init.getDefiningOp();
        init = isa<linalg::FillOp>(def) ? def->getOperand(1) : Value();
        def->erase();
      }
  }
  return RankedTensorType::get(shape, argType.getElementType());
}

class DTPRewriter {
public:
  DTPRewriter(func::FuncOp func, Config config)
      : func(func), context(func.getContext()), builder(context), c(config) {}

  LogicalResult run();

private:
  // The steps of run().
  /// Layers of the program (tags, or inferred from its data flow for a
  /// pipeline) and their number; pp must not exceed it.
  LogicalResult findLayers();
  /// Every batch dimension divides by dp and by dp * microbatches, checked
  /// before anything is built per microbatch.
  LogicalResult checkBatchSplits();
  /// The rank and time step of every (stage, microbatch, phase) task.
  void numberTasks();
  /// Each argument's layout (batch split, tensor split by layer tags or by
  /// the Megatron pairs of TensorParallelPlan.h) and stage.
  LogicalResult chooseArgumentLayouts();
  /// The step function: one local argument per (argument, replica, tensor
  /// rank), batch shards cut into microbatches.
  void createStep(SmallVector<Type> &stepArgTypes);
  /// Every op of the body, distributed.
  LogicalResult rewriteBody();
  /// The step's results, per replica, on the stage that produced them.
  LogicalResult emitResults(ArrayRef<Type> stepArgTypes);

public:
  // Outcome, used to build the wrapper.
  func::FuncOp step;
  SmallVector<Layout> argLayouts, resultLayouts;
  SmallVector<int64_t> argStages, resultStages;
  /// Weights the plan pads (TensorParallelPlan.h), by argument number: the
  /// padded type the step's shards are cut from.
  DenseMap<unsigned, RankedTensorType> paddedArgs;
  /// The lookups the plan splits by rows and prices (TensorParallelPlan::
  /// lookups, forward ones and dist-recompute's copies): each must be
  /// split. (Any other lookup whose table arrives split by rows alone is
  /// split too.)
  DenseSet<Operation *> plannedLookups;
  /// Arguments the plan splits that a degree-1 stage holds whole
  /// (stage-tp), with the planned layout: a planned lookup of one on a
  /// stage of higher degree splits it there.
  DenseMap<Value, Layout> wholeSplitTables;
  /// The step's arguments of argument i are firstStepArg[i] ..
  /// firstStepArg[i + 1] - 1 (dp x tp of its stage, replica-major); the
  /// same for results.
  SmallVector<unsigned> firstStepArg, firstStepResult;
  /// An argument's type, padded where the plan pads it.
  RankedTensorType fullArgType(BlockArgument arg) const {
    if (RankedTensorType padded = paddedArgs.lookup(arg.getArgNumber()))
      return padded;
    return cast<RankedTensorType>(arg.getType());
  }

  /// The stage of layer `layer` (balanced contiguous groups of layers).
  int64_t stageOfLayer(int64_t layer) const {
    return layer * c.pp / std::max<int64_t>(numLayers, 1);
  }
  /// Tensor-parallel degree of stage `s`.
  int64_t tpOf(int64_t s) const {
    return c.stageTp.empty() ? c.tp : c.stageTp[s];
  }
  // The grid of stage s: g = b * tp_s + t with b = d * K + m. A value's
  // locals are indexed by the grid of its stage.
  int64_t numPoints(int64_t s) const { return c.dp * c.k * tpOf(s); }
  int64_t replica(int64_t g, int64_t s) const { return g / tpOf(s) / c.k; }
  int64_t microbatch(int64_t g, int64_t s) const { return (g / tpOf(s)) % c.k; }
  int64_t tensorRank(int64_t g, int64_t s) const { return g % tpOf(s); }
  int64_t point(int64_t d, int64_t m, int64_t t, int64_t s) const {
    return (d * c.k + m) * tpOf(s) + t;
  }
  /// Device of replica d, tensor rank t, stage s, by the device order (with
  /// per-stage degrees: stage s's mesh after those of the stages before).
  int64_t device(int64_t d, int64_t t, int64_t s) const {
    if (c.stageTp.empty())
      return getDeviceId(c.order, d, t, s);
    return getStageMeshDeviceId(c.stageTp, c.dp, c.tpInner, d, t, s);
  }
  int64_t deviceOf(int64_t g, int64_t s) const {
    return device(replica(g, s), tensorRank(g, s), s);
  }
  int64_t axisSize(int axis, int64_t s) const {
    return isBatchAxis(axis) ? c.dp * c.k : tpOf(s);
  }
  /// Divisor of a dimension split over `axis`: its groups times the axis.
  int64_t blockCount(int axis, int64_t s) const {
    return axisSize(axis, s) * groupsOf(axis);
  }
  int64_t axisCoord(int64_t g, int axis, int64_t s) const {
    return isBatchAxis(axis) ? g / tpOf(s) : g % tpOf(s);
  }

  RankedTensorType placed(ArrayRef<int64_t> shape, Type element,
                          int64_t dev) const {
    return RankedTensorType::get(shape, element, DeviceAttr::get(context, dev));
  }
  RankedTensorType localType(RankedTensorType full, const Layout &layout,
                             int64_t g, int64_t s) const {
    SmallVector<int64_t> shape(full.getShape());
    for (auto [d, axis] : llvm::enumerate(layout))
      if (axis != kNone)
        shape[d] /= axisSize(axis, s);
    return placed(shape, full.getElementType(), deviceOf(g, s));
  }

private:
  bool divides(RankedTensorType full, const Layout &layout, int64_t s) const {
    for (auto [d, axis] : llvm::enumerate(layout))
      if (axis != kNone && full.getDimSize(d) % blockCount(axis, s) != 0)
        return false;
    return true;
  }

  /// Records that `op` (just created) belongs to `task`.
  void assign(Operation *op, Task task) {
    taskOf[op] = task;
    if (currentLayer >= 0)
      layerOf[op] = currentLayer;
    for (Value result : op->getResults())
      producer[result] = task;
  }
  Value created(Value v, Task task) {
    assign(v.getDefiningOp(), task);
    return v;
  }
  /// Moves a fresh tensor (`tensor.empty` and its fill) out of every task:
  /// it is created before the first task, and marked a gradient buffer.
  void hoistToPrologue(Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isa<tensor::EmptyOp, linalg::FillOp>(def))
        break;
      taskOf.erase(def);
      producer.erase(v);
      // The simulator reports these bytes as gradients.
      if (isa<tensor::EmptyOp>(def))
        def->setAttr("dist.gradient_buffer", UnitAttr::get(context));
      if (auto fill = dyn_cast<linalg::FillOp>(def))
        v = fill.getOutputs()[0];
      else
        break;
    }
  }
  /// Moves the fresh tensors that only `op` (of `task`) reads, an init's
  /// `tensor.empty` and its fill, into `task`: a buffer is allocated when
  /// the op that writes it runs, not by the first microbatch's task.
  void deferFreshOperands(Operation *op, Task task) {
    for (Value v : op->getOperands()) {
      while (Operation *def = v.getDefiningOp()) {
        auto it = taskOf.find(def);
        if (!isa<tensor::EmptyOp, linalg::FillOp>(def) || !v.hasOneUse() ||
            it == taskOf.end() || rank[it->second] >= rank[task])
          break;
        it->second = task;
        producer[v] = task;
        if (auto fill = dyn_cast<linalg::FillOp>(def))
          v = fill.getOutputs()[0];
        else
          break;
      }
    }
  }
  /// The task of an op created for grid point `g` on behalf of an op of
  /// task `base`: `base` for g's microbatch, but no earlier than the tasks
  /// that produced `inputs`.
  Task taskFor(Task base, int64_t g, ArrayRef<Value> inputs) {
    Task t = base;
    if (t.microbatch >= 0 && t.phase != Phase::Update)
      t.microbatch = microbatch(g, base.stage);
    for (Value input : inputs) {
      auto it = producer.find(input);
      if (it != producer.end() && rank[it->second] > rank[t])
        t = it->second;
    }
    return t;
  }
  Task latest(Task base, ArrayRef<Value> inputs) {
    Task t = base;
    for (Value input : inputs) {
      auto it = producer.find(input);
      if (it != producer.end() && rank[it->second] > rank[t])
        t = it->second;
    }
    return t;
  }

  /// The task of an op of `stage` and `phase`: microbatch 0's (every
  /// microbatch's, when the result depends on it), or the step's update.
  static Task opTask(int64_t stage, Phase phase, bool perMicrobatch) {
    return Task{stage, perMicrobatch || phase != Phase::Update ? 0 : -1, phase};
  }
  /// Maps the scalars a region reads from outside (shared by every device)
  /// for cloning it.
  void mapScalars(Region &region, IRMapping &mapping) const {
    region.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (scalars.contains(operand))
          mapping.map(operand, scalars.lookup(operand));
    });
  }

  SmallVector<Value> conform(Location loc, DistValue &v, const Layout &target,
                             int64_t stage, Task task);
  SmallVector<Value> conformUncached(Location loc, DistValue &v,
                                     const Layout &target, int64_t stage,
                                     Task task);
  /// Moves `group`, one replica's tensor-parallel group (copies, or the
  /// parts of dimension `fromDim` of `shape`), to grid points g .. g + tp
  /// - 1 of `stage` (tp of that stage; whole, or split along `toDim`) by
  /// the resharding planner's best plan (stage-transfer=planned). A
  /// dimension of -1: replicated.
  SmallVector<Value> planStageTransfer(Location loc, ArrayRef<Value> group,
                                       int64_t g, int64_t stage, Task task,
                                       bool perMicrobatch,
                                       ArrayRef<int64_t> shape, int64_t fromDim,
                                       int64_t toDim);
  SmallVector<Value> reduce(Location loc, ArrayRef<Value> locals, int axis,
                            int64_t stage, Task task,
                            ReductionKind kind = ReductionKind::Sum);
  /// In `clone`, point `g`'s instance of a structured op, shifts each
  /// linalg.index of a split loop by the block's offset (`ranges`: the
  /// loops' full sizes).
  void offsetIndices(Operation *clone, ArrayRef<int> loopAxis,
                     ArrayRef<int64_t> ranges, int64_t g, int64_t stage);
  Value concatLocal(Location loc, ArrayRef<Value> parts, int64_t dim,
                    Task task);
  /// Local blocks of `v` along `dim`: `count` slices of `size` elements
  /// starting at offsets(i), concatenated in order.
  Value gatherBlocks(Location loc, Value v, int64_t dim, int64_t count,
                     int64_t size, function_ref<int64_t(int64_t)> offsets,
                     Task task);
  SmallVector<Value> gatherBatch(Location loc, ArrayRef<Value> locals,
                                 int64_t dim, int64_t stage, Task task);

  LogicalResult visitStructured(linalg::LinalgOp op);
  LogicalResult visitReplicated(Operation *op);
  LogicalResult visitReshape(Operation *op);
  /// One value per grid point from `build(g)`: every point when the result
  /// depends on the microbatch, else microbatch 0 of each device, shared by
  /// the device's other points. Each instance goes to `task`'s task for its
  /// point, no earlier than the tasks that produced `inputs` there.
  SmallVector<Value> instantiate(bool perMicrobatch, Task task,
                                 ArrayRef<SmallVector<Value>> inputs,
                                 function_ref<Value(int64_t)> build);
  /// Records the distributed value of `result`.
  void define(Value result, ShapedType type, const Layout &layout,
              int64_t stage, SmallVector<Value> locals);
  LogicalResult visitSlice(tensor::ExtractSliceOp op);
  LogicalResult visitInsertSlice(tensor::InsertSliceOp op);
  LogicalResult visitSoftmax(linalg::SoftmaxOp op);
  LogicalResult visitPad(tensor::PadOp op);
  LogicalResult visitFresh(Operation *op);
  bool deferBroadcast(linalg::LinalgOp op);
  SmallVector<Value> materializeBroadcast(Location loc, DistValue &v,
                                          const Layout &target, int64_t stage,
                                          Task task);
  FailureOr<std::pair<int64_t, Phase>> getRole(Operation *op);
  void reorder();

  DistValue &lookup(Value v) { return values[v]; }

  func::FuncOp func;
  MLIRContext *context;
  OpBuilder builder;
  Config c;
  int64_t numLayers = 1;
  DenseMap<Value, DistValue> values;
  IRMapping scalars;
  /// Task of every op created in the step function (scalars have none).
  DenseMap<Operation *, Task> taskOf;
  /// Task that produced each local value (for ordering consumers).
  DenseMap<Value, Task> producer;
  /// conform() results by (first local value, layout, stage), so that a
  /// value used several times in one layout is gathered or sliced once.
  std::map<std::tuple<void *, std::vector<int>, int64_t>, SmallVector<Value>>
      conformCache;
  /// planStageTransfer() results by the group's first copy, the
  /// destination stage and its split dimension.
  std::map<std::tuple<const void *, int64_t, int64_t>, SmallVector<Value>>
      plannedMoves;

public:
  /// Stage transfers the forced strategy could not serve (sent point to
  /// point instead).
  int64_t unforcedTransfers = 0;
  /// Ops whose batch gather report=true has named.
  llvm::DenseSet<const void *> reportedBatchGathers;
  /// Ops whose gather for a crossing between meshes of different degrees
  /// (stage-tp) report=true has named.
  llvm::DenseSet<const void *> reportedStageGathers;

private:
  std::map<Task, int64_t> rank;
  /// Time step of each task (getPipelineSteps).
  std::map<Task, int64_t> stepOf;
  /// Layer (`dist.layer`) of the source op being rewritten, -1 if none, and
  /// of every op created for one (annotated with the schedule).
  int64_t currentLayer = -1;
  DenseMap<Operation *, int64_t> layerOf;
};

} // namespace

FailureOr<std::pair<int64_t, Phase>> DTPRewriter::getRole(Operation *op) {
  auto layer = op->getAttrOfType<IntegerAttr>("dist.layer");
  auto phase = op->getAttrOfType<StringAttr>("dist.phase");
  if (c.pp == 1 && c.k == 1)
    return std::make_pair<int64_t, Phase>(0, Phase::Forward);
  // One stage: an untagged op runs in the forward of each microbatch (or
  // once, when it does not depend on the microbatch); dependencies order it.
  if (c.pp == 1 && !phase)
    return std::make_pair<int64_t, Phase>(0, Phase::Forward);
  if (!layer || (c.k > 1 && !phase)) {
    op->emitOpError() << "pipeline parallelism and microbatching need ops "
                         "tagged with dist.layer and dist.phase (programs "
                         "from --build-mlp carry them)";
    return failure();
  }
  int64_t stage = stageOfLayer(layer.getInt());
  Phase p = !phase                           ? Phase::Forward
            : phase.getValue() == "backward" ? Phase::Backward
            : phase.getValue() == "update"   ? Phase::Update
                                             : Phase::Forward;
  return std::make_pair(stage, p);
}

Value DTPRewriter::concatLocal(Location loc, ArrayRef<Value> parts, int64_t dim,
                               Task task) {
  if (parts.size() == 1)
    return parts[0];
  auto type = cast<RankedTensorType>(parts[0].getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] *= static_cast<int64_t>(parts.size());
  Value acc = created(tensor::EmptyOp::create(builder, loc, shape,
                                              type.getElementType(),
                                              type.getEncoding()),
                      task);
  SmallVector<int64_t> strides(shape.size(), 1);
  for (auto [i, part] : llvm::enumerate(parts)) {
    SmallVector<int64_t> offsets(shape.size(), 0);
    offsets[dim] = static_cast<int64_t>(i) * type.getDimSize(dim);
    acc = created(tensor::InsertSliceOp::create(
                      builder, loc, part, acc, ValueRange{}, ValueRange{},
                      ValueRange{}, offsets, type.getShape(), strides),
                  task);
  }
  return acc;
}

Value DTPRewriter::gatherBlocks(Location loc, Value v, int64_t dim,
                                int64_t count, int64_t size,
                                function_ref<int64_t(int64_t)> offsets,
                                Task task) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> sizes(type.getShape()), strides(type.getRank(), 1);
  sizes[dim] = size;
  auto blockType =
      RankedTensorType::get(sizes, type.getElementType(), type.getEncoding());
  SmallVector<Value> parts;
  for (int64_t i = 0; i < count; ++i) {
    SmallVector<int64_t> offs(type.getRank(), 0);
    offs[dim] = offsets(i);
    parts.push_back(created(
        tensor::ExtractSliceOp::create(builder, loc, blockType, v, ValueRange{},
                                       ValueRange{}, ValueRange{}, offs, sizes,
                                       strides),
        task));
  }
  return concatLocal(loc, parts, dim, task);
}

/// Gathers the batch axis along `dim`: microbatches concatenated locally,
/// then one all_gather over the replicas. The result is shared by every
/// point of a device.
SmallVector<Value> DTPRewriter::gatherBatch(Location loc,
                                            ArrayRef<Value> locals, int64_t dim,
                                            int64_t stage, Task task) {
  // Data parallelism and microbatches exist to keep the batch split: a
  // gather of it is a decision the plan shows.
  if (c.report && reportedBatchGathers.insert(loc.getAsOpaquePointer()).second)
    mlir::emitRemark(loc) << "dp=" << c.dp << " microbatches=" << c.k
                          << ": the batch (dim " << dim << " of "
                          << locals.front().getType()
                          << " per piece) is gathered for this op";
  int64_t tp = tpOf(stage);
  SmallVector<Value> out(numPoints(stage));
  SmallVector<SmallVector<Value>> perReplica(c.dp * tp);
  for (int64_t d = 0; d < c.dp; ++d)
    for (int64_t t = 0; t < tp; ++t) {
      SmallVector<Value> parts;
      for (int64_t m = 0; m < c.k; ++m)
        parts.push_back(locals[point(d, m, t, stage)]);
      perReplica[d * tp + t].push_back(
          concatLocal(loc, parts, dim, latest(task, parts)));
    }
  for (int64_t t = 0; t < tp; ++t) {
    SmallVector<Value> group;
    for (int64_t d = 0; d < c.dp; ++d)
      group.push_back(perReplica[d * tp + t][0]);
    SmallVector<Value> gathered = group;
    if (c.dp > 1) {
      auto op = AllGatherOp::create(builder, loc, group, dim);
      assign(op, latest(task, group));
      gathered.assign(op.getResults().begin(), op.getResults().end());
    }
    for (int64_t d = 0; d < c.dp; ++d)
      for (int64_t m = 0; m < c.k; ++m)
        out[point(d, m, t, stage)] = gathered[d];
  }
  return out;
}

SmallVector<Value> DTPRewriter::conform(Location loc, DistValue &v,
                                        const Layout &target, int64_t stage,
                                        Task task) {
  int64_t n = numPoints(stage);
  if (v.fresh && v.broadcast) {
    // Computed once per layout and stage, like a value's conversions.
    auto key = std::make_tuple(
        v.broadcast.getOperation()->getResult(0).getAsOpaquePointer(),
        std::vector<int>(target.begin(), target.end()), stage);
    if (auto it = conformCache.find(key); it != conformCache.end())
      return it->second;
    SmallVector<Value> result =
        materializeBroadcast(loc, v, target, stage, task);
    conformCache[key] = result;
    return result;
  }
  if (v.fresh) {
    // Materialize the fresh tensor in the requested layout and stage, once
    // per device when it does not depend on the microbatch.
    bool perMicrobatch = splitsBatch(target);
    SmallVector<Value> out(n);
    for (int64_t g = 0; g < n; ++g) {
      if (!perMicrobatch && microbatch(g, stage) != 0) {
        out[g] = out[point(replica(g, stage), 0, tensorRank(g, stage), stage)];
        continue;
      }
      RankedTensorType type = localType(v.fullType, target, g, stage);
      Task t = perMicrobatch ? taskFor(task, g, {}) : task;
      Value local = created(
          tensor::EmptyOp::create(builder, loc, type.getShape(),
                                  type.getElementType(), type.getEncoding()),
          t);
      if (v.fillScalar)
        local = created(linalg::FillOp::create(builder, loc,
                                               ValueRange{v.fillScalar},
                                               ValueRange{local})
                            .getResult(0),
                        t);
      out[g] = local;
    }
    return out;
  }

  auto cacheKey =
      std::make_tuple(v.locals.front().getAsOpaquePointer(),
                      std::vector<int>(target.begin(), target.end()), stage);
  if (auto it = conformCache.find(cacheKey); it != conformCache.end())
    return it->second;
  SmallVector<Value> result = conformUncached(loc, v, target, stage, task);
  conformCache[cacheKey] = result;
  return result;
}

SmallVector<Value>
DTPRewriter::planStageTransfer(Location loc, ArrayRef<Value> group, int64_t g,
                               int64_t stage, Task task, bool perMicrobatch,
                               ArrayRef<int64_t> shape, int64_t fromDim,
                               int64_t toDim) {
  auto type = cast<RankedTensorType>(group.front().getType());
  SmallVector<int64_t> from, to;
  for (Value copy : group)
    from.push_back(getDevice(copy.getType()).getId());
  for (int64_t t = 0; t < tpOf(stage); ++t)
    to.push_back(deviceOf(g + t, stage));
  // Over a 1-D mesh of `devices`: replicated, or `dim` split over it.
  auto shardingOn = [&](ArrayRef<int64_t> devices, int64_t dim) {
    SmallVector<SmallVector<int64_t>> split(shape.size());
    if (dim >= 0)
      split[dim].push_back(0);
    return ShardingAttr::get(
        MeshAttr::get(context, "", {static_cast<int64_t>(devices.size())},
                      devices),
        split);
  };
  int64_t elementBytes =
      std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  std::string error;
  auto record = [&](const Twine &message) { error = message.str(); };
  FailureOr<reshard::Problem> problem =
      reshard::decompose(shardingOn(from, fromDim), shardingOn(to, toDim),
                         shape, elementBytes, *c.plannedTransfers, record);
  // The devices are the cluster's (checked by the pass), so this holds.
  assert(succeeded(problem) && "stage transfer outside the cluster");
  CollectiveCostModel model(*c.plannedTransfers);
  // A forced strategy wherever it applies; elsewhere send/recv (always
  // applicable), which the pass counts and reports.
  std::optional<reshard::Plan> best = reshard::planFastest(
      *problem, reshard::Balancer::Ensemble, model, c.transferStrategy);
  if (!best) {
    ++unforcedTransfers;
    best = reshard::planFastest(*problem, reshard::Balancer::Ensemble, model,
                                reshard::Strategy::SendRecv);
  }
  // Slices and sends run in the producer's task (sends move to the
  // receiver's time step, see reorder()); gathers and assembly in the
  // consumer's microbatch task. A value every microbatch shares may have
  // consumers in earlier tasks than this one: it moves whole in the
  // producer's task.
  auto prod = producer.find(group.front());
  Task sending = prod != producer.end() ? prod->second : task;
  Task receiving = perMicrobatch ? taskFor(task, g, {}) : sending;
  FailureOr<SmallVector<Value>> moved = reshard::emitTransfers(
      builder, loc, *problem, *best, ValueRange(group), type.getElementType(),
      record, [&](Operation *op, bool destination) {
        assign(op, destination ? receiving : sending);
      });
  assert(succeeded(moved) && "a replicated plan covers every tile");
  return *moved;
}

SmallVector<Value> DTPRewriter::conformUncached(Location loc, DistValue &v,
                                                const Layout &target,
                                                int64_t stage, Task task) {
  int64_t n = numPoints(stage);
  int64_t tp = tpOf(stage), fromTp = tpOf(v.stage);
  SmallVector<Value> locals = v.locals;
  Layout current = v.layout;
  auto overTP = [](int axis) { return baseAxis(axis) == kTensorAxis; };
  // A split over one rank (an op of a degree-1 stage that read a split
  // value) is the whole tensor.
  if (v.stage != stage && fromTp == 1)
    for (int &axis : current)
      if (overTP(axis))
        axis = kNone;
  // The one dimension a layout splits in contiguous blocks over the tensor
  // axis, -1 if none, -2 for anything else (grouped, several).
  auto plainTensorDim = [&](const Layout &layout) -> int64_t {
    int64_t dim = -1;
    for (auto [d, axis] : llvm::enumerate(layout))
      if (overTP(axis)) {
        if (dim != -1 || axis != kTensorAxis)
          return -2;
        dim = d;
      }
    return dim;
  };
  bool crossesMeshes = v.stage != stage && fromTp != tp;
  int64_t fromDim = -1, toDim = -1;
  if (crossesMeshes && c.plannedTransfers) {
    // The planner moves a split or replicated value straight into the split
    // the consumer asks for, between meshes of any sizes.
    fromDim = plainTensorDim(current);
    toDim = plainTensorDim(target);
    if (toDim >= 0 && current[toDim] != kNone && current[toDim] != kTensorAxis)
      toDim = -2;
    if (fromDim == -2 || toDim == -2)
      fromDim = toDim = -1;
  }
  if (crossesMeshes && llvm::any_of(current, overTP) && fromDim < 0) {
    // Meshes of different degrees: the value is gathered on its own stage
    // and crosses as a replicated tensor.
    if (c.report &&
        reportedStageGathers.insert(loc.getAsOpaquePointer()).second)
      mlir::emitRemark(loc)
          << "stage-tp: a value split over tp=" << fromTp << " on stage "
          << v.stage << " is gathered there to cross to stage " << stage
          << " (tp=" << tp << ")";
    for (int &axis : current)
      if (overTP(axis))
        axis = kNone;
    locals =
        conform(loc, v, current, v.stage, Task{v.stage, 0, Phase::Forward});
  }
  bool replicatedOverTP = llvm::none_of(current, overTP);
  if (v.stage != stage && c.plannedTransfers && std::max(tp, fromTp) > 1 &&
      (replicatedOverTP || fromDim >= 0)) {
    // Each tensor-parallel group holds copies or parts: one resharding
    // problem per group, planned once per distinct group (microbatches may
    // share).
    SmallVector<Value> out(n);
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(locals.front().getType()).getShape());
    if (fromDim >= 0)
      shape[fromDim] *= fromTp;
    for (int64_t g = 0; g < n; g += tp) {
      int64_t d = replica(g, stage), m = microbatch(g, stage);
      ArrayRef<Value> group =
          ArrayRef(locals).slice(point(d, m, 0, v.stage), fromTp);
      SmallVector<Value> &moved =
          plannedMoves[{group.front().getAsOpaquePointer(), stage, toDim}];
      if (moved.empty())
        moved = planStageTransfer(loc, group, g, stage, task,
                                  splitsBatch(current), shape, fromDim, toDim);
      for (int64_t t = 0; t < tp; ++t)
        out[g + t] = moved[t];
    }
    locals = std::move(out);
    if (fromDim >= 0)
      current[fromDim] = kNone;
    if (toDim >= 0)
      current[toDim] = kTensorAxis;
  } else if (v.stage != stage) {
    // Move to the consumer's stage: one send per distinct local value and
    // receiving device, from the sender of the same replica, microbatch
    // and tensor rank (modulo a smaller sending mesh; a larger one's other
    // ranks hold the same replicated copies).
    std::map<std::pair<const void *, int64_t>, Value> moved;
    SmallVector<Value> out(n);
    for (int64_t g = 0; g < n; ++g) {
      Value local = locals[point(replica(g, stage), microbatch(g, stage),
                                 tensorRank(g, stage) % fromTp, v.stage)];
      int64_t to = deviceOf(g, stage);
      Value &sent = moved[{local.getAsOpaquePointer(), to}];
      if (!sent) {
        auto type = cast<RankedTensorType>(local.getType());
        auto send = SendOp::create(
            builder, loc, placed(type.getShape(), type.getElementType(), to),
            local);
        // Sent eagerly, as part of the producer's task.
        auto prod = producer.find(local);
        assign(send, prod != producer.end() ? prod->second : task);
        sent = send.getResult();
      }
      out[g] = sent;
    }
    locals = std::move(out);
  }

  for (auto [dim, axis] : llvm::enumerate(current)) {
    if (axis == kNone || axis == target[dim])
      continue;
    if (isBatchAxis(axis)) {
      locals = gatherBatch(loc, locals, dim, stage, task);
      // Point-major blocks back to group-major order (once per device).
      if (int64_t groups = groupsOf(axis); groups > 1) {
        int64_t points = axisSize(axis, stage);
        DenseMap<Value, Value> ordered;
        for (Value &local : locals) {
          Value &done = ordered[local];
          if (!done) {
            auto type = cast<RankedTensorType>(local.getType());
            int64_t block = type.getDimSize(dim) / (groups * points);
            done = gatherBlocks(
                loc, local, dim, groups * points, block,
                [&](int64_t i) {
                  int64_t j = i / points, r = i % points;
                  return (r * groups + j) * block;
                },
                latest(task, {local}));
          }
          local = done;
        }
      }
    } else if (tp > 1) {
      // (Over one rank a tensor split is the whole tensor.)
      SmallVector<Value> gathered(n);
      // Groups whose locals every microbatch shares (an accumulated weight
      // gradient) are gathered once, not once per microbatch.
      DenseMap<Value, int64_t> firstPoint;
      for (int64_t g = 0; g < n; ++g) {
        if (tensorRank(g, stage) != 0)
          continue;
        SmallVector<Value> group;
        for (int64_t t = 0; t < tp; ++t)
          group.push_back(locals[g + t]);
        auto [seen, isNew] = firstPoint.try_emplace(group.front(), g);
        if (!isNew &&
            llvm::equal(ArrayRef(locals).slice(seen->second, tp), group)) {
          for (int64_t t = 0; t < tp; ++t)
            gathered[g + t] = gathered[seen->second + t];
          continue;
        }
        auto op =
            AllGatherOp::create(builder, loc, group, static_cast<int64_t>(dim));
        Task t0 = taskFor(task, g, group);
        assign(op, t0);
        for (int64_t t = 0; t < tp; ++t) {
          gathered[g + t] = op.getResult(t);
          // Rank-major blocks back to group-major order.
          if (int64_t groups = groupsOf(axis); groups > 1) {
            auto type = cast<RankedTensorType>(gathered[g + t].getType());
            int64_t block = type.getDimSize(dim) / (groups * tp);
            gathered[g + t] = gatherBlocks(
                loc, gathered[g + t], dim, groups * tp, block,
                [&](int64_t i) {
                  int64_t j = i / tp, r = i % tp;
                  return (r * groups + j) * block;
                },
                t0);
          }
        }
      }
      locals = gathered;
    }
    current[dim] = kNone;
  }
  bool needSlice = false;
  for (auto [dim, axis] : llvm::enumerate(target))
    needSlice |= axis != kNone && current[dim] != axis;
  if (!needSlice)
    return locals;
  SmallVector<Value> out(n);
  // A local shared by several points is sliced once per distinct block.
  std::map<std::pair<const void *, std::vector<int64_t>>, Value> sliced;
  for (int64_t g = 0; g < n; ++g) {
    auto type = cast<RankedTensorType>(locals[g].getType());
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1);
    SmallVector<std::pair<int64_t, int>> groupedDims;
    std::vector<int64_t> blockKey;
    for (auto [dim, axis] : llvm::enumerate(target)) {
      if (axis == kNone || current[dim] == axis)
        continue;
      blockKey.push_back(axisCoord(g, axis, stage));
      if (groupsOf(axis) > 1) {
        groupedDims.emplace_back(dim, axis);
        continue;
      }
      sizes[dim] /= axisSize(axis, stage);
      offsets[dim] = axisCoord(g, axis, stage) * sizes[dim];
    }
    Value &done = sliced[{locals[g].getAsOpaquePointer(), blockKey}];
    if (done) {
      out[g] = done;
      continue;
    }
    auto sliceType =
        RankedTensorType::get(sizes, type.getElementType(), type.getEncoding());
    Task t = taskFor(task, g, {locals[g]});
    Value local = locals[g];
    if (sliceType != type)
      local = created(tensor::ExtractSliceOp::create(
                          builder, loc, sliceType, local, ValueRange{},
                          ValueRange{}, ValueRange{}, offsets, sizes, strides),
                      t);
    // Grouped splits: this rank's block of every group.
    for (auto [dim, axis] : groupedDims) {
      int64_t groups = groupsOf(axis);
      int64_t size = cast<RankedTensorType>(local.getType()).getDimSize(dim);
      int64_t points = axisSize(axis, stage);
      int64_t block = size / (groups * points);
      int64_t r = axisCoord(g, axis, stage);
      local = gatherBlocks(
          loc, local, dim, groups, block,
          [&](int64_t j) { return (j * points + r) * block; }, t);
    }
    out[g] = done = local;
  }
  return out;
}

void DTPRewriter::offsetIndices(Operation *clone, ArrayRef<int> loopAxis,
                                ArrayRef<int64_t> ranges, int64_t g,
                                int64_t stage) {
  SmallVector<linalg::IndexOp> indices;
  clone->getRegion(0).walk([&](linalg::IndexOp index) {
    if (loopAxis[index.getDim()] != kNone)
      indices.push_back(index);
  });
  for (linalg::IndexOp index : indices) {
    int axis = loopAxis[index.getDim()];
    int64_t offset = axisCoord(g, axis, stage) *
                     (ranges[index.getDim()] / axisSize(axis, stage));
    if (offset == 0)
      continue;
    OpBuilder b(index.getContext());
    b.setInsertionPointAfter(index);
    Value shift = arith::ConstantIndexOp::create(b, index.getLoc(), offset);
    Value global = arith::AddIOp::create(b, index.getLoc(), index, shift);
    index.getResult().replaceAllUsesExcept(global, global.getDefiningOp());
  }
}

SmallVector<Value> DTPRewriter::reduce(Location loc, ArrayRef<Value> locals,
                                       int axis, int64_t stage, Task task,
                                       ReductionKind kind) {
  int64_t n = numPoints(stage), tp = tpOf(stage);
  SmallVector<Value> out(n);
  if (baseAxis(axis) == kTensorAxis) {
    if (tp == 1)
      return SmallVector<Value>(locals);
    // After a batch-axis reduction every microbatch of a replica holds the
    // same sums: such groups share one all-reduce instead of K copies.
    DenseMap<Value, AllReduceOp> reduced;
    for (int64_t g = 0; g < n; ++g) {
      if (tensorRank(g, stage) != 0)
        continue;
      SmallVector<Value> group;
      for (int64_t t = 0; t < tp; ++t)
        group.push_back(locals[g + t]);
      AllReduceOp &op = reduced[group.front()];
      if (!op || !llvm::equal(op.getOperands(), group)) {
        op = AllReduceOp::create(builder, loc, kind, group);
        assign(op, taskFor(task, g, group));
      }
      for (int64_t t = 0; t < tp; ++t)
        out[g + t] = op.getResult(t);
    }
    return out;
  }
  // Batch axis: the microbatches were accumulated in place (the last one's
  // local holds the replica's sum, see visitStructured); all-reduce over the
  // replicas, once per step. (Only sums are split over the batch.)
  assert(kind == ReductionKind::Sum && "partial maxima over the batch axis");
  Task update{stage, -1, Phase::Update};
  if (c.k == 1)
    update = task;
  update = latest(update, locals);
  for (int64_t t = 0; t < tp; ++t) {
    SmallVector<Value> group;
    for (int64_t d = 0; d < c.dp; ++d)
      group.push_back(locals[point(d, c.k - 1, t, stage)]);
    SmallVector<Value> reduced = group;
    if (c.dp > 1) {
      auto op = AllReduceOp::create(builder, loc, ReductionKind::Sum, group);
      assign(op, update);
      reduced.assign(op.getResults().begin(), op.getResults().end());
    }
    for (int64_t d = 0; d < c.dp; ++d)
      for (int64_t m = 0; m < c.k; ++m)
        out[point(d, m, t, stage)] = reduced[d];
  }
  return out;
}

/// A zero-filled fresh tensor: partial sums over split reduction loops add
/// up to the right result.
static bool isZeroInit(const DistValue &v) {
  if (!v.fresh || !v.fillScalar)
    return false;
  return matchPattern(v.fillScalar, m_AnyZeroFloat()) ||
         matchPattern(v.fillScalar, m_Zero());
}

/// Makes the lookup of `clone` (getLookupOf) read `shard`, block `block` of
/// its table along `dim`: indices outside the block read row 0 and yield
/// zero.
static void maskLookup(linalg::LinalgOp clone, Value shard, int64_t dim,
                       int64_t block) {
  tensor::ExtractOp extract = getLookupOf(clone, shard);
  assert(extract && "a lookup's clone reads its shard");
  Location loc = extract.getLoc();
  OpBuilder b(extract);
  int64_t rows = cast<RankedTensorType>(shard.getType()).getDimSize(dim);
  Value index = extract.getIndices()[dim];
  Value local = arith::SubIOp::create(
      b, loc, index, arith::ConstantIndexOp::create(b, loc, block * rows));
  Value inside = createRowInBlock(b, loc, local,
                                  arith::ConstantIndexOp::create(b, loc, rows));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  extract.getIndicesMutable()[dim].set(
      arith::SelectOp::create(b, loc, inside, local, zero));
  b.setInsertionPointAfter(extract);
  Value none = arith::ConstantOp::create(
      b, loc, b.getZeroAttr(extract.getResult().getType()));
  Value masked =
      arith::SelectOp::create(b, loc, inside, extract.getResult(), none);
  extract.getResult().replaceAllUsesExcept(masked, masked.getDefiningOp());
}

/// A split that is one contiguous block per point (not a grouped axis):
/// a shard's loop indices are the global ones shifted by its offset.
static bool isPlainAxis(int axis) {
  return axis == kBatchAxis || axis == kTensorAxis;
}

/// An element-wise op whose tensor inputs are all replicated (or fresh) and
/// whose result has dims no input reads (a broadcast), or that reads such a
/// deferred broadcast, is deferred: it
/// becomes a fresh value that each consumer computes in the layout it needs
/// (materializeBroadcast). Returns whether `op` was deferred.
bool DTPRewriter::deferBroadcast(linalg::LinalgOp op) {
  if (op->getNumResults() != 1 || op.getNumReductionLoops() != 0 ||
      !op.hasPureTensorSemantics())
    return false;
  bool captures = false;
  op->getRegion(0).walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      captures |= isa<RankedTensorType>(operand.getType()) &&
                  !op->getRegion(0).isAncestor(operand.getParentRegion());
  });
  if (captures)
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  llvm::SmallBitVector read(op.getNumLoops());
  bool readsBroadcast = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<RankedTensorType>(input->get().getType()))
      continue;
    const DistValue &v = lookup(input->get());
    if (!v.fresh && llvm::any_of(v.layout, [](int a) { return a != kNone; }))
      return false;
    readsBroadcast |= static_cast<bool>(v.broadcast);
    for (AffineExpr e : maps[input->getOperandNumber()].getResults())
      e.walk([&](AffineExpr sub) {
        if (auto dim = dyn_cast<AffineDimExpr>(sub))
          read.set(dim.getPosition());
      });
  }
  OpOperand *init = op.getDpsInitOperand(0);
  if (!lookup(init->get()).fresh ||
      !maps[init->getOperandNumber()].isIdentity())
    return false;
  // Nothing broadcast, here or upstream: no batch-sized value to avoid.
  if (read.all() && !readsBroadcast)
    return false;
  DistValue out;
  out.fresh = true;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  out.fullType = RankedTensorType::get(type.getShape(), type.getElementType());
  out.broadcast = op;
  values[op->getResult(0)] = out;
  return true;
}

/// Computes a deferred broadcast (deferBroadcast) in `target`'s layout: the
/// op's loops split as the result's dims, its inputs conformed to match
/// (sliced where a split loop reads them), one op per device, or per
/// microbatch when the batch is split.
SmallVector<Value> DTPRewriter::materializeBroadcast(Location loc, DistValue &v,
                                                     const Layout &target,
                                                     int64_t stage, Task task) {
  linalg::LinalgOp op = v.broadcast;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // The init's map is the identity: loop l is result dim l. (Consumers
  // ask only for layouts that divide their operands.)
  Layout loopAxis(target.begin(), target.end());
  // A loop whose index the body reads splits in contiguous blocks only
  // (offsetIndices); for another layout the op is computed whole and cut.
  bool cut = false;
  op->getRegion(0).walk([&](linalg::IndexOp index) {
    int axis = loopAxis[index.getDim()];
    cut |= axis != kNone && !isPlainAxis(axis);
  });
  if (cut) {
    DistValue whole;
    whole.fullType = v.fullType;
    whole.layout.assign(target.size(), kNone);
    whole.locals = conform(loc, v, whole.layout, stage, task);
    whole.stage = stage;
    return conform(loc, whole, target, stage, task);
  }
  bool perMicrobatch = splitsBatch(loopAxis);
  int64_t n = numPoints(stage);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<SmallVector<Value>> operands(op->getNumOperands());
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type) {
      operands[operand.getOperandNumber()].assign(n, scalars.lookup(value));
      continue;
    }
    AffineMap map = maps[operand.getOperandNumber()];
    Layout layout(type.getRank(), kNone);
    for (unsigned r = 0; r < map.getNumResults(); ++r)
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(r)))
        layout[r] = loopAxis[dim.getPosition()];
    operands[operand.getOperandNumber()] =
        conform(loc, lookup(value), layout, stage, task);
  }
  SmallVector<Value> out(n);
  for (int64_t g = 0; g < n; ++g) {
    if (!perMicrobatch && microbatch(g, stage) != 0) {
      out[g] = out[point(replica(g, stage), 0, tensorRank(g, stage), stage)];
      continue;
    }
    SmallVector<Value> inputs;
    IRMapping mapping;
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      mapping.map(operand, operands[i][g]);
      inputs.push_back(operands[i][g]);
    }
    mapScalars(op->getRegion(0), mapping);
    Task t = perMicrobatch ? taskFor(task, g, inputs) : latest(task, inputs);
    Operation *clone = builder.clone(*op, mapping);
    dropStageTags(clone);
    clone->getResult(0).setType(operands[op.getNumDpsInputs()][g].getType());
    offsetIndices(clone, loopAxis, ranges, g, stage);
    assign(clone, t);
    deferFreshOperands(clone, t);
    out[g] = clone->getResult(0);
  }
  return out;
}

LogicalResult DTPRewriter::visitStructured(linalg::LinalgOp op) {
  Location loc = op.getLoc();
  // Loops whose index the body reads are split only into contiguous blocks:
  // each shard's body then adds its block's offset to the index.
  llvm::SmallDenseSet<unsigned> indexedLoops;
  op->getRegion(0).walk(
      [&](linalg::IndexOp index) { indexedLoops.insert(index.getDim()); });
  // Broadcasts are deferred to their consumers when the batch is split (a
  // batch-sized value), and under tp when they compute with linalg.index
  // (a loss's one-hot gradient over the classes: each device computes its
  // block of classes).
  if (c.k > 1 || c.dp > 1 || (c.tp > 1 && !indexedLoops.empty()))
    if (deferBroadcast(op))
      return success();
  FailureOr<std::pair<int64_t, Phase>> role = getRole(op);
  if (failed(role))
    return failure();
  int64_t stage = role->first;
  Phase phase = role->second;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numLoops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();

  // 1. Loop splits from the inputs' layouts, each axis at most once.
  SmallVector<int> loopAxis(numLoops, kNone);
  SmallVector<bool> axisUsed(2, false);
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<RankedTensorType>(input->get().getType()))
      continue;
    DistValue &v = lookup(input->get());
    if (v.fresh)
      continue;
    AffineMap map = maps[input->getOperandNumber()];
    for (auto [d, axis] : llvm::enumerate(v.layout)) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(d));
      if (axis == kNone || !dim || axisUsed[baseAxis(axis)] ||
          loopAxis[dim.getPosition()] != kNone ||
          (indexedLoops.contains(dim.getPosition()) && !isPlainAxis(axis)))
        continue;
      loopAxis[dim.getPosition()] = axis;
      axisUsed[baseAxis(axis)] = true;
    }
  }
  // A one-hot gradient (a loop whose index the body compares: an embedding
  // lookup's gradient over the rows of its table) added to a value split
  // over the tensor axis takes that split on its own loop, as Megatron's
  // vocabulary-parallel embedding: each device computes its block of rows
  // instead of the whole gradient.
  if (tpOf(stage) > 1 && !axisUsed[kTensorAxis] && op->getNumResults() == 1 &&
      op->getResult(0).hasOneUse()) {
    auto user = dyn_cast<linalg::GenericOp>(*op->getResult(0).user_begin());
    AffineMap outMap = maps[op.getNumDpsInputs()];
    if (user && user.getNumReductionLoops() == 0 &&
        llvm::all_of(user.getIndexingMapsArray(),
                     [](AffineMap m) { return m.isIdentity(); }))
      for (Value other : user.getDpsInputs()) {
        auto known = values.find(other);
        if (other == op->getResult(0) || known == values.end() ||
            known->second.fresh || axisUsed[kTensorAxis])
          continue;
        for (auto [d, axis] : llvm::enumerate(known->second.layout)) {
          auto dim = dyn_cast<AffineDimExpr>(outMap.getResult(d));
          if (axis != kTensorAxis || !dim ||
              !indexedLoops.contains(dim.getPosition()) ||
              loopAxis[dim.getPosition()] != kNone ||
              iterators[dim.getPosition()] != utils::IteratorType::parallel)
            continue;
          loopAxis[dim.getPosition()] = kTensorAxis;
          axisUsed[kTensorAxis] = true;
        }
      }
  }
  auto layoutFor = [&](AffineMap map, RankedTensorType type) -> Layout {
    Layout layout(type.getRank(), kNone);
    for (unsigned r = 0; r < map.getNumResults(); ++r)
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(r)))
        layout[r] = loopAxis[dim.getPosition()];
    return layout;
  };
  // A split reduction loop leaves partial results, reduced by the body's
  // combiner: partial sums need a zero init; partial maxima and minima (a
  // loss's row maximum over split classes) any init, and are reduced over
  // the tensor axis only (the batch axis accumulates microbatches by sums).
  // Any other body is not split over its reduction loops.
  std::optional<ReductionKind> combiner = getReductionCombiner(op);
  ReductionKind reduction = combiner.value_or(ReductionKind::Sum);
  for (unsigned l = 0; l < numLoops; ++l) {
    if (loopAxis[l] == kNone || iterators[l] != utils::IteratorType::reduction)
      continue;
    bool partial = combiner == ReductionKind::Sum
                       ? llvm::all_of(op.getDpsInitsMutable(),
                                      [&](OpOperand &init) {
                                        return isZeroInit(lookup(init.get()));
                                      })
                       : combiner && baseAxis(loopAxis[l]) == kTensorAxis;
    if (!partial) {
      llvm::fill(loopAxis, kNone); // replicate this op
      break;
    }
  }
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (type &&
        !divides(lookup(operand.get()).fullType,
                 layoutFor(maps[operand.getOperandNumber()], type), stage))
      llvm::fill(loopAxis, kNone);
  }
  bool perMicrobatch = splitsBatch(loopAxis);
  Task task = opTask(stage, phase, perMicrobatch);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Gradient accumulation in place: when the batch axis splits a reduction
  // loop (a weight gradient, the loss), microbatch m > 0 accumulates into
  // microbatch m - 1's result (its init) instead of a zero tensor of its
  // own, as Megatron and DeepSpeed accumulate into the gradient buffer. One
  // buffer lives whatever K, and the last microbatch holds the replica's
  // sum. Valid because a reduction loop split over the batch requires a sum
  // into a zero init: the body adds each point into the init.
  bool accumulate = false;
  for (unsigned l = 0; l < numLoops; ++l)
    accumulate |= c.k > 1 && isBatchAxis(loopAxis[l]) &&
                  iterators[l] == utils::IteratorType::reduction;

  // 2. Operands in the layouts the loops imply, on this op's stage.
  int64_t n = numPoints(stage);
  SmallVector<SmallVector<Value>> operands(op->getNumOperands());
  for (OpOperand &operand : op->getOpOperands()) {
    Value v = operand.get();
    if (!isa<RankedTensorType>(v.getType())) {
      operands[operand.getOperandNumber()].assign(n, scalars.lookup(v));
      continue;
    }
    DistValue &dv = lookup(v);
    operands[operand.getOperandNumber()] = conform(
        loc, dv, layoutFor(maps[operand.getOperandNumber()], dv.fullType),
        stage, task);
  }

  // Tensors the body reads directly (e.g. an embedding table indexed with
  // tensor.extract) are needed whole on every device, except a lookup's
  // table split by rows over the tensor axis (getLookupOf): each device
  // reads the rows it holds, zero elsewhere, and the results are partial
  // sums over the tensor axis (Megatron's vocabulary-parallel embedding).
  DenseMap<Value, SmallVector<Value>> captured;
  Value splitTable;
  int64_t tableDim = -1;
  // (After the checks above, which may have replicated the op.)
  bool loopsUseTensorAxis =
      llvm::any_of(loopAxis, [](int a) { return baseAxis(a) == kTensorAxis; });
  bool planned = plannedLookups.contains(op);
  op->getRegion(0).walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      if (!isa<RankedTensorType>(operand.getType()) ||
          op->getRegion(0).isAncestor(operand.getParentRegion()) ||
          captured.count(operand))
        continue;
      DistValue &table = lookup(operand);
      // A planned lookup of a table its degree-1 stage holds whole (a tied
      // head's on the last stage, stage-tp) is split here as planned.
      Layout wanted = table.layout;
      if (auto whole = wholeSplitTables.find(operand);
          planned && tpOf(stage) > 1 && whole != wholeSplitTables.end())
        wanted = whole->second;
      auto at = llvm::find(wanted, kTensorAxis);
      bool splittable =
          !loopsUseTensorAxis && !table.fresh && at != wanted.end() &&
          llvm::count_if(wanted, [](int a) { return a != kNone; }) == 1 &&
          getLookupOf(op, operand);
      if (splittable) {
        splitTable = operand;
        tableDim = at - wanted.begin();
        captured[operand] = conform(loc, table, wanted, stage, task);
        continue;
      }
      captured[operand] = conform(
          loc, table,
          Layout(cast<RankedTensorType>(operand.getType()).getRank(), kNone),
          stage, task);
    }
  });
  // The plan priced and reported this lookup as split: gathering its table
  // instead would be a silent departure from the plan.
  // (A stage of degree 1 holds every table whole.)
  if (planned && !splitTable && tpOf(stage) > 1)
    return op->emitOpError()
           << "dist-dtp: the plan splits this lookup's table by rows, but "
              "it does not arrive split by rows alone (tp="
           << tpOf(stage) << ")";

  // 3. One op per grid point (per device when nothing depends on the
  // microbatch).
  SmallVector<SmallVector<Value>> results(op->getNumResults(),
                                          SmallVector<Value>(n));
  for (int64_t g = 0; g < n; ++g) {
    if (!perMicrobatch && microbatch(g, stage) != 0) {
      for (auto &r : results)
        r[g] = r[point(replica(g, stage), 0, tensorRank(g, stage), stage)];
      continue;
    }
    // The previous microbatch's partial sums, accumulated into.
    SmallVector<Value> accumulators;
    if (accumulate && microbatch(g, stage) > 0)
      for (auto &r : results)
        accumulators.push_back(
            r[point(replica(g, stage), microbatch(g, stage) - 1,
                    tensorRank(g, stage), stage)]);
    // This microbatch's task, but not before the operands' producers.
    SmallVector<Value> inputs;
    for (auto &ops : operands)
      inputs.push_back(ops[g]);
    for (auto &entry : captured)
      inputs.push_back(entry.second[g]);
    llvm::append_range(inputs, accumulators);
    Task t = perMicrobatch ? taskFor(task, g, inputs) : latest(task, inputs);
    IRMapping mapping;
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      mapping.map(operand, operands[i][g]);
    for (auto [init, acc] : llvm::zip(op.getDpsInits(), accumulators))
      mapping.map(init, acc);
    mapScalars(op->getRegion(0), mapping);
    for (auto &[value, locals] : captured)
      mapping.map(value, locals[g]);
    Operation *clone = builder.clone(*op, mapping);
    dropStageTags(clone);
    if (!indexedLoops.empty())
      offsetIndices(clone, loopAxis, ranges, g, stage);
    if (splitTable)
      maskLookup(cast<linalg::LinalgOp>(clone), captured[splitTable][g],
                 tableDim, axisCoord(g, kTensorAxis, stage));
    assign(clone, t);
    deferFreshOperands(clone, t);
    for (auto [i, result] : llvm::enumerate(clone->getResults())) {
      result.setType(operands[op.getNumDpsInputs() + i][g].getType());
      results[i][g] = result;
    }
  }

  // A weight gradient (read by the update) lives in a buffer allocated for
  // the whole step, as Megatron's and DeepSpeed's contiguous gradient
  // buffers: its zero init (the first microbatch's) moves to the prologue.
  // Memory then does not depend on where in the backward a gradient is
  // first written, nor on the microbatch count.
  // (By the tags: with one stage and one microbatch every op has the
  // forward role.)
  auto hasPhase = [](Operation *o, StringRef name) {
    auto p = o->getAttrOfType<StringAttr>("dist.phase");
    return p && p.getValue() == name;
  };
  if (hasPhase(op, "backward") &&
      llvm::any_of(op->getUsers(),
                   [&](Operation *user) { return hasPhase(user, "update"); }))
    for (OpOperand &init : op.getDpsInitsMutable())
      if (isZeroInit(lookup(init.get())))
        for (int64_t g = 0; g < n; ++g)
          if (microbatch(g, stage) == 0)
            hoistToPrologue(operands[init.getOperandNumber()][g]);

  // 4. Results; partial results over split reduction loops (sums, maxima,
  // minima) are reduced now.
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    DistValue out;
    out.fullType = lookup(op.getDpsInits()[i]).fullType;
    out.layout = layoutFor(maps[op.getNumDpsInputs() + i], out.fullType);
    out.stage = stage;
    SmallVector<Value> locals = results[i];
    // Every microbatch's value is the accumulated one (the last link).
    if (accumulate)
      for (int64_t g = 0; g < n; ++g)
        locals[g] = results[i][point(replica(g, stage), c.k - 1,
                                     tensorRank(g, stage), stage)];
    for (unsigned l = 0; l < numLoops; ++l)
      if (loopAxis[l] != kNone &&
          iterators[l] == utils::IteratorType::reduction)
        locals = reduce(loc, locals, loopAxis[l], stage, task, reduction);
    if (splitTable)
      locals =
          reduce(loc, locals, kTensorAxis, stage, task, ReductionKind::Sum);
    out.locals = locals;
    values[result] = out;
  }
  return success();
}

LogicalResult DTPRewriter::visitFresh(Operation *op) {
  DistValue v;
  v.fresh = true;
  v.fullType = RankedTensorType::get(
      cast<RankedTensorType>(op->getResult(0).getType()).getShape(),
      cast<RankedTensorType>(op->getResult(0).getType()).getElementType());
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    DistValue &init = lookup(fill.getOutputs()[0]);
    if (!init.fresh || init.fillScalar || init.broadcast)
      return failure(); // not a fill of an empty tensor
    v.fillScalar = scalars.lookup(fill.getInputs()[0]);
  }
  values[op->getResult(0)] = v;
  return success();
}

LogicalResult DTPRewriter::visitReplicated(Operation *op) {
  FailureOr<std::pair<int64_t, Phase>> role = getRole(op);
  if (failed(role))
    return failure();
  int64_t stage = role->first;
  Phase phase = role->second;
  Task task{stage, phase == Phase::Update ? -1 : 0, phase};
  int64_t n = numPoints(stage);
  SmallVector<SmallVector<Value>> operands;
  for (Value v : op->getOperands()) {
    if (auto type = dyn_cast<RankedTensorType>(v.getType()))
      operands.push_back(conform(op->getLoc(), lookup(v),
                                 Layout(type.getRank(), kNone), stage, task));
    else
      operands.push_back(SmallVector<Value>(n, scalars.lookup(v)));
  }
  SmallVector<SmallVector<Value>> results(op->getNumResults(),
                                          SmallVector<Value>(n));
  for (int64_t g = 0; g < n; ++g) {
    if (microbatch(g, stage) != 0) {
      for (auto &r : results)
        r[g] = r[point(replica(g, stage), 0, tensorRank(g, stage), stage)];
      continue;
    }
    SmallVector<Value> inputs;
    for (auto &ops : operands)
      inputs.push_back(ops[g]);
    Task t = latest(task, inputs);
    IRMapping mapping;
    for (auto [i, operand] : llvm::enumerate(op->getOperands()))
      mapping.map(operand, operands[i][g]);
    Operation *clone;
    auto constant = dyn_cast<arith::ConstantOp>(op);
    if (constant && isa<DenseElementsAttr>(constant.getValue())) {
      // A tensor constant's attribute carries its (placed) type too.
      auto dense = cast<DenseElementsAttr>(constant.getValue());
      auto type = cast<RankedTensorType>(dense.getType());
      clone = arith::ConstantOp::create(
          builder, op->getLoc(),
          cast<TypedAttr>(dense.reshape(placed(
              type.getShape(), type.getElementType(), deviceOf(g, stage)))));
    } else {
      clone = builder.clone(*op, mapping);
    }
    dropStageTags(clone);
    assign(clone, t);
    for (auto [i, result] : llvm::enumerate(clone->getResults())) {
      if (auto type = dyn_cast<RankedTensorType>(result.getType()))
        result.setType(
            placed(type.getShape(), type.getElementType(), deviceOf(g, stage)));
      results[i][g] = result;
    }
  }
  for (auto [i, result] : llvm::enumerate(op->getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    DistValue out;
    out.fullType =
        RankedTensorType::get(type.getShape(), type.getElementType());
    out.layout = Layout(type.getRank(), kNone);
    out.stage = stage;
    out.locals = results[i];
    values[result] = out;
  }
  return success();
}

SmallVector<Value>
DTPRewriter::instantiate(bool perMicrobatch, Task task,
                         ArrayRef<SmallVector<Value>> inputs,
                         function_ref<Value(int64_t)> build) {
  int64_t stage = task.stage;
  int64_t n = numPoints(stage);
  SmallVector<Value> results(n);
  for (int64_t g = 0; g < n; ++g) {
    if (!perMicrobatch && microbatch(g, stage) != 0) {
      results[g] =
          results[point(replica(g, stage), 0, tensorRank(g, stage), stage)];
      continue;
    }
    SmallVector<Value> at;
    for (const SmallVector<Value> &input : inputs)
      at.push_back(input[g]);
    Task t = perMicrobatch ? taskFor(task, g, at) : latest(task, at);
    results[g] = created(build(g), t);
    deferFreshOperands(results[g].getDefiningOp(), t);
  }
  return results;
}

void DTPRewriter::define(Value result, ShapedType type, const Layout &layout,
                         int64_t stage, SmallVector<Value> locals) {
  DistValue out;
  out.fullType = RankedTensorType::get(type.getShape(), type.getElementType());
  out.layout = layout;
  out.stage = stage;
  out.locals = std::move(locals);
  values[result] = out;
}

/// Softmax is independent along every dimension but its own: the input's
/// split is kept unless it splits the softmax dimension.
LogicalResult DTPRewriter::visitSoftmax(linalg::SoftmaxOp op) {
  FailureOr<std::pair<int64_t, Phase>> role = getRole(op);
  if (failed(role))
    return failure();
  int64_t stage = role->first;
  Phase phase = role->second;
  DistValue &in = lookup(op.getInput());
  Layout layout(op.getOutputOperandType().getRank(), kNone);
  if (!in.fresh)
    layout = in.layout;
  layout[op.getDimension()] = kNone;
  bool perMicrobatch = splitsBatch(layout);
  Task task = opTask(stage, phase, perMicrobatch);
  SmallVector<Value> inputs = conform(op.getLoc(), in, layout, stage, task);
  SmallVector<Value> inits =
      conform(op.getLoc(), lookup(op.getOutput()), layout, stage, task);
  SmallVector<Value> results =
      instantiate(perMicrobatch, task, {inputs, inits}, [&](int64_t g) {
        return linalg::SoftmaxOp::create(builder, op.getLoc(),
                                         inits[g].getType(), inputs[g],
                                         inits[g], op.getDimension())
            .getResult()[0];
      });
  define(op.getResult()[0], op.getOutputOperandType(), layout, stage,
         std::move(results));
  return success();
}

/// Padding (Conv/MaxPool borders) keeps the splits of the dimensions it does
/// not pad (batch, channels): each device pads its own shard. A padded split
/// dimension is gathered first.
LogicalResult DTPRewriter::visitPad(tensor::PadOp op) {
  // A padded weight's shards are cut from the padded tensor (the wrapper
  // pads it): the pad is that argument.
  if (auto arg = dyn_cast<BlockArgument>(op.getSource());
      arg && arg.getOwner() == &func.getBody().front() &&
      paddedArgs.count(arg.getArgNumber())) {
    DistValue padded = lookup(arg); // a copy: the insertion may rehash
    values[op.getResult()] = std::move(padded);
    return success();
  }
  FailureOr<std::pair<int64_t, Phase>> role = getRole(op);
  if (failed(role))
    return failure();
  int64_t stage = role->first;
  Phase phase = role->second;
  DistValue &in = lookup(op.getSource());
  ArrayRef<int64_t> low = op.getStaticLow(), high = op.getStaticHigh();
  Layout layout(op.getResultType().getRank(), kNone);
  if (!in.fresh)
    for (auto [d, axis] : llvm::enumerate(in.layout))
      if (low[d] == 0 && high[d] == 0)
        layout[d] = axis;
  bool perMicrobatch = splitsBatch(layout);
  Task task = opTask(stage, phase, perMicrobatch);
  SmallVector<Value> operands = conform(op.getLoc(), in, layout, stage, task);
  RankedTensorType outFull = RankedTensorType::get(
      op.getResultType().getShape(), op.getResultType().getElementType());
  SmallVector<Value> results =
      instantiate(perMicrobatch, task, {operands}, [&](int64_t g) -> Value {
        IRMapping mapping;
        mapping.map(op.getSource(), operands[g]);
        mapScalars(op.getRegion(), mapping);
        Operation *clone = builder.clone(*op, mapping);
        dropStageTags(clone);
        clone->getResult(0).setType(localType(outFull, layout, g, stage));
        return clone->getResult(0);
      });
  define(op.getResult(), outFull, layout, stage, std::move(results));
  return success();
}

/// A static slice that keeps every split dimension whole keeps the split:
/// each device slices its own shard at the same offsets.
LogicalResult DTPRewriter::visitSlice(tensor::ExtractSliceOp op) {
  FailureOr<std::pair<int64_t, Phase>> role = getRole(op);
  if (failed(role))
    return failure();
  int64_t stage = role->first;
  Phase phase = role->second;
  DistValue &in = lookup(op.getSource());
  ArrayRef<int64_t> offsets = op.getStaticOffsets(),
                    sizes = op.getStaticSizes(),
                    strides = op.getStaticStrides();
  Layout layout(op.getType().getRank(), kNone);
  Layout inLayout(op.getType().getRank(), kNone);
  // Local offsets of dimensions whose grouped split the slice keeps: a
  // slice of whole groups takes the same groups of every rank's blocks.
  SmallVector<int64_t> localOffsets(offsets);
  if (!in.fresh)
    for (auto [d, axis] : llvm::enumerate(in.layout)) {
      int64_t full = in.fullType.getDimSize(d);
      if (axis != kNone && offsets[d] == 0 && strides[d] == 1 &&
          sizes[d] == full) {
        layout[d] = inLayout[d] = axis;
        continue;
      }
      int64_t groups = groupsOf(axis);
      int64_t groupSize = full / groups;
      if (groups > 1 && strides[d] == 1 && offsets[d] % groupSize == 0 &&
          sizes[d] % groupSize == 0) {
        int64_t kept = sizes[d] / groupSize;
        layout[d] = groupedAxis(baseAxis(axis), kept);
        inLayout[d] = axis;
        localOffsets[d] = offsets[d] / axisSize(axis, stage);
      }
    }
  bool perMicrobatch = splitsBatch(layout);
  Task task = opTask(stage, phase, perMicrobatch);
  SmallVector<Value> operands = conform(op.getLoc(), in, inLayout, stage, task);
  RankedTensorType outFull = RankedTensorType::get(
      op.getType().getShape(), op.getType().getElementType());
  SmallVector<Value> results =
      instantiate(perMicrobatch, task, {operands}, [&](int64_t g) {
        RankedTensorType local = localType(outFull, layout, g, stage);
        SmallVector<int64_t> localSizes(local.getShape());
        return tensor::ExtractSliceOp::create(
            builder, op.getLoc(), local, operands[g], ValueRange{},
            ValueRange{}, ValueRange{}, localOffsets, localSizes, strides);
      });
  define(op.getResult(), outFull, layout, stage, std::move(results));
  return success();
}

/// An insert keeps the source's split of every dimension that it covers
/// whole (a concat along the features of batch-split values, the adjoint
/// of a Split): each device inserts its shard into its block of the
/// destination. A split source that covers whole groups of a dimension (the
/// Q, K or V third of a fused projection's gradient, the adjoint of the
/// grouped slice visitSlice keeps) makes the destination a grouped split:
/// each device inserts its block of those groups among its blocks of all
/// groups, so the fused gradient stays split as the forward's projection.
/// Other dimensions are replicated.
LogicalResult DTPRewriter::visitInsertSlice(tensor::InsertSliceOp op) {
  FailureOr<std::pair<int64_t, Phase>> role = getRole(op);
  if (failed(role))
    return failure();
  int64_t stage = role->first;
  Phase phase = role->second;
  DistValue &src = lookup(op.getSource());
  DistValue &dest = lookup(op.getDest());
  ArrayRef<int64_t> offsets = op.getStaticOffsets(),
                    sizes = op.getStaticSizes(),
                    strides = op.getStaticStrides();
  RankedTensorType destType = op.getDestType();
  Layout layout(destType.getRank(), kNone);
  Layout srcLayout(destType.getRank(), kNone);
  SmallVector<int64_t> localOffsets(offsets);
  if (!src.fresh)
    for (auto [d, axis] : llvm::enumerate(src.layout)) {
      if (axis == kNone || strides[d] != 1)
        continue;
      int64_t full = destType.getDimSize(d);
      if (offsets[d] == 0 && sizes[d] == full) {
        layout[d] = srcLayout[d] = axis;
        continue;
      }
      // Whole groups of the source's own size: the destination holds
      // full / groupSize groups, this one from offset / groupSize on.
      int64_t groupSize = sizes[d] / groupsOf(axis);
      if (full % groupSize != 0 || offsets[d] % groupSize != 0)
        continue;
      int64_t groups = full / groupSize;
      int destAxis = groupedAxis(baseAxis(axis), groups);
      // Only where the destination is fresh (zeros) or already so split:
      // regrouping a computed destination would cost more than it saves.
      if (!dest.fresh && dest.layout[d] != destAxis)
        continue;
      layout[d] = destAxis;
      srcLayout[d] = axis;
      localOffsets[d] = offsets[d] / axisSize(axis, stage);
    }
  if (!divides(dest.fullType, layout, stage)) {
    llvm::fill(layout, kNone);
    llvm::fill(srcLayout, kNone);
    localOffsets.assign(offsets.begin(), offsets.end());
  }
  bool perMicrobatch = splitsBatch(layout);
  Task task = opTask(stage, phase, perMicrobatch);
  SmallVector<Value> srcLocals =
      conform(op.getLoc(), src, srcLayout, stage, task);
  SmallVector<Value> destLocals =
      conform(op.getLoc(), dest, layout, stage, task);
  RankedTensorType outFull =
      RankedTensorType::get(destType.getShape(), destType.getElementType());
  SmallVector<Value> results =
      instantiate(perMicrobatch, task, {srcLocals, destLocals}, [&](int64_t g) {
        auto local = cast<RankedTensorType>(srcLocals[g].getType());
        return tensor::InsertSliceOp::create(
            builder, op.getLoc(), srcLocals[g], destLocals[g], ValueRange{},
            ValueRange{}, ValueRange{}, localOffsets, local.getShape(),
            strides);
      });
  define(op.getResult(), outFull, layout, stage, std::move(results));
  return success();
}

/// Reshapes keep a split: each device reshapes its own shard. A split dim
/// merged behind P outer dims becomes a grouped split with P groups (and
/// back on expansion), e.g. [S, B, E] -> [S * B, E] keeps the batch split.
/// A group with two split dims is gathered first.
LogicalResult DTPRewriter::visitReshape(Operation *op) {
  FailureOr<std::pair<int64_t, Phase>> role = getRole(op);
  if (failed(role))
    return failure();
  int64_t stage = role->first;
  Phase phase = role->second;
  bool expand = isa<tensor::ExpandShapeOp>(op);
  SmallVector<ReassociationIndices> groups =
      expand ? cast<tensor::ExpandShapeOp>(op).getReassociationIndices()
             : cast<tensor::CollapseShapeOp>(op).getReassociationIndices();
  Value source = op->getOperand(0);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  DistValue &in = lookup(source);
  RankedTensorType inType = in.fullType;
  // Expand: source dim i <-> group i of result dims; collapse: result dim i
  // <-> group i of source dims.
  Layout srcLayout(inType.getRank(), kNone);
  Layout outLayout(resultType.getRank(), kNone);
  // Splits of the tensor axis may also sit inside a group: a split dim
  // behind P unsplit outer dims is a grouped split with P groups (and back).
  if (!in.fresh)
    for (auto [g, group] : llvm::enumerate(groups)) {
      if (expand) {
        int axis = in.layout[g];
        if (axis == kNone)
          continue;
        int64_t groupsIn = groupsOf(axis), outer = 1;
        for (int64_t d : group) {
          int64_t size = resultType.getDimSize(d);
          if (groupsIn % outer != 0)
            break;
          int64_t groupsHere = groupsIn / outer;
          if (size % (groupsHere * axisSize(axis, stage)) == 0) {
            srcLayout[g] = axis;
            outLayout[d] = groupedAxis(baseAxis(axis), groupsHere);
            break;
          }
          outer *= size;
        }
      } else {
        int64_t splitDim = -1, outer = 1, outerOfSplit = 1;
        bool single = true;
        for (int64_t d : group) {
          if (in.layout[d] != kNone) {
            single &= splitDim < 0;
            splitDim = d;
            outerOfSplit = outer;
          }
          outer *= inType.getDimSize(d);
        }
        if (splitDim < 0 || !single)
          continue;
        int axis = in.layout[splitDim];
        int merged = groupedAxis(baseAxis(axis), outerOfSplit * groupsOf(axis));
        if (resultType.getDimSize(g) % blockCount(merged, stage) == 0) {
          srcLayout[splitDim] = axis;
          outLayout[g] = merged;
        }
      }
    }
  bool perMicrobatch = splitsBatch(outLayout);
  Task task = opTask(stage, phase, perMicrobatch);
  SmallVector<Value> operands =
      conform(op->getLoc(), in, srcLayout, stage, task);
  RankedTensorType outFull =
      RankedTensorType::get(resultType.getShape(), resultType.getElementType());
  SmallVector<Value> results =
      instantiate(perMicrobatch, task, {operands}, [&](int64_t g) -> Value {
        RankedTensorType local = localType(outFull, outLayout, g, stage);
        if (expand)
          return tensor::ExpandShapeOp::create(builder, op->getLoc(), local,
                                               operands[g], groups);
        return tensor::CollapseShapeOp::create(builder, op->getLoc(), local,
                                               operands[g], groups);
      });
  define(op->getResult(0), outFull, outLayout, stage, std::move(results));
  return success();
}

/// Program order = schedule order of the tasks, creation order inside a
/// task (which respects def-before-use, since every op's task is no earlier
/// than its operands' tasks).
///
/// A send between stages is a receive for its consumer: it runs at the start
/// of the time step of its first consumer's task, before the step's tasks,
/// as a runtime posts a stage's receives when the stage needs them. Placed
/// in the producer's task instead, the send of microbatch m + 1 would sit
/// before the receiver's own compute on microbatch m in the same step and
/// hold it up (with one stream per device a send occupies both ends).
void DTPRewriter::reorder() {
  Block &body = step.getBody().front();
  Operation *terminator = body.getTerminator();
  // (step, 0 for receives | 1 for tasks, task rank, creation index).
  using Key = std::tuple<int64_t, int, int64_t, int64_t>;
  std::vector<std::pair<Key, Operation *>> ops;
  int64_t index = 0;
  auto receive = StringAttr::get(context, "dist.receive");
  for (Operation &op : body.without_terminator()) {
    auto it = taskOf.find(&op);
    if (it == taskOf.end()) {
      ops.push_back({{-1, 1, -1, index++}, &op});
      continue;
    }
    Key key{stepOf[it->second], 1, rank[it->second], index++};
    if (isa<SendOp, BroadcastOp>(op)) {
      // The earliest task that uses the sent value.
      std::optional<Task> consumer;
      for (Operation *user : op.getUsers())
        if (auto u = taskOf.find(user); u != taskOf.end())
          if (!consumer || rank[u->second] < rank[*consumer])
            consumer = u->second;
      if (consumer && stepOf[*consumer] > std::get<0>(key)) {
        key = {stepOf[*consumer], 0, rank[*consumer], std::get<3>(key)};
        it->second = *consumer;
        if (c.annotate)
          op.setAttr(receive, UnitAttr::get(context));
      }
    }
    ops.push_back({key, &op});
  }
  std::sort(ops.begin(), ops.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto &entry : ops)
    entry.second->moveBefore(terminator);
  if (!c.annotate)
    return;
  // One attribute per task and per layer (the search annotates every op of
  // every template it simulates).
  auto taskName = StringAttr::get(context, "dist.task");
  auto layerName = StringAttr::get(context, "dist.layer");
  std::map<Task, StringAttr> taskAttrs;
  IntegerType i64 = IntegerType::get(context, 64);
  for (Operation &op : body.without_terminator()) {
    // Ops of the prologue (gradient buffers) keep their layer.
    if (auto layer = layerOf.find(&op); layer != layerOf.end())
      op.setAttr(layerName, IntegerAttr::get(i64, layer->second));
    auto it = taskOf.find(&op);
    if (it == taskOf.end())
      continue;
    StringAttr &task = taskAttrs[it->second];
    if (!task)
      task = StringAttr::get(context, stringifyPipelineTask(it->second));
    op.setAttr(taskName, task);
  }
}

LogicalResult DTPRewriter::findLayers() {
  // Layers and stages. A pipeline of a program without layers (a CNN, a
  // model exported without block names, plain IR) cuts its data flow into
  // pp balanced layers.
  bool argLayers = false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    argLayers |= static_cast<bool>(func.getArgAttr(i, "dist.layer"));
  bool inferred = c.pp > 1 && !argLayers && !hasLayerTags(func);
  if (inferred && failed(inferLayers(func, c.pp)))
    return failure();
  numLayers = getNumLayers(func);
  // At the function's location: an error on the op would print the whole
  // function as a note.
  if (c.pp > 1 && c.pp > numLayers) {
    InFlightDiagnostic diag = mlir::emitError(func.getLoc())
                              << "pp=" << c.pp << " exceeds the "
                              << std::max<int64_t>(numLayers, 0)
                              << " layers of the program";
    if (inferred)
      diag << " (inferred from its data flow: a layer needs an op with "
              "compute)";
    return diag;
  }
  return success();
}

LogicalResult DTPRewriter::checkBatchSplits() {
  Block &body = func.getBody().front();
  // The batch splits are checked before anything is built per microbatch
  // (microbatches=1e9 on a batch of 8 used to allocate first).
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    auto batch = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                    "dist.batch_dim");
    if (!type || !batch)
      continue;
    int64_t d = batch.getInt();
    if (d < 0 || d >= type.getRank())
      return emitError(arg.getLoc())
             << "dist.batch_dim " << d << " is out of range for " << type;
    if (type.getDimSize(d) % c.dp != 0)
      return emitError(arg.getLoc())
             << "dp=" << c.dp << " does not divide the batch dimension ("
             << type.getDimSize(d) << ") of argument #" << arg.getArgNumber();
    // (The pass checked that the degrees' product does not overflow.)
    if (type.getDimSize(d) % (c.dp * c.k) != 0)
      return emitError(arg.getLoc())
             << "dp * microbatches = " << c.dp * c.k
             << " does not divide the batch dimension (" << type.getDimSize(d)
             << ") of argument #" << arg.getArgNumber();
  }
  return success();
}

void DTPRewriter::numberTasks() {
  for (auto [i, tasks] :
       llvm::enumerate(getPipelineSteps(c.pp, c.k, c.schedule)))
    for (const Task &task : tasks) {
      rank[task] = static_cast<int64_t>(rank.size());
      stepOf[task] = static_cast<int64_t>(i);
    }
  // Tasks a stage does not schedule (e.g. forward-only programs) still
  // need a rank: place them by (stage, microbatch, phase), a step each.
  for (int64_t s = 0; s < c.pp; ++s)
    for (int64_t m = -1; m < c.k; ++m)
      for (Phase p : {Phase::Forward, Phase::Backward, Phase::Update})
        if (rank.try_emplace({s, m, p}, static_cast<int64_t>(rank.size()))
                .second)
          stepOf[{s, m, p}] = static_cast<int64_t>(rank.size());
}

LogicalResult DTPRewriter::chooseArgumentLayouts() {
  Block &body = func.getBody().front();
  // Policy: argument layouts and stages.
  bool taggedWeights = false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    taggedWeights |= static_cast<bool>(func.getArgAttr(i, "dist.layer"));
  // Weights without dist.layer (imported models, plain IR): Megatron pairs
  // derived from the data flow (TensorParallelPlan.h).
  DenseMap<unsigned, WeightSplit> pairedSplits;
  if (c.tp > 1 && !taggedWeights) {
    TensorParallelPricing pricing =
        getTensorParallelPricing(func, c.tp, nullptr, c.dp * c.k);
    // (Widths tp does not divide may be padded: planTensorParallel-
    // WithPadding pads `func` then.)
    PaddedTensorParallelPlan padded =
        planTensorParallelWithPadding(func, c.tp, pricing);
    TensorParallelPlan &plan = padded.plan;
    paddedArgs = padded.args;
    // The step returns padded values; the wrapper cuts them.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    for (unsigned r : padded.results) {
      auto cut = ret.getOperand(r).getDefiningOp<tensor::ExtractSliceOp>();
      ret.setOperand(r, cut.getSource());
      cut.erase();
    }
    if (c.report)
      for (const TensorParallelDecision &d : plan.decisions) {
        // With stage-tp, each op's stage splits over its own degree.
        auto layer = d.op->getAttrOfType<IntegerAttr>("dist.layer");
        int64_t stage = layer ? stageOfLayer(layer.getInt()) : 0;
        InFlightDiagnostic remark = mlir::emitRemark(d.op->getLoc());
        if (c.stageTp.empty())
          remark << "tp=" << c.tp << ": " << d.what;
        else if (tpOf(stage) == 1)
          remark << "stage " << stage << " (tp=1) keeps its weights whole; "
                 << "the plan for tp=" << c.tp << ": " << d.what;
        else
          remark << "stage " << stage << " tp=" << tpOf(stage)
                 << " (plan for tp=" << c.tp << "): " << d.what;
      }
    if (!plan.refused.empty()) {
      for (auto &[arg, why] : plan.refused)
        mlir::emitError(func.getArgument(arg).getLoc())
            << "tp=" << c.tp << " cannot follow the dist.sharding of " << why;
      return failure();
    }
    if (plan.splits.empty()) {
      InFlightDiagnostic diag = mlir::emitError(func.getLoc())
                                << "tp=" << c.tp
                                << " splits no weight of this program";
      if (plan.decisions.empty())
        diag << ": no op reads a weight argument (a floating-point argument "
                "without dist.batch_dim)";
      else
        diag << " (first projection: " << plan.decisions.front().what
             << "); run with report=true for every decision";
      return failure();
    }
    pairedSplits = std::move(plan.splits);
    plannedLookups = std::move(plan.lookups);
    for (const WeightPadding &pad : plan.padded)
      paddedArgs[pad.arg] = padProjection(func, pad);
  }
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
      if (c.dp * c.k > 1)
        layout[d] = kBatchAxis;
    }
    int64_t stage = 0;
    if (auto layer = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                        "dist.layer")) {
      stage = stageOfLayer(layer.getInt());
      if (int64_t tp = tpOf(stage); tp > 1) {
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
    } else if (auto it = pairedSplits.find(arg.getArgNumber());
               it != pairedSplits.end()) {
      layout[it->second.dim] = groupedTensorAxis(it->second.groups);
    }
    if (!func.getArgAttr(arg.getArgNumber(), "dist.layer") && c.pp > 1) {
      // An input lives with its last reader in program order (a weight
      // several stages read, such as a tied embedding, goes to the last of
      // them). Program order, not use-list order: rewrites that recreate
      // readers (dist-unflatten-reshapes) reorder the use list.
      Operation *last = nullptr;
      for (Operation *user : arg.getUsers()) {
        // (A reader inside a body, such as a lookup's tensor.extract, counts
        // with the op around it.)
        Operation *top = body.findAncestorOpInBlock(*user);
        auto layer =
            top ? top->getAttrOfType<IntegerAttr>("dist.layer") : nullptr;
        if (layer && (!last || last->isBeforeInBlock(top))) {
          last = top;
          stage = stageOfLayer(layer.getInt());
        }
      }
    }
    // A stage of degree 1 (stage-tp) holds its weights whole.
    if (tpOf(stage) == 1 && llvm::any_of(layout, [](int axis) {
          return baseAxis(axis) == kTensorAxis;
        })) {
      wholeSplitTables[arg] = layout;
      for (int &axis : layout)
        if (baseAxis(axis) == kTensorAxis)
          axis = kNone;
    }
    argLayouts.push_back(layout);
    argStages.push_back(stage);
  }
  // Optimizer state (a momentum, Adam's moments) is split as its weight, as
  // Megatron keeps it: the update combines them element-wise (identity
  // maps), directly or through the new state (Adam's moments, then the
  // weight from them).
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (!func.getArgAttr(i, "dist.optimizer_state") ||
        llvm::any_of(argLayouts[i], [](int a) { return a != kNone; }))
      continue;
    SmallVector<Operation *> updates;
    for (Operation *user : arg.getUsers())
      if (isa<tensor::PadOp>(user))
        llvm::append_range(updates, user->getUsers());
      else
        updates.push_back(user);
    bool found = false;
    for (size_t u = 0; !found && u < updates.size() && u < 16; ++u) {
      // (Scalars such as Adam's step count are broadcast.)
      auto update = dyn_cast<linalg::LinalgOp>(updates[u]);
      if (!update || update.getNumReductionLoops() != 0 ||
          !llvm::all_of(update->getOpOperands(), [&](OpOperand &o) {
            return update.getMatchingIndexingMap(&o).isIdentity() ||
                   update.getRank(&o) == 0;
          }))
        continue;
      llvm::append_range(updates, update->getUsers());
      for (Value operand : update->getOperands()) {
        // (An argument padded on entry: planTensorParallelWithPadding.)
        if (auto pad = operand.getDefiningOp<tensor::PadOp>())
          operand = pad.getSource();
        auto weight = dyn_cast<BlockArgument>(operand);
        if (!weight || weight.getOwner() != &body || weight == arg ||
            func.getArgAttr(weight.getArgNumber(), "dist.optimizer_state") ||
            fullArgType(weight) != fullArgType(arg) ||
            llvm::none_of(argLayouts[weight.getArgNumber()],
                          [](int a) { return baseAxis(a) == kTensorAxis; }))
          continue;
        argLayouts[i] = argLayouts[weight.getArgNumber()];
        argStages[i] = argStages[weight.getArgNumber()];
        found = true;
        break;
      }
    }
  }
  if (c.dp * c.k > 1 && llvm::none_of(argLayouts, [](const Layout &l) {
        return llvm::is_contained(l, kBatchAxis);
      }))
    return mlir::emitError(func.getLoc())
           << "data parallelism and microbatching need the batch inputs "
              "marked with a dist.batch_dim argument attribute";

  return success();
}

void DTPRewriter::createStep(SmallVector<Type> &stepArgTypes) {
  Block &body = func.getBody().front();
  // The step function takes one local argument per (argument, replica,
  // tensor rank): batch inputs hold the replica's whole shard, split into
  // microbatches inside.
  auto replicaLayout = [&](const Layout &layout, RankedTensorType full,
                           int64_t d, int64_t t, int64_t s) {
    SmallVector<int64_t> shape(full.getShape());
    for (auto [dim, axis] : llvm::enumerate(layout))
      if (axis == kBatchAxis)
        shape[dim] /= c.dp;
      else if (baseAxis(axis) == kTensorAxis)
        shape[dim] /= tpOf(s);
    return placed(shape, full.getElementType(), device(d, t, s));
  };
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    RankedTensorType full = fullArgType(arg);
    firstStepArg.push_back(stepArgTypes.size());
    for (int64_t d = 0; d < c.dp; ++d)
      for (int64_t t = 0; t < tpOf(argStages[i]); ++t)
        stepArgTypes.push_back(
            replicaLayout(argLayouts[i], full, d, t, argStages[i]));
  }
  firstStepArg.push_back(stepArgTypes.size());
  builder.setInsertionPoint(func);
  step = func::FuncOp::create(builder, func.getLoc(),
                              (func.getSymName() + "_dtp").str(),
                              builder.getFunctionType(stepArgTypes, {}));
  // Batch inputs stay marked: the simulator streams them from the host one
  // microbatch at a time instead of keeping the whole batch resident.
  // So does optimizer state (the simulator's memory breakdown).
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    for (StringRef name : {"dist.batch_dim", "dist.optimizer_state"})
      if (auto attr = func.getArgAttr(i, name))
        for (unsigned at = firstStepArg[i]; at < firstStepArg[i + 1]; ++at)
          step.setArgAttr(at, name, attr);
  // Whole replicas keep the argument's name, so that tools can bind them
  // to the model's weights (--weights-from); shards hold other values.
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    StringAttr name = func.getArgAttrOfType<StringAttr>(i, "dist.name");
    if (auto loc = dyn_cast<NameLoc>(arg.getLoc()); !name && loc)
      name = loc.getName();
    // dist-place's placeholders ("argN") name a position, not a weight.
    if (!name || (name.getValue().starts_with("arg") &&
                  llvm::all_of(name.getValue().drop_front(3), llvm::isDigit)))
      continue;
    for (unsigned at = firstStepArg[i]; at < firstStepArg[i + 1]; ++at) {
      if (cast<RankedTensorType>(stepArgTypes[at]).getShape() ==
          cast<RankedTensorType>(arg.getType()).getShape())
        step.setArgAttr(at, "dist.name", name);
    }
  }
  Block *stepBody = step.addEntryBlock();
  builder.setInsertionPointToStart(stepBody);
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    RankedTensorType full = fullArgType(arg);
    DistValue v;
    v.fullType = RankedTensorType::get(full.getShape(), full.getElementType());
    v.layout = argLayouts[i];
    v.stage = argStages[i];
    int64_t tp = tpOf(v.stage);
    v.locals.resize(numPoints(v.stage));
    for (int64_t d = 0; d < c.dp; ++d)
      for (int64_t t = 0; t < tp; ++t) {
        Value shard = stepBody->getArgument(firstStepArg[i] + d * tp + t);
        for (int64_t m = 0; m < c.k; ++m) {
          Value local = shard;
          int64_t batchDim = -1;
          for (auto [dim, axis] : llvm::enumerate(argLayouts[i]))
            if (axis == kBatchAxis)
              batchDim = dim;
          if (batchDim >= 0 && c.k > 1) {
            auto type = cast<RankedTensorType>(shard.getType());
            SmallVector<int64_t> offsets(type.getRank(), 0),
                sizes(type.getShape()), strides(type.getRank(), 1);
            sizes[batchDim] /= c.k;
            offsets[batchDim] = m * sizes[batchDim];
            Task task{v.stage, m, Phase::Forward};
            local =
                created(tensor::ExtractSliceOp::create(
                            builder, arg.getLoc(),
                            RankedTensorType::get(sizes, type.getElementType(),
                                                  type.getEncoding()),
                            shard, ValueRange{}, ValueRange{}, ValueRange{},
                            offsets, sizes, strides),
                        task);
          }
          v.locals[point(d, m, t, v.stage)] = local;
        }
      }
    values[arg] = v;
  }
}

LogicalResult DTPRewriter::rewriteBody() {
  Block &body = func.getBody().front();
  for (Operation &op : body.without_terminator()) {
    auto layerAttr = op.getAttrOfType<IntegerAttr>("dist.layer");
    currentLayer = layerAttr ? layerAttr.getInt() : -1;
    bool touchesTensors =
        llvm::any_of(op.getResultTypes(),
                     [](Type t) { return isa<RankedTensorType>(t); }) ||
        llvm::any_of(op.getOperandTypes(),
                     [](Type t) { return isa<RankedTensorType>(t); });
    if (!touchesTensors && op.getNumRegions() == 0) {
      // Scalars are shared: one definition serves every device.
      Operation *clone = builder.clone(op, scalars);
      dropStageTags(clone);
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
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op);
        slice && slice.getOffsets().empty() && slice.getSizes().empty() &&
        slice.getStrides().empty() &&
        slice.getSourceType().getRank() == slice.getType().getRank()) {
      if (failed(visitSlice(slice)))
        return failure();
      continue;
    }
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op);
        insert && insert.getOffsets().empty() && insert.getSizes().empty() &&
        insert.getStrides().empty() &&
        insert.getSourceType().getRank() == insert.getDestType().getRank()) {
      if (failed(visitInsertSlice(insert)))
        return failure();
      continue;
    }
    if (auto softmax = dyn_cast<linalg::SoftmaxOp>(op)) {
      if (failed(visitSoftmax(softmax)))
        return failure();
      continue;
    }
    if (auto pad = dyn_cast<tensor::PadOp>(op);
        pad && pad.getLow().empty() && pad.getHigh().empty()) {
      if (failed(visitPad(pad)))
        return failure();
      continue;
    }
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
      if (failed(visitReshape(&op)))
        return failure();
      continue;
    }
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

  currentLayer = -1;
  return success();
}

LogicalResult DTPRewriter::emitResults(ArrayRef<Type> stepArgTypes) {
  Block &body = func.getBody().front();
  // Results: batch-split results are returned per replica (microbatches
  // concatenated), on the stage that produced them.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> stepResults;
  for (Value v : ret.getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      return ret.emitOpError() << "dist-dtp returns tensors only";
    DistValue &dv = lookup(v);
    int64_t stage = dv.fresh ? c.pp - 1 : dv.stage;
    Task last{stage, -1, Phase::Update};
    Layout layout = dv.fresh ? Layout(type.getRank(), kNone) : dv.layout;
    // The wrapper reassembles contiguous splits and grouped tensor splits
    // (a fused Q/K/V weight stays split as the step uses it, as Megatron
    // keeps it); a grouped batch split is gathered here, as microbatches
    // concatenate along contiguous batch dimensions only.
    for (int &axis : layout)
      if (groupsOf(axis) > 1 && isBatchAxis(axis))
        axis = kNone;
    SmallVector<Value> locals = conform(ret.getLoc(), dv, layout, stage, last);
    firstStepResult.push_back(stepResults.size());
    for (int64_t d = 0; d < c.dp; ++d)
      for (int64_t t = 0; t < tpOf(stage); ++t) {
        SmallVector<Value> parts;
        for (int64_t m = 0; m < c.k; ++m)
          parts.push_back(locals[point(d, m, t, stage)]);
        int64_t batchDim = -1;
        for (auto [dim, axis] : llvm::enumerate(layout))
          if (axis == kBatchAxis)
            batchDim = dim;
        stepResults.push_back(
            batchDim >= 0 && c.k > 1
                ? concatLocal(ret.getLoc(), parts, batchDim, last)
                : parts[0]);
      }
    resultLayouts.push_back(layout);
    resultStages.push_back(stage);
  }
  firstStepResult.push_back(stepResults.size());
  func::ReturnOp::create(builder, ret.getLoc(), stepResults);
  step.setFunctionType(builder.getFunctionType(
      stepArgTypes, ValueRange(stepResults).getTypes()));
  return success();
}

LogicalResult DTPRewriter::run() {
  if (failed(findLayers()) || failed(checkBatchSplits()))
    return failure();
  numberTasks();
  if (failed(chooseArgumentLayouts()))
    return failure();
  SmallVector<Type> stepArgTypes;
  createStep(stepArgTypes);
  if (failed(rewriteBody()) || failed(emitResults(stepArgTypes)))
    return failure();
  reorder();
  return success();
}

namespace {
struct DistDTPPass : public dist::impl::DistDTPPassBase<DistDTPPass> {
  using DistDTPPassBase::DistDTPPassBase;
  void runOnOperation() final;
};
} // namespace

/// The `count` blocks of `block` elements along `dim` of `v` that start at
/// `offsetOf(k)`, concatenated in k order (the wrapper's grouped shards and
/// their reassembly).
static Value takeBlocks(OpBuilder &b, Location loc, Value v, int64_t dim,
                        int64_t count, int64_t block,
                        function_ref<int64_t(int64_t)> offsetOf) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> blockSizes(type.getShape()), outSizes(blockSizes),
      strides(type.getRank(), 1);
  blockSizes[dim] = block;
  outSizes[dim] = block * count;
  auto blockType = RankedTensorType::get(blockSizes, type.getElementType(),
                                         type.getEncoding());
  Value acc = tensor::EmptyOp::create(b, loc, outSizes, type.getElementType(),
                                      type.getEncoding());
  for (int64_t k = 0; k < count; ++k) {
    SmallVector<int64_t> src(type.getRank(), 0), dst(type.getRank(), 0);
    src[dim] = offsetOf(k);
    dst[dim] = k * block;
    Value part = tensor::ExtractSliceOp::create(
        b, loc, blockType, v, ValueRange{}, ValueRange{}, ValueRange{}, src,
        blockSizes, strides);
    acc = tensor::InsertSliceOp::create(b, loc, part, acc, ValueRange{},
                                        ValueRange{}, ValueRange{}, dst,
                                        blockSizes, strides);
  }
  return acc;
}

/// Replaces the body of `func` by: distribute the inputs (broadcast from
/// their device, keep each device's shard), call the step function, gather
/// the results back to the device they were on.
static void rewriteWrapper(func::FuncOp func, DTPRewriter &r, int64_t dp) {
  Block &body = func.getBody().front();
  // (Padded results: the function's own result types, cut back to.)
  SmallVector<Type> resultTypes(func.getFunctionType().getResults());
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    op.erase();
  OpBuilder b = OpBuilder::atBlockEnd(&body);
  Location loc = func.getLoc();
  auto deviceOf = [](Type t) { return getDevice(t).getId(); };
  // Shard j of a value on a mesh of dp x tp (its stage's).
  auto coord = [&](int64_t j, int axis, int64_t tp) {
    return axis == kBatchAxis ? j / tp : j % tp;
  };

  // A gathered grouped split holds point t's block of group j at
  // (t * groups + j) * block; the whole tensor has it at (j * n + t) * block.
  auto regroup = [&](Value gathered, int64_t d, int64_t groups,
                     int64_t n) -> Value {
    if (groups == 1)
      return gathered;
    int64_t block =
        cast<RankedTensorType>(gathered.getType()).getDimSize(d) / (groups * n);
    return takeBlocks(b, loc, gathered, d, groups * n, block, [&](int64_t k) {
      return ((k % n) * groups + k / n) * block;
    });
  };

  SmallVector<Value> stepArgs;
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    auto type = cast<RankedTensorType>(arg.getType());
    RankedTensorType padded = r.paddedArgs.lookup(i);
    unsigned first = r.firstStepArg[i];
    int64_t perArg = r.firstStepArg[i + 1] - first, tp = perArg / dp;
    SmallVector<int64_t> devices;
    for (int64_t j = 0; j < perArg; ++j)
      devices.push_back(deviceOf(r.step.getArgumentTypes()[first + j]));
    SmallVector<Value> whole(perArg);
    if (perArg == 1 && devices[0] == deviceOf(type)) {
      whole[0] = arg;
    } else {
      bool sourceInGroup = llvm::is_contained(devices, deviceOf(type));
      SmallVector<Type> types;
      if (!sourceInGroup)
        types.push_back(type);
      for (int64_t d : devices)
        types.push_back(withDevice(type, d));
      auto bcast = BroadcastOp::create(b, loc, types, arg);
      for (int64_t j = 0; j < perArg; ++j)
        whole[j] = bcast.getResult(j + (sourceInGroup ? 0 : 1));
    }
    if (padded) {
      // Zero columns up to the padded size, then cut as any other split.
      for (Value &w : whole)
        w = padWithZeros(b, loc, w, padded.getShape());
      type = RankedTensorType::get(padded.getShape(), type.getElementType(),
                                   type.getEncoding());
    }
    for (int64_t j = 0; j < perArg; ++j) {
      auto local = cast<RankedTensorType>(r.step.getArgumentTypes()[first + j]);
      if (local.getShape() == type.getShape()) {
        stepArgs.push_back(whole[j]);
        continue;
      }
      // Contiguous splits first (grouped dimensions kept whole), then this
      // rank's block of every group of the grouped ones.
      SmallVector<int64_t> offsets, sizes(local.getShape()),
          strides(local.getRank(), 1);
      for (auto [d, axis] : llvm::enumerate(r.argLayouts[i])) {
        if (groupsOf(axis) > 1) {
          sizes[d] = type.getDimSize(d);
          offsets.push_back(0);
          continue;
        }
        offsets.push_back(axis == kNone ? 0 : coord(j, axis, tp) * sizes[d]);
      }
      Value shard = whole[j];
      if (ArrayRef<int64_t>(sizes) != type.getShape())
        shard = tensor::ExtractSliceOp::create(
            b, loc,
            RankedTensorType::get(sizes, local.getElementType(),
                                  local.getEncoding()),
            shard, ValueRange{}, ValueRange{}, ValueRange{}, offsets, sizes,
            strides);
      for (auto [d, axis] : llvm::enumerate(r.argLayouts[i])) {
        int64_t groups = groupsOf(axis);
        if (groups == 1)
          continue;
        // This rank's block of every group, in group order.
        int64_t block = cast<RankedTensorType>(shard.getType()).getDimSize(d) /
                        (groups * tp);
        int64_t mine = coord(j, axis, tp);
        shard = takeBlocks(b, loc, shard, d, groups, block,
                           [&](int64_t g) { return (g * tp + mine) * block; });
      }
      stepArgs.push_back(shard);
    }
  }
  auto call = func::CallOp::create(b, loc, r.step, stepArgs);

  SmallVector<Value> results;
  for (auto [ri, type] : llvm::enumerate(resultTypes)) {
    auto placedType = cast<RankedTensorType>(type);
    unsigned first = r.firstStepResult[ri];
    int64_t perArg = r.firstStepResult[ri + 1] - first, tp = perArg / dp;
    SmallVector<Value> locals;
    for (int64_t j = 0; j < perArg; ++j)
      locals.push_back(call.getResult(first + j));
    for (auto [d, axis] : llvm::enumerate(r.resultLayouts[ri])) {
      if (axis == kNone)
        continue;
      int64_t size = axis == kBatchAxis ? dp : tp;
      SmallVector<Value> next(perArg);
      for (int64_t j = 0; j < perArg; ++j) {
        if (coord(j, axis, tp) != 0)
          continue;
        SmallVector<Value> group;
        SmallVector<int64_t> members;
        for (int64_t x = 0; x < size; ++x) {
          int64_t m = axis == kBatchAxis ? x * tp + j % tp : (j / tp) * tp + x;
          members.push_back(m);
          group.push_back(locals[m]);
        }
        if (size == 1) {
          next[j] = locals[j];
          continue;
        }
        auto gather =
            AllGatherOp::create(b, loc, group, static_cast<int64_t>(d));
        for (auto [x, m] : llvm::enumerate(members))
          next[m] = regroup(gather.getResult(x), d, groupsOf(axis), size);
      }
      locals = next;
    }
    Value home = locals[0];
    auto homeType = cast<RankedTensorType>(home.getType());
    if (homeType.getShape() != placedType.getShape()) {
      // A padded result (planTensorParallelWithPadding): its real part.
      SmallVector<int64_t> zeros(homeType.getRank(), 0),
          ones(homeType.getRank(), 1);
      home = tensor::ExtractSliceOp::create(
          b, loc,
          RankedTensorType::get(placedType.getShape(),
                                placedType.getElementType(),
                                homeType.getEncoding()),
          home, ValueRange{}, ValueRange{}, ValueRange{}, zeros,
          placedType.getShape(), ones);
    }
    if (deviceOf(home.getType()) != deviceOf(placedType))
      home = SendOp::create(b, loc, placedType, home);
    results.push_back(home);
  }
  func::ReturnOp::create(b, loc, results);
}

/// The layout of a wrapper argument or result as a `dist.sharding` over the
/// mesh [dp, tp] of its stage (axis 0 the replicas, axis 1 the tensor ranks;
/// `locals` the step's per-point types, whose devices the mesh lists): a
/// batch split is over axis 0, a tensor split over axis 1, and a dimension
/// the step holds padded (a padded head) gets offsets that say which real
/// elements each shard holds, and a grouped split (a fused Q/K/V weight's
/// blocks) is strided (`groups`).
static ShardingAttr layoutSharding(MLIRContext *context, RankedTensorType type,
                                   ArrayRef<int> layout, TypeRange locals,
                                   int64_t stage, int64_t dp, int64_t tp,
                                   int64_t pp) {
  SmallVector<int64_t> devices;
  for (Type local : locals)
    devices.push_back(getDevice(local).getId());
  SmallVector<SmallVector<int64_t>> split(layout.size());
  SmallVector<int64_t> offsets, groups(layout.size(), 1);
  bool padded = false;
  auto localShape = cast<RankedTensorType>(locals.front()).getShape();
  for (auto [d, axis] : llvm::enumerate(layout)) {
    if (axis == kNone)
      continue;
    int64_t meshAxis = isBatchAxis(axis) ? 0 : 1;
    int64_t shards = meshAxis == 0 ? dp : tp;
    if (shards == 1)
      continue;
    split[d].push_back(meshAxis);
    groups[d] = groupsOf(axis);
    int64_t size = type.getDimSize(d);
    // The step's shards of a padded dimension hold `block` elements each;
    // the last ones end in (or are only) padding.
    int64_t block = localShape[d];
    padded |= block * shards != size;
    for (int64_t s = 0; s <= shards; ++s)
      offsets.push_back(std::min(s * block, size));
  }
  // Groups and offsets do not combine; the plan pads only final
  // projections, whose outputs are never cut into groups.
  assert(!(padded && llvm::any_of(groups, [](int64_t g) { return g > 1; })) &&
         "a padded grouped split");
  std::string name = pp > 1 ? "stage " + std::to_string(stage) : "";
  // Devices 0 .. dp*tp-1 in order are the mesh's default.
  bool inOrder = llvm::equal(devices, llvm::seq<int64_t>(0, devices.size()));
  auto mesh = MeshAttr::get(context, name, {dp, tp},
                            inOrder ? SmallVector<int64_t>() : devices);
  return ShardingAttr::get(mesh, split,
                           padded ? offsets : SmallVector<int64_t>(), groups);
}

/// annotate-shardings: each argument and result of the wrapper `func` gets
/// the `dist.sharding` its values have in the step.
static void annotateShardingAttrs(func::FuncOp func, DTPRewriter &r, int64_t dp,
                                  int64_t pp) {
  MLIRContext *context = func.getContext();
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    int64_t stage = r.argStages[i];
    func.setArgAttr(
        i, kShardingAttrName,
        layoutSharding(context,
                       cast<RankedTensorType>(func.getArgument(i).getType()),
                       r.argLayouts[i],
                       r.step.getArgumentTypes().slice(r.firstStepArg[i],
                                                       dp * r.tpOf(stage)),
                       stage, dp, r.tpOf(stage), pp));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    int64_t stage = r.resultStages[i];
    func.setResultAttr(
        i, kShardingAttrName,
        layoutSharding(context,
                       cast<RankedTensorType>(func.getResultTypes()[i]),
                       r.resultLayouts[i],
                       r.step.getResultTypes().slice(r.firstStepResult[i],
                                                     dp * r.tpOf(stage)),
                       stage, dp, r.tpOf(stage), pp));
  }
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
  // stage-tp: a degree per stage. Equal degrees are plain tp; otherwise the
  // plan is made for their least common multiple.
  SmallVector<int64_t> stageDegrees(stageTp.begin(), stageTp.end());
  int64_t planTp = tp, meshes = 0;
  std::string product = "dp*tp*pp";
  if (!stageDegrees.empty()) {
    if (tp != 1)
      return fail("dist-dtp: give tp or stage-tp, not both (tp=" + Twine(tp) +
                  ")");
    if (static_cast<int64_t>(stageDegrees.size()) != pp)
      return fail("dist-dtp: stage-tp has " + Twine(stageDegrees.size()) +
                  " degrees for pp=" + Twine(pp) + " stages");
    if (mapping != "tp-inner" && mapping != "dp-inner")
      return fail("dist-dtp: with stage-tp each stage's mesh follows the "
                  "previous one's; mapping must be tp-inner or dp-inner (got "
                  "'" +
                  mapping + "')");
    planTp = 1;
    for (int64_t degree : stageDegrees) {
      // (Degrees up to 2^20 keep the sum and the multiple in range.)
      if (degree < 1 || degree > (int64_t(1) << 20))
        return fail("dist-dtp: stage-tp degrees must be in 1 .. 2^20 (got " +
                    Twine(degree) + ")");
      meshes += degree;
      planTp = std::lcm(planTp, degree);
      if (planTp > (int64_t(1) << 20))
        return fail("dist-dtp: the least common multiple of the stage-tp "
                    "degrees exceeds 2^20");
    }
    if (llvm::all_equal(stageDegrees))
      stageDegrees.clear();
    else
      product = "dp*(sum of stage-tp)";
  } else if (llvm::MulOverflow(tp.getValue(), pp.getValue(), meshes)) {
    meshes = -1;
  }
  // Products of the degrees size the grid and the device count.
  int64_t used = 0, points = 0;
  if (meshes < 0 || llvm::MulOverflow(dp.getValue(), meshes, used) ||
      llvm::MulOverflow(used, microbatches.getValue(), points))
    return fail("dist-dtp: dp=" + Twine(dp) + ", tp=" + Twine(tp) +
                ", pp=" + Twine(pp) + ", microbatches=" + Twine(microbatches) +
                ": the product of the degrees overflows int64");
  if (devices < 0)
    return fail("dist-dtp: devices=" + Twine(devices) + " is negative");
  if (devices > 0 && used != devices)
    return fail("dist-dtp: " + product + " = " + Twine(used) +
                " differs from the " + Twine(devices) +
                " devices given (devices=" + Twine(devices) + ")");
  if (ClusterAttr cluster = getModuleCluster(module))
    if (used > cluster.getNumDevices())
      return fail("dist-dtp: " + product + " = " + Twine(used) +
                  " exceeds the " + Twine(cluster.getNumDevices()) +
                  " devices of the attached "
                  "cluster '" +
                  cluster.getName() + "'");
  std::string orderError;
  std::optional<DeviceOrder> order =
      parseDeviceOrder(mapping, dp, planTp, pp, orderError);
  if (!order)
    return fail("dist-dtp: " + orderError);

  std::string entryError;
  func::FuncOp func =
      lookupEntryFunction(module, entry, "entry=NAME", entryError);
  if (!func)
    return fail("dist-dtp: " + entryError);

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

  std::optional<Cluster> plannedTransfers;
  // A forced planner strategy; Planned leaves the choice to the planner.
  std::optional<reshard::Strategy> transferStrategy;
  switch (stageTransfer) {
  case StageTransfer::Send:
  case StageTransfer::Planned:
    break;
  case StageTransfer::SendRecv:
    transferStrategy = reshard::Strategy::SendRecv;
    break;
  case StageTransfer::LocalAllGather:
    transferStrategy = reshard::Strategy::LocalAllGather;
    break;
  case StageTransfer::GlobalAllGather:
    transferStrategy = reshard::Strategy::GlobalAllGather;
    break;
  case StageTransfer::Broadcast:
    transferStrategy = reshard::Strategy::Broadcast;
    break;
  }
  std::string transferName =
      transferStrategy ? reshard::stringifyStrategy(*transferStrategy).str()
                       : std::string("planned");
  if (stageTransfer != StageTransfer::Send) {
    ClusterAttr cluster = getModuleCluster(module);
    if (!cluster)
      return fail("dist-dtp: stage-transfer=" + transferName +
                  " needs the module's dist.cluster (attach one with "
                  "--dist-attach-cluster)");
    plannedTransfers = clusterFromAttr(cluster);
  }
  // Tensor parallelism with a split batch (replicas or microbatches)
  // splits the batch and the heads: keep them in separate dimensions where
  // a reshape merges them.
  if (planTp > 1 && dp * microbatches > 1) {
    FailureOr<UnflattenStats> stats = unflattenReshapes(func);
    if (failed(stats))
      return signalPassFailure();
    if (report && stats->sunk > 0)
      mlir::emitRemark(func.getLoc())
          << "dp=" << dp.getValue() << " tp=" << planTp
          << " microbatches=" << microbatches.getValue() << ": " << stats->sunk
          << " ops read the batch and the heads in separate dimensions ("
          << stats->refined << " reshapes through their finest shape: "
          << "dist-unflatten-reshapes)";
  }
  DTPRewriter rewriter(
      func, Config{dp, planTp, pp, microbatches, *order, stageDegrees,
                   mapping == "tp-inner", schedule, annotateSchedule, report,
                   std::move(plannedTransfers), transferStrategy});
  if (failed(rewriter.run()))
    return signalPassFailure();
  if (rewriter.unforcedTransfers > 0)
    emitWarning(func.getLoc())
        << "dist-dtp: stage-transfer=" << transferName << " does not apply to "
        << rewriter.unforcedTransfers
        << " stage transfers (no dimension divides into "
           "tp parts): they are sent point to point";
  rewriteWrapper(func, rewriter, dp);
  if (annotateShardings)
    annotateShardingAttrs(func, rewriter, dp, pp);
}
