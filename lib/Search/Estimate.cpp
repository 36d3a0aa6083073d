//===- Estimate.cpp - Configurations from their template programs ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// A configuration's program repeats the same tasks for every microbatch and
// (in inference) every replica, and the same layers within a stage. Fast
// estimation simulates a template with as few of them as show every kind of
// task and layer, then replays the recorded events and memory changes of
// each task in the order of the full schedule. Without overlap, the
// simulator starts an op when its devices are free, so replaying the events
// in program order is the full simulation. docs/design/search-estimation.md
// has the argument and its validation.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/OpCost.h"
#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"
#include "DistIR/Search/Search.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#include <chrono>
#include <mutex>
#include <set>

using namespace mlir;
using namespace distir;
using namespace distir::search;
using dist::PipelinePhase;
using dist::PipelineTask;

SearchConfig search::getTemplateConfig(const SearchConfig &config,
                                       bool training) {
  // Per-stage meshes are simulated in full (estimateConfig).
  if (!config.stageTp.empty())
    return config;
  SearchConfig t = config;
  t.microbatches = std::min<int64_t>(config.microbatches, 3);
  t.batch = config.batch / config.microbatches * t.microbatches;
  if (!training) {
    t.dp = 1;
    t.batch /= config.dp;
    // Replica 0's devices are given back their ids after the transform.
    if (config.dp > 1)
      t.mapping = "tp-inner";
  }
  return t;
}

namespace {
/// An event or a memory change of the template, by the task of its op.
struct TaskEvent {
  SmallVector<int64_t, 4> devices;
  double duration;
  /// A link of a chain over the microbatches that uses the middle one: the
  /// K-microbatch program has K-2 of them (usesMiddleMicrobatch).
  bool repeated;
  /// Created for the middle pair of layers of a folded template's stage:
  /// which of the pair (1 or 2), 0 if not.
  int middleLayer;
  bool communication;
};
struct TaskMemoryChange {
  int64_t device, bytes;
  bool repeated;
  int middleLayer;
  /// In the buffer that receives every microbatch's output: K'/K of it.
  bool outputBuffer;
  /// The op's changes (its allocations, then its releases) repeat together
  /// (identity only; the template may be gone).
  const void *op;
  MemoryKind kind;
};
/// [begin, end) of each run of middle-layer items (see middleRuns).
using MiddleRuns = SmallVector<std::pair<size_t, size_t>, 2>;
struct TaskRecord {
  std::vector<TaskEvent> events;
  std::vector<TaskMemoryChange> memory;
  /// Computed once when the template is built; every replay uses them.
  MiddleRuns eventRuns, memoryRuns;
};

/// Role of a microbatch: the first, the middle ones, the last. Values that
/// every microbatch shares (a zero fill of a gradient, say) are created by
/// the first and written in place by the last, so the three differ.
enum Role { First = 0, Middle = 1, Last = 2 };
static int64_t roleOf(int64_t microbatch, int64_t k) {
  return microbatch == 0 ? First : microbatch == k - 1 ? Last : Middle;
}

/// Key of a task kind: (stage, phase, role, part) where part 0 holds the
/// receives that run at the start of the task's time step (`dist.receive`)
/// and part 1 the task itself; the untagged prologue is (-1, 0, 0, 1),
/// updates have role First.
using TaskKind = std::tuple<int64_t, int, int64_t, int>;
constexpr int kReceivePart = 0, kTaskPart = 1;
} // namespace

static std::optional<PipelineTask> taskOfOp(Operation *op) {
  if (!op)
    return std::nullopt;
  auto attr = op->getAttrOfType<StringAttr>("dist.task");
  if (!attr)
    return std::nullopt;
  return dist::parsePipelineTask(attr.getValue());
}

/// Whether `op`, in an update task of the three-microbatch template, uses
/// the middle microbatch's result: a step of a chain over the microbatches
/// (gradient or loss accumulation, the insertion of each microbatch's
/// output) that the K-microbatch program has K-2 times.
static bool usesMiddleMicrobatch(Operation *op, int64_t templateK) {
  return llvm::any_of(op->getOperands(), [&](Value operand) {
    std::optional<PipelineTask> task = taskOfOp(operand.getDefiningOp());
    return task && task->phase != PipelinePhase::Update &&
           roleOf(task->microbatch, templateK) == Middle;
  });
}

/// Whether `op` creates the buffer that every microbatch's output is
/// inserted into: its size is proportional to the microbatch count.
static bool isOutputBuffer(Operation *op) {
  return isa<tensor::EmptyOp>(op) &&
         llvm::any_of(op->getUsers(), [&](Operation *user) {
           auto insert = dyn_cast<tensor::InsertSliceOp>(user);
           return insert && insert.getDest() == op->getResult(0);
         });
}

/// Bytes of the step function's arguments that derive from the wrapper's
/// arguments selected by `select` (given the argument's number and
/// attributes), by device.
static std::map<int64_t, int64_t>
getArgumentBytes(ModuleOp module, StringRef entry,
                 function_ref<bool(unsigned, DictionaryAttr)> select) {
  std::map<int64_t, int64_t> bytes;
  auto wrapper = module.lookupSymbol<func::FuncOp>(entry);
  if (!wrapper || wrapper.isExternal())
    return bytes;
  std::string step = (entry + "_dtp").str();
  wrapper.walk([&](func::CallOp call) {
    if (call.getCallee() != step)
      return;
    for (Value operand : call.getOperands()) {
      Value v = operand;
      while (Operation *def = v.getDefiningOp()) {
        if (def->getNumOperands() == 0)
          break;
        v = def->getOperand(0);
      }
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner()->getParentOp() != wrapper ||
          !select(arg.getArgNumber(),
                  wrapper.getArgAttrDict(arg.getArgNumber())))
        continue;
      if (auto device = dist::getDevice(operand.getType()))
        bytes[device.getId()] += getTensorBytes(operand.getType());
    }
  });
  return bytes;
}

/// Layers per stage that a folded template keeps: the first, a middle pair
/// and the last. The middle is a pair because consecutive layers may
/// differ (an MLP's tensor-parallel layers alternate column and row splits).
constexpr int64_t kFoldedLayers = 4;
/// 1 or 2 for the middle pair of a folded stage, 0 for its other layers.
static int middleOfFolded(int64_t layer) {
  int64_t index = layer % kFoldedLayers;
  return index == 1 || index == 2 ? static_cast<int>(index) : 0;
}

namespace {
struct FoldedLayers {
  /// Layers per stage of the original program.
  int64_t layersPerStage;
  /// Arguments (of the folded function) of the middle pair's layers.
  llvm::DenseSet<unsigned> middleArgs;
};
} // namespace

static int64_t layerOf(Operation *op) {
  auto attr = op ? op->getAttrOfType<IntegerAttr>("dist.layer") : nullptr;
  return attr ? attr.getInt() : -1;
}

/// The layers per stage of `entry` over `pp` stages when folding applies
/// (an even number of at least six), else nullopt.
static std::optional<int64_t>
getFoldableLayersPerStage(ModuleOp module, StringRef entry, int64_t pp) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return std::nullopt;
  int64_t numLayers = 0;
  for (Operation &op : func.getBody().front().without_terminator())
    numLayers = std::max(numLayers, layerOf(&op) + 1);
  if (numLayers == 0 || numLayers % pp != 0)
    return std::nullopt;
  int64_t n = numLayers / pp;
  if (n % 2 != 0 || n < 6)
    return std::nullopt;
  return n;
}

/// Removes from `entry` every layer of each of `pp` stages but the first
/// three and the last, so that each stage keeps a first layer, a middle pair
/// and a last layer (renumbered 4s...4s+3). Stages need an even number of
/// at least 6 layers. A layer is the top-level ops tagged with its
/// `dist.layer`; each value it passes to other layers must
/// have an input of the same type that it replaces: one from an earlier
/// layer for values used by later layers (the forward activation), one from
/// a later layer for values used by earlier layers (the gradient). Values
/// it returns (updated weights) are dropped from the results and its
/// weights (arguments with its `dist.layer`, or used by it alone) from the
/// arguments. Fails when there is nothing to fold or the layers do not chain.
static FailureOr<FoldedLayers> foldLayers(ModuleOp module, StringRef entry,
                                          int64_t pp) {
  std::optional<int64_t> perStage =
      getFoldableLayersPerStage(module, entry, pp);
  if (!perStage)
    return failure();
  int64_t n = *perStage;
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  Block &body = func.getBody().front();
  auto dropped = [&](int64_t layer) {
    return layer >= 0 && layer % n >= 3 && layer % n <= n - 2;
  };
  // The layer of a value: of its top-level defining op, of its argument.
  auto valueLayer = [&](Value v) -> int64_t {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &body)
        return -2; // inside a region
      auto attr =
          func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "dist.layer");
      return attr ? attr.getInt() : -1;
    }
    Operation *def = v.getDefiningOp();
    return def->getBlock() == &body ? layerOf(def) : -2;
  };
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  // The layer of each argument: its `dist.layer`, or the one layer that
  // uses it (-1: none or several).
  auto topLevel = [&](Operation *op) {
    while (op->getBlock() != &body)
      op = op->getParentOp();
    return op;
  };
  SmallVector<int64_t> argLayers;
  for (BlockArgument arg : body.getArguments()) {
    auto attr =
        func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "dist.layer");
    int64_t layer = attr ? attr.getInt() : -1;
    if (!attr) {
      for (Operation *user : arg.getUsers()) {
        int64_t userLayer = layerOf(topLevel(user));
        if (userLayer < 0 || (layer >= 0 && userLayer != layer)) {
          layer = -1;
          break;
        }
        layer = userLayer;
      }
    }
    argLayers.push_back(layer);
  }
  llvm::BitVector droppedResults(func.getNumResults());
  for (int64_t layer = 0; layer < n * pp; ++layer) {
    if (!dropped(layer))
      continue;
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      if (layerOf(&op) == layer)
        ops.push_back(&op);
    // Inputs from other layers or the prologue, with their layers.
    SmallVector<std::pair<Value, int64_t>> inputs;
    for (Operation *op : ops)
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          int64_t from = valueLayer(operand);
          if (from != layer && from != -2 &&
              !llvm::is_contained(inputs, std::make_pair(operand, from)))
            inputs.push_back({operand, from});
        }
      });
    for (Operation *op : ops)
      for (Value result : op->getResults()) {
        bool toEarlier = false, toLater = false;
        for (OpOperand &use : result.getUses()) {
          Operation *user = use.getOwner();
          while (user->getBlock() != &body)
            user = user->getParentOp();
          if (user == ret) {
            droppedResults.set(use.getOperandNumber());
            continue;
          }
          int64_t to = layerOf(user);
          if (to == layer)
            continue;
          (to >= 0 && to < layer ? toEarlier : toLater) = true;
        }
        if (!toEarlier && !toLater)
          continue;
        if (toEarlier && toLater)
          return failure();
        // The matching input: same type, from the other side.
        Value replacement;
        for (auto [input, from] : inputs) {
          if (input.getType() != result.getType() || from < 0)
            continue;
          if (toLater ? from > layer : from < layer)
            continue;
          if (replacement && replacement != input)
            return failure(); // ambiguous
          replacement = input;
        }
        if (!replacement)
          return failure();
        result.replaceUsesWithIf(replacement, [&](OpOperand &use) {
          Operation *user = use.getOwner();
          while (user->getBlock() != &body)
            user = user->getParentOp();
          return user != ret && layerOf(user) != layer;
        });
      }
  }
  // Dropped layers' values may now only feed each other.
  ret->eraseOperands(droppedResults);
  if (failed(func.eraseResults(droppedResults)))
    return failure();
  SmallVector<Operation *> erased;
  for (Operation &op : body.without_terminator())
    if (dropped(layerOf(&op)))
      erased.push_back(&op);
  for (Operation *op : llvm::reverse(erased)) {
    if (!op->use_empty())
      return failure();
    op->erase();
  }
  llvm::BitVector droppedArgs(func.getNumArguments());
  FoldedLayers folded{n, {}};
  unsigned kept = 0;
  for (BlockArgument arg : body.getArguments()) {
    int64_t layer = argLayers[arg.getArgNumber()];
    if (dropped(layer)) {
      if (!arg.use_empty())
        return failure();
      droppedArgs.set(arg.getArgNumber());
      continue;
    }
    if (layer >= 0 && (layer % n == 1 || layer % n == 2))
      folded.middleArgs.insert(kept);
    ++kept;
  }
  if (failed(func.eraseArguments(droppedArgs)))
    return failure();
  // Renumber: stage s keeps 4s...4s+3.
  auto renumber = [&](int64_t layer) {
    int64_t stage = layer / n, index = layer % n;
    return kFoldedLayers * stage + std::min<int64_t>(index, 3);
  };
  Builder b(func.getContext());
  for (Operation &op : body.without_terminator())
    if (int64_t layer = layerOf(&op); layer >= 0)
      op.setAttr("dist.layer", b.getI64IntegerAttr(renumber(layer)));
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto attr = func.getArgAttrOfType<IntegerAttr>(i, "dist.layer"))
      func.setArgAttr(i, "dist.layer",
                      b.getI64IntegerAttr(renumber(attr.getInt())));
  return folded;
}

/// Why the tasks of a template program are not copies of each other, or
/// an empty string. Replay assumes that microbatch m's forward and backward
/// tasks read only their own microbatch's values, values every microbatch
/// shares (made once, by microbatch 0's task: a zero fill, a transposed
/// weight) and, for an op that accumulates in place, the same op's result
/// of microbatch m - 1. An op that reads other microbatches (the batch
/// gathered before an attention that merges it with the heads, say) makes a
/// task whose size depends on K, which a template of three microbatches
/// cannot show. A value of microbatch 0 is shared when its op has no copy
/// (same name, location and result types: dist-dtp clones the source op
/// per microbatch) in the reader's microbatch.
static std::string findCrossMicrobatchUse(func::FuncOp step,
                                          bool allowAccumulation = true) {
  // An op's identity across microbatches: name, location, result types.
  using Identity = std::tuple<const void *, const void *, const void *>;
  auto identity = [](Operation *op) -> Identity {
    return {
        op->getName().getAsOpaquePointer(), op->getLoc().getAsOpaquePointer(),
        op->getNumResults() ? op->getResult(0).getType().getAsOpaquePointer()
                            : nullptr};
  };
  std::set<std::pair<Identity, int64_t>> instances;
  step.walk([&](Operation *op) {
    if (std::optional<PipelineTask> task = taskOfOp(op))
      instances.insert({identity(op), task->microbatch});
  });
  std::string why;
  step.walk([&](Operation *op) {
    std::optional<PipelineTask> task = taskOfOp(op);
    if (!task || task->phase == PipelinePhase::Update || task->microbatch < 0)
      return WalkResult::advance();
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      std::optional<PipelineTask> from = taskOfOp(def);
      if (!from || from->phase == PipelinePhase::Update ||
          from->microbatch < 0 || from->microbatch == task->microbatch)
        continue;
      if (from->microbatch == 0 &&
          !instances.count({identity(def), task->microbatch}))
        continue; // shared by every microbatch
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      if (allowAccumulation && dps && dps.isDpsInit(&operand) &&
          from->microbatch == task->microbatch - 1 &&
          def->getName() == op->getName())
        continue;
      llvm::raw_string_ostream os(why);
      os << "'" << op->getName() << "' of microbatch " << task->microbatch
         << " (" << op->getLoc() << ") reads a value of microbatch "
         << from->microbatch << " ('" << def->getName() << "', "
         << def->getLoc() << ")";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return why;
}

/// A simulated template: what replaying it for a configuration needs.
struct search::TemplateRun {
  /// Ok, or the template's own Skipped/Failed outcome and its reason.
  ConfigStatus status = ConfigStatus::Ok;
  std::string reason;
  /// Non-empty when the program cannot be replayed from a template: why.
  /// Configurations of this template are simulated in full.
  std::string fullSimulation;
  double transformSeconds = 0, simulateSeconds = 0;
  std::map<TaskKind, TaskRecord> records;
  /// By template device: resident bytes, and those of the kept middle
  /// pair's weights. (Batch inputs are streamed per microbatch, not
  /// resident: their slices are memory changes of the tasks.)
  std::map<int64_t, int64_t> resident, middleBytes;
  /// The optimizer state among them (dist.optimizer_state arguments).
  std::map<int64_t, int64_t> state, middleState;
  int64_t templateK = 1, layersPerStage = 0;
  /// One more than the largest device id of the records.
  int64_t numDevices = 0;
};

/// Each task's runs of middle-layer items, [begin, end) each. Every run
/// holds both layers of the middle pair (the forward, the backward or the
/// gradient buffers of the pair), so that playing it once per pair of the
/// full program gives that program's layers in order; otherwise the
/// template cannot be replayed.
template <typename T>
static std::optional<MiddleRuns> middleRuns(ArrayRef<T> items) {
  MiddleRuns runs;
  for (size_t i = 0; i < items.size();) {
    if (!items[i].middleLayer) {
      ++i;
      continue;
    }
    size_t end = i;
    bool seen[3] = {false, false, false};
    while (end < items.size() && items[end].middleLayer)
      seen[items[end++].middleLayer] = true;
    if (!seen[1] || !seen[2])
      return std::nullopt;
    runs.push_back({i, end});
    i = end;
  }
  return runs;
}

/// A template program after dist-dtp with the canonical device order
/// (tp-inner). Programs that differ only in their device mapping are this
/// one with other device ids, so configurations that differ only in
/// mapping simulate it with their own device map instead of transforming
/// again (SimulatorOptions::deviceMap).
struct search::TransformedTemplate {
  /// Null when dist-dtp rejected the template (`error` says why).
  OwningOpRef<ModuleOp> module;
  std::string error;
  double seconds = 0;
  /// > 0 when the stages were folded to four layers (foldLayers).
  int64_t layersPerStage = 0;
  llvm::DenseSet<unsigned> middleArgs;
};

/// The template of `shape` with the canonical order, folded when `fold`;
/// null when the layers do not fold.
static std::shared_ptr<const TransformedTemplate>
transformTemplate(ModuleOp source, StringRef entry, const SearchConfig &shape,
                  const SearchOptions &options, bool fold) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto t = std::make_shared<TransformedTemplate>();
  OwningOpRef<ModuleOp> module = source.clone();
  if (fold) {
    FailureOr<FoldedLayers> layers = foldLayers(*module, entry, shape.pp);
    if (failed(layers))
      return nullptr;
    t->layersPerStage = layers->layersPerStage;
    t->middleArgs = std::move(layers->middleArgs);
  }
  SearchConfig canonical = shape;
  canonical.mapping = "tp-inner";
  // Errors that depend on the full configuration (batch / dp < K) are
  // excluded by the enumeration; the others show up in the template too.
  if (failed(transformInPlace(*module, entry, canonical, options, t->error,
                              /*annotate=*/true)))
    module = nullptr;
  t->module = std::move(module);
  t->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return t;
}

/// For each device id of the canonical template of `shape`, the device that
/// runs it in `config` (in inference, replica 0's).
static std::vector<int64_t>
getTemplateDeviceMap(const SearchConfig &config, const SearchConfig &shape,
                     const dist::DeviceOrder &order) {
  std::string error;
  std::optional<dist::DeviceOrder> canonical =
      dist::parseDeviceOrder("tp-inner", shape.dp, shape.tp, shape.pp, error);
  std::vector<int64_t> map(shape.dp * shape.tp * shape.pp);
  for (int64_t d = 0; d < shape.dp; ++d)
    for (int64_t t = 0; t < shape.tp; ++t)
      for (int64_t s = 0; s < shape.pp; ++s)
        map[dist::getDeviceId(*canonical, d, t, s)] =
            dist::getDeviceId(order, shape.dp == config.dp ? d : 0, t, s);
  return map;
}

/// Simulates `transformed` on the devices of `deviceMap` and records its
/// events and memory changes by task. Returns null when a folded template's
/// middle layers do not form one run in each task (then it cannot be
/// replayed).
static std::shared_ptr<TemplateRun>
buildTemplate(const TransformedTemplate &transformed, StringRef entry,
              const SearchConfig &shape, ArrayRef<int64_t> deviceMap,
              const SearchOptions &options) {
  using Clock = std::chrono::steady_clock;
  auto run = std::make_shared<TemplateRun>();
  run->templateK = shape.microbatches;
  int64_t layersPerStage = transformed.layersPerStage;
  run->layersPerStage = layersPerStage;
  if (!transformed.module) {
    run->status = ConfigStatus::Skipped;
    run->reason = transformed.error;
    return run;
  }
  ModuleOp module = *transformed.module;
  auto start = Clock::now();
  func::FuncOp step = findStepFunction(module, entry);
  if (!step) {
    run->status = ConfigStatus::Failed;
    run->reason = "dist-dtp produced no step function @" + entry.str() + "_dtp";
    return run;
  }
  // In inference a batch reduction (an accumulation chain) would make the
  // data-parallel replicas communicate: not replayable either.
  run->fullSimulation =
      findCrossMicrobatchUse(step, /*allowAccumulation=*/options.training);
  if (!run->fullSimulation.empty())
    return run;
  std::string simError;
  FailureOr<SimulationResult> sim;
  {
    ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && simError.empty())
        simError = d.str();
      return success();
    });
    SimulatorOptions simOptions = options.simulator;
    simOptions.batchSize = shape.batch;
    simOptions.planMemory = false;
    simOptions.recordMemoryChanges = true;
    simOptions.describeEvents = false;
    simOptions.recordMemoryTimeline = false;
    simOptions.deviceMap.assign(deviceMap.begin(), deviceMap.end());
    sim = simulate(step, options.cluster, simOptions);
  }
  if (failed(sim)) {
    run->status = ConfigStatus::Failed;
    run->reason = "simulation failed: " +
                  (simError.empty() ? std::string("no diagnostic") : simError);
    return run;
  }

  // Events and memory changes by task kind.
  std::map<TaskKind, TaskRecord> &records = run->records;
  int64_t templateK = shape.microbatches;
  // What the replay needs to know of an op, computed once per op.
  struct OpInfo {
    TaskRecord *record;
    bool repeated;
    int middleLayer;
    bool outputBuffer;
  };
  DenseMap<Operation *, OpInfo> infos;
  auto infoOf = [&](Operation *op) -> const OpInfo & {
    auto [it, inserted] = infos.try_emplace(op);
    if (!inserted)
      return it->second;
    OpInfo &info = it->second;
    info = {nullptr, false, 0, false};
    std::optional<PipelineTask> task = taskOfOp(op);
    int part = op && op->hasAttr("dist.receive") ? kReceivePart : kTaskPart;
    if (!task) {
      info.record = &records[{-1, 0, First, kTaskPart}];
    } else if (task->phase == PipelinePhase::Update) {
      info.repeated = usesMiddleMicrobatch(op, templateK);
      info.outputBuffer = isOutputBuffer(op);
      info.record =
          &records[{task->stage, static_cast<int>(task->phase), First, part}];
    } else {
      info.record = &records[{task->stage, static_cast<int>(task->phase),
                              roleOf(task->microbatch, templateK), part}];
    }
    if (layersPerStage > 0 && op)
      if (auto layer = op->getAttrOfType<IntegerAttr>("dist.layer"))
        info.middleLayer = middleOfFolded(layer.getInt());
    return info;
  };
  for (const SimEvent &event : sim->events) {
    const OpInfo &info = infoOf(event.op);
    info.record->events.push_back({event.devices, event.duration, info.repeated,
                                   info.middleLayer, event.isCommunication});
  }
  for (const MemoryChange &change : sim->memoryChanges) {
    const OpInfo &info = infoOf(change.op);
    info.record->memory.push_back({change.device, change.bytes, info.repeated,
                                   info.middleLayer, info.outputBuffer,
                                   change.op, change.kind});
  }
  for (auto &[kind, record] : records) {
    std::optional<MiddleRuns> eventRuns =
        middleRuns(ArrayRef<TaskEvent>(record.events));
    std::optional<MiddleRuns> memoryRuns =
        middleRuns(ArrayRef<TaskMemoryChange>(record.memory));
    if (!eventRuns || !memoryRuns)
      return nullptr;
    record.eventRuns = std::move(*eventRuns);
    record.memoryRuns = std::move(*memoryRuns);
  }
  // By the template's (canonical) device: moved to the real devices.
  auto onDevices = [&](std::map<int64_t, int64_t> bytes) {
    std::map<int64_t, int64_t> moved;
    for (const auto &[device, n] : bytes)
      moved[deviceMap[device]] += n;
    return moved;
  };
  run->middleBytes = onDevices(
      getArgumentBytes(module, entry, [&](unsigned arg, DictionaryAttr) {
        return transformed.middleArgs.contains(arg);
      }));
  auto isState = [](DictionaryAttr attrs) {
    return attrs && attrs.contains("dist.optimizer_state");
  };
  run->state = onDevices(
      getArgumentBytes(module, entry, [&](unsigned, DictionaryAttr attrs) {
        return isState(attrs);
      }));
  run->middleState = onDevices(
      getArgumentBytes(module, entry, [&](unsigned arg, DictionaryAttr attrs) {
        return transformed.middleArgs.contains(arg) && isState(attrs);
      }));
  for (const auto &[device, report] : sim->devices) {
    run->resident[device] = report.residentBytes;
    run->numDevices = std::max(run->numDevices, device + 1);
  }
  for (const auto &[kind, record] : records) {
    for (const TaskEvent &event : record.events)
      for (int64_t d : event.devices)
        run->numDevices = std::max(run->numDevices, d + 1);
    for (const TaskMemoryChange &change : record.memory)
      run->numDevices = std::max(run->numDevices, change.device + 1);
  }
  run->simulateSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

/// Replays `run` in the order of `config`'s schedule.
static ConfigResult replay(const TemplateRun &run, const SearchConfig &config,
                           const SearchConfig &shape,
                           const dist::DeviceOrder &order,
                           const SearchOptions &options) {
  ConfigResult result;
  result.config = config;
  if (run.status != ConfigStatus::Ok) {
    result.status = run.status;
    result.reason = run.reason;
    return result;
  }
  int64_t templateK = run.templateK, k = config.microbatches;
  int64_t extra = k - 2; // repeated links of chains over the microbatches
  // Dense by device id: the replay's inner loop (millions of events for
  // long pipelines) indexes them.
  std::vector<double> free(run.numDevices, 0.0);
  std::vector<int64_t> live(run.numDevices, 0), peak(run.numDevices, 0);
  // Live bytes by kind, and their split at each device's peak.
  std::vector<MemoryBreakdown> liveByKind(run.numDevices, MemoryBreakdown{}),
      peakByKind(run.numDevices, MemoryBreakdown{});
  std::map<int64_t, int64_t> resident;
  // Middle pairs per stage in the full program (the template has one).
  int64_t middles = run.layersPerStage > 0 ? (run.layersPerStage - 2) / 2 : 1;
  for (const auto &[device, bytes] : run.resident) {
    // The template holds one of the middle pairs' weights.
    auto mit = run.middleBytes.find(device);
    int64_t perPair = mit == run.middleBytes.end() ? 0 : mit->second;
    resident[device] = bytes + perPair * (middles - 1);
    live[device] = peak[device] = resident[device];
    auto sit = run.state.find(device), mst = run.middleState.find(device);
    int64_t state =
        (sit == run.state.end() ? 0 : sit->second) +
        (mst == run.middleState.end() ? 0 : mst->second) * (middles - 1);
    liveByKind[device][static_cast<int>(MemoryKind::Weights)] =
        resident[device] - state;
    liveByKind[device][static_cast<int>(MemoryKind::OptimizerState)] = state;
    peakByKind[device] = liveByKind[device];
  }
  // Communication between stages (ConfigResult::stageTransferSeconds): in
  // inference the template holds replica 0, which every replica repeats.
  std::map<int64_t, int64_t> stageOf;
  if (config.pp > 1)
    for (int64_t d = 0; d < config.dp; ++d)
      for (int64_t t = 0; t < config.tp; ++t)
        for (int64_t s = 0; s < config.pp; ++s)
          stageOf[dist::getDeviceId(order, d, t, s)] = s;
  int64_t replicaCopies = shape.dp != config.dp ? config.dp : 1;
  std::vector<double> stageTransfers;
  auto crossesStages = [&](ArrayRef<int64_t> devices) {
    std::optional<int64_t> stage;
    for (int64_t device : devices)
      if (auto it = stageOf.find(device); it != stageOf.end()) {
        if (stage && *stage != it->second)
          return true;
        stage = it->second;
      }
    return false;
  };
  auto playEvents = [&](ArrayRef<TaskEvent> events) {
    for (const TaskEvent &event : events) {
      int64_t times = event.repeated ? extra : 1;
      if (event.communication && crossesStages(event.devices))
        stageTransfers.insert(stageTransfers.end(), times * replicaCopies,
                              event.duration);
      for (int64_t i = 0; i < times; ++i) {
        double begin = 0;
        for (int64_t d : event.devices)
          begin = std::max(begin, free[d]);
        for (int64_t d : event.devices)
          free[d] = begin + event.duration;
      }
    }
  };
  auto playMemory = [&](ArrayRef<TaskMemoryChange> changes) {
    while (!changes.empty()) {
      size_t n = 1;
      while (n < changes.size() && changes[n].op == changes[0].op)
        ++n;
      int64_t times = changes[0].repeated ? extra : 1;
      for (int64_t i = 0; i < times; ++i)
        for (const TaskMemoryChange &change : changes.take_front(n)) {
          int64_t &level = live[change.device];
          int64_t bytes =
              change.outputBuffer ? change.bytes / templateK * k : change.bytes;
          level += bytes;
          liveByKind[change.device][static_cast<int>(change.kind)] += bytes;
          if (level > peak[change.device]) {
            peak[change.device] = level;
            peakByKind[change.device] = liveByKind[change.device];
          }
        }
      changes = changes.drop_front(n);
    }
  };
  // Items outside the middle pair once, each run of the pair once per pair
  // of the full program.
  auto playFolded = [&](auto items, const MiddleRuns &runs, auto playItems) {
    size_t done = 0;
    for (auto [begin, end] : runs) {
      playItems(items.slice(done, begin - done));
      for (int64_t i = 0; i < middles; ++i)
        playItems(items.slice(begin, end - begin));
      done = end;
    }
    playItems(items.drop_front(done));
  };
  auto play = [&](const TaskRecord &record) {
    playFolded(ArrayRef<TaskEvent>(record.events), record.eventRuns,
               playEvents);
    playFolded(ArrayRef<TaskMemoryChange>(record.memory), record.memoryRuns,
               playMemory);
  };
  if (auto it = run.records.find({-1, 0, First, kTaskPart});
      it != run.records.end())
    play(it->second);
  std::optional<dist::PipelineSchedule> schedule =
      dist::symbolizePipelineSchedule(
          config.schedule.empty() ? "gpipe" : config.schedule);
  // Each time step: its tasks' receives, then the tasks (dist-dtp's order).
  for (const std::vector<PipelineTask> &step : dist::getPipelineSteps(
           config.pp, k, schedule.value_or(dist::PipelineSchedule::GPipe)))
    for (int part : {kReceivePart, kTaskPart})
      for (const PipelineTask &task : step) {
        int64_t role = task.phase == PipelinePhase::Update
                           ? First
                           : roleOf(task.microbatch, k);
        auto it = run.records.find(
            {task.stage, static_cast<int>(task.phase), role, part});
        if (it != run.records.end())
          play(it->second);
      }
  double latency = 0;
  for (double time : free)
    latency = std::max(latency, time);

  // Per-device reports; in inference every replica repeats replica 0's.
  std::map<int64_t, DeviceReport> devices;
  int64_t capacity = options.cluster.device.memoryCapacity;
  for (const auto &[device, bytes] : run.resident) {
    SmallVector<int64_t> ids = {device};
    if (shape.dp != config.dp) {
      ids.clear();
      // The template's device is replica 0's (t, s); find t and s again.
      for (int64_t s = 0; s < config.pp; ++s)
        for (int64_t t = 0; t < config.tp; ++t)
          if (dist::getDeviceId(order, 0, t, s) == device)
            for (int64_t d = 0; d < config.dp; ++d)
              ids.push_back(dist::getDeviceId(order, d, t, s));
    }
    for (int64_t id : ids) {
      DeviceReport &out = devices[id];
      out.peakBytes = peak[device];
      out.peakBreakdown = peakByKind[device];
      out.residentBytes = resident[device];
      out.exceedsCapacity = capacity > 0 && out.peakBytes > capacity;
    }
  }
  setSimulatedOutcome(result, latency, devices, capacity);
  if (config.pp > 1)
    result.stageTransferSeconds = sumInOrder(stageTransfers);
  return result;
}

struct search::TemplateCache::Impl {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const TemplateRun>> runs;
  /// Inference: why the data-parallel replicas of a template shape are not
  /// independent (empty: they are), by probe key.
  std::map<std::string, std::string> replicaProbes;
};

/// In inference the template keeps one replica and gives every replica its
/// events, which is exact only if the replicas never communicate. They do
/// when the program gathers or reduces over the batch, which shows in the
/// same shape with two microbatches of one replica (the batch axis has
/// dp * K points either way): any op that reads another microbatch's value.
/// Returns why the replicas are not independent, or an empty string.
static std::string probeReplicas(ModuleOp source, StringRef entry,
                                 const SearchConfig &shape,
                                 const SearchOptions &options) {
  int64_t k = shape.batch % 2 == 0 ? 2 : shape.batch % 3 == 0 ? 3 : 0;
  if (k == 0)
    return "a replica's batch of " + std::to_string(shape.batch) +
           " cannot be split to check that replicas are independent";
  SearchConfig probe = shape;
  probe.microbatches = k;
  probe.mapping = "tp-inner";
  // Folded to four layers per stage where it can be (as templates are):
  // the probe only looks at the program's structure.
  std::shared_ptr<const TransformedTemplate> transformed =
      transformTemplate(source, entry, probe, options, /*fold=*/true);
  if (!transformed || !transformed->module)
    transformed =
        transformTemplate(source, entry, probe, options, /*fold=*/false);
  if (!transformed->module)
    return "replicas not checked (" + transformed->error + ")";
  func::FuncOp step = findStepFunction(*transformed->module, entry);
  if (!step)
    return "replicas not checked (no step function)";
  std::string why = findCrossMicrobatchUse(step, /*allowAccumulation=*/false);
  return why.empty() ? why : "data-parallel replicas communicate: " + why;
}

search::TemplateCache::TemplateCache() : impl(std::make_unique<Impl>()) {}
search::TemplateCache::~TemplateCache() = default;

/// Most recently used first; a few entries cover the mappings and, in
/// inference, the data-parallel degrees of a configuration.
struct search::TransformCache::Impl {
  static constexpr size_t kEntries = 4;
  std::vector<
      std::pair<std::string, std::shared_ptr<const TransformedTemplate>>>
      entries;
};

search::TransformCache::TransformCache() : impl(std::make_unique<Impl>()) {}
search::TransformCache::~TransformCache() = default;

std::shared_ptr<const TransformedTemplate>
search::TransformCache::lookup(llvm::StringRef key) {
  auto &entries = impl->entries;
  auto it =
      llvm::find_if(entries, [&](const auto &e) { return e.first == key; });
  if (it == entries.end())
    return nullptr;
  std::rotate(entries.begin(), it, it + 1);
  return entries.front().second;
}

void search::TransformCache::insert(
    llvm::StringRef key, std::shared_ptr<const TransformedTemplate> t) {
  auto &entries = impl->entries;
  entries.insert(entries.begin(), {key.str(), std::move(t)});
  if (entries.size() > Impl::kEntries)
    entries.pop_back();
}

ConfigResult search::estimateConfig(ModuleOp templateSource, StringRef entry,
                                    const SearchConfig &config,
                                    const SearchOptions &options,
                                    TemplateCache *cache,
                                    TransformCache *transforms,
                                    function_ref<ModuleOp()> fullProgram) {
  using Clock = std::chrono::steady_clock;
  SearchConfig shape = getTemplateConfig(config, options.training);
  // A configuration whose program cannot be replayed from a template is
  // simulated in full, at its own batch (the reason goes to --timing).
  // Transform time of a replica probe, paid by this configuration.
  double probeSeconds = 0;
  auto simulateInFull = [&](const std::string &why) {
    ModuleOp full = fullProgram ? fullProgram() : ModuleOp();
    ConfigResult result;
    if (!full) {
      result.config = config;
      result.status = ConfigStatus::Failed;
      result.reason = "--fast: " + why + ", and no program at batch " +
                      std::to_string(config.batch) + " to simulate in full";
      return result;
    }
    result = evaluateConfig(full, entry, config, options);
    result.fullSimulationReason = why;
    result.transformSeconds += probeSeconds;
    return result;
  };
  if (!config.stageTp.empty())
    return simulateInFull("per-stage meshes (stage-tp) are not templated");
  // dist-zero and dist-recompute add ops outside dist-dtp's task structure.
  if (config.zero > 0 || config.recompute != Recompute::None)
    return simulateInFull("ZeRO and recomputation programs are not "
                          "templated");
  // With two or more microbatches the template itself shows what the probe
  // would (buildTemplate's check); with one, probe.
  if (!options.training && config.dp > 1 && config.microbatches == 1) {
    SearchConfig probeShape = shape;
    probeShape.mapping = "tp-inner";
    std::string probeKey =
        std::to_string(shape.batch) + " " + probeShape.getPassOptions();
    std::optional<std::string> why;
    if (cache) {
      std::lock_guard<std::mutex> lock(cache->impl->mutex);
      if (auto it = cache->impl->replicaProbes.find(probeKey);
          it != cache->impl->replicaProbes.end())
        why = it->second;
    }
    if (!why) {
      auto probeStart = Clock::now();
      why = probeReplicas(templateSource, entry, shape, options);
      probeSeconds =
          std::chrono::duration<double>(Clock::now() - probeStart).count();
      if (cache) {
        std::lock_guard<std::mutex> lock(cache->impl->mutex);
        cache->impl->replicaProbes.emplace(probeKey, *why);
      }
    }
    if (!why->empty())
      return simulateInFull(*why);
  }
  std::optional<int64_t> foldable =
      getFoldableLayersPerStage(templateSource, entry, config.pp);
  bool sameShape =
      shape.dp == config.dp && shape.microbatches == config.microbatches;
  if (!foldable && sameShape)
    return evaluateConfig(templateSource, entry, config, options);
  std::string orderError;
  std::optional<dist::DeviceOrder> order = dist::parseDeviceOrder(
      config.mapping, config.dp, config.tp, config.pp, orderError);
  if (!order) {
    ConfigResult result;
    result.config = config;
    result.status = ConfigStatus::Skipped;
    result.reason = "dist-dtp{" + config.getPassOptions() + "}: " + orderError;
    return result;
  }

  // The template's identity: its program and options, and the devices
  // that run it.
  std::vector<int64_t> deviceMap = getTemplateDeviceMap(config, shape, *order);
  SearchConfig canonical = shape;
  canonical.mapping = "tp-inner";
  std::string key;
  {
    llvm::raw_string_ostream os(key);
    os << shape.batch << " " << canonical.getPassOptions() << " on";
    for (int64_t device : deviceMap)
      os << " " << device;
  }
  std::shared_ptr<const TemplateRun> run;
  if (cache) {
    std::lock_guard<std::mutex> lock(cache->impl->mutex);
    auto it = cache->impl->runs.find(key);
    if (it != cache->impl->runs.end())
      run = it->second;
  }
  bool fresh = !run;
  // The transformed template, from this worker's recent ones when another
  // mapping of the same configuration was just estimated.
  double transformSeconds = 0;
  auto getTransformed =
      [&](bool fold) -> std::shared_ptr<const TransformedTemplate> {
    std::string transformKey = std::to_string(shape.batch) + " " +
                               canonical.getPassOptions() +
                               (fold ? " folded" : "");
    if (transforms)
      if (auto hit = transforms->lookup(transformKey))
        return hit;
    std::shared_ptr<const TransformedTemplate> t =
        transformTemplate(templateSource, entry, shape, options, fold);
    if (t) {
      transformSeconds += t->seconds;
      if (transforms)
        transforms->insert(transformKey, t);
    }
    return t;
  };
  if (fresh) {
    std::shared_ptr<TemplateRun> built;
    if (foldable)
      if (std::shared_ptr<const TransformedTemplate> t = getTransformed(true))
        built = buildTemplate(*t, entry, shape, deviceMap, options);
    if (!built) {
      if (sameShape)
        return evaluateConfig(templateSource, entry, config, options);
      built = buildTemplate(*getTransformed(false), entry, shape, deviceMap,
                            options);
    }
    // Transform time belongs to the configuration that paid for it.
    built->transformSeconds = transformSeconds;
    run = std::move(built);
  }
  if (cache && fresh) {
    std::lock_guard<std::mutex> lock(cache->impl->mutex);
    cache->impl->runs.emplace(key, run);
  }
  if (!run->fullSimulation.empty())
    return simulateInFull(run->fullSimulation);
  auto start = Clock::now();
  ConfigResult result = replay(*run, config, shape, *order, options);
  double replaySeconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  result.transformSeconds = (fresh ? run->transformSeconds : 0) + probeSeconds;
  result.simulateSeconds = (fresh ? run->simulateSeconds : 0) + replaySeconds;
  return result;
}
