//===- Estimate.cpp - Configurations from their template programs ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// A configuration's program repeats the same tasks for every microbatch and
// (in inference) every replica. Fast estimation simulates a template with
// as few of them as show every kind of task, then replays the recorded
// events and memory changes of each task in the order of the full schedule.
// Without overlap, the simulator starts an op when its devices are free, so
// replaying the per-task events in program order is the full simulation.
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

#include <chrono>

using namespace mlir;
using namespace distir;
using namespace distir::search;
using dist::PipelinePhase;
using dist::PipelineTask;

SearchConfig search::getTemplateConfig(const SearchConfig &config,
                                       bool training) {
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
  /// Repetitions in the K-microbatch program: gradient-accumulation adds
  /// after the first of a chain repeat K-2 times, everything else once.
  bool repeated;
};
struct TaskMemoryChange {
  int64_t device, bytes;
  bool repeated;
  /// The op's changes (its allocations, then its releases) repeat together.
  Operation *op;
};
struct TaskRecord {
  std::vector<TaskEvent> events;
  std::vector<TaskMemoryChange> memory;
};

/// Role of a microbatch: the first, the middle ones, the last. Values that
/// every microbatch shares (a zero fill of a gradient, say) are created by
/// the first and written in place by the last, so the three differ.
enum Role { First = 0, Middle = 1, Last = 2 };
static int64_t roleOf(int64_t microbatch, int64_t k) {
  return microbatch == 0 ? First : microbatch == k - 1 ? Last : Middle;
}

/// Key of a task kind: (stage, phase, role); the untagged prologue is
/// (-1, 0, 0), updates have role First.
using TaskKind = std::tuple<int64_t, int, int64_t>;
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

/// Bytes of the step function's batch-carrying arguments, by device: the
/// wrapper's call operands that derive from an argument with
/// `dist.batch_dim`.
static std::map<int64_t, int64_t> getBatchArgumentBytes(ModuleOp module,
                                                        StringRef entry) {
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
          !wrapper.getArgAttr(arg.getArgNumber(), "dist.batch_dim"))
        continue;
      if (auto device = dist::getDevice(operand.getType()))
        bytes[device.getId()] += getTensorBytes(operand.getType());
    }
  });
  return bytes;
}

ConfigResult search::estimateConfig(ModuleOp templateSource, StringRef entry,
                                    const SearchConfig &config,
                                    const SearchOptions &options) {
  SearchConfig shape = getTemplateConfig(config, options.training);
  if (shape.dp == config.dp && shape.microbatches == config.microbatches)
    return evaluateConfig(templateSource, entry, config, options);

  using Clock = std::chrono::steady_clock;
  ConfigResult result;
  result.config = config;
  auto start = Clock::now();
  std::string error;
  OwningOpRef<ModuleOp> module =
      transformProgram(templateSource, entry, shape, options, error,
                       /*annotate=*/true);
  // Errors that depend on the full configuration (batch / dp < K) are
  // excluded by the enumeration; the others show up in the template too.
  if (!module) {
    result.transformSeconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    result.status = ConfigStatus::Skipped;
    result.reason = error;
    return result;
  }

  // Inference template: replica 0 alone, on the devices it has in the full
  // configuration (collective and link costs depend on them).
  std::string orderError;
  std::optional<dist::DeviceOrder> order = dist::parseDeviceOrder(
      config.mapping, config.dp, config.tp, config.pp, orderError);
  if (!order) {
    result.status = ConfigStatus::Skipped;
    result.reason = "dist-dtp{" + config.getPassOptions() + "}: " + orderError;
    return result;
  }
  if (shape.dp != config.dp) {
    MLIRContext *context = module->getContext();
    AttrTypeReplacer replacer;
    replacer.addReplacement([&](dist::DeviceAttr device) -> Attribute {
      int64_t id = device.getId();
      return dist::DeviceAttr::get(
          context,
          dist::getDeviceId(*order, 0, id % config.tp, id / config.tp));
    });
    replacer.recursivelyReplaceElementsIn(*module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
  }
  auto transformed = Clock::now();
  result.transformSeconds =
      std::chrono::duration<double>(transformed - start).count();

  func::FuncOp step = findStepFunction(*module, entry);
  if (!step) {
    result.status = ConfigStatus::Failed;
    result.reason =
        "dist-dtp produced no step function @" + entry.str() + "_dtp";
    return result;
  }
  std::string simError;
  FailureOr<SimulationResult> sim;
  {
    ScopedDiagnosticHandler handler(module->getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error && simError.empty())
        simError = d.str();
      return success();
    });
    SimulatorOptions simOptions = options.simulator;
    simOptions.batchSize = shape.batch;
    simOptions.planMemory = false;
    simOptions.recordMemoryChanges = true;
    sim = simulate(step, options.cluster, simOptions);
  }
  if (failed(sim)) {
    result.status = ConfigStatus::Failed;
    result.reason =
        "simulation failed: " +
        (simError.empty() ? std::string("no diagnostic") : simError);
    return result;
  }

  // Events and memory changes by task kind.
  std::map<TaskKind, TaskRecord> records;
  int64_t templateK = shape.microbatches, k = config.microbatches;
  auto recordOf = [&](Operation *op, bool &repeated) -> TaskRecord & {
    repeated = false;
    std::optional<PipelineTask> task = taskOfOp(op);
    if (!task)
      return records[{-1, 0, First}];
    if (task->phase == PipelinePhase::Update) {
      repeated = usesMiddleMicrobatch(op, templateK);
      return records[{task->stage, static_cast<int>(task->phase), First}];
    }
    return records[{task->stage, static_cast<int>(task->phase),
                    roleOf(task->microbatch, templateK)}];
  };
  for (const SimEvent &event : sim->events) {
    bool repeated;
    TaskRecord &record = recordOf(event.op, repeated);
    record.events.push_back({event.devices, event.end - event.start, repeated});
  }
  for (const MemoryChange &change : sim->memoryChanges) {
    bool repeated;
    TaskRecord &record = recordOf(change.op, repeated);
    int64_t bytes = change.bytes;
    std::optional<PipelineTask> task = taskOfOp(change.op);
    if (task && task->phase == PipelinePhase::Update &&
        isOutputBuffer(change.op))
      bytes = bytes / templateK * k;
    record.memory.push_back({change.device, bytes, repeated, change.op});
  }
  // Replay in the order of the full schedule.
  int64_t extra = k - 2; // repeated accumulation adds per chain
  std::map<int64_t, double> free;
  std::map<int64_t, int64_t> live, peak;
  std::map<int64_t, int64_t> batchBytes = getBatchArgumentBytes(*module, entry);
  std::map<int64_t, int64_t> resident;
  for (const auto &[device, report] : sim->devices) {
    // The template holds `templateK` of the K microbatches of the inputs.
    auto it = batchBytes.find(device);
    int64_t perMicrobatch = it == batchBytes.end() ? 0 : it->second / templateK;
    resident[device] = report.residentBytes + perMicrobatch * (k - templateK);
    live[device] = peak[device] = resident[device];
  }
  auto play = [&](const TaskRecord &record) {
    for (const TaskEvent &event : record.events) {
      int64_t times = event.repeated ? extra : 1;
      for (int64_t i = 0; i < times; ++i) {
        double begin = 0;
        for (int64_t d : event.devices)
          begin = std::max(begin, free[d]);
        for (int64_t d : event.devices)
          free[d] = begin + event.duration;
      }
    }
    ArrayRef<TaskMemoryChange> changes = record.memory;
    while (!changes.empty()) {
      size_t n = 1;
      while (n < changes.size() && changes[n].op == changes[0].op)
        ++n;
      int64_t times = changes[0].repeated ? extra : 1;
      for (int64_t i = 0; i < times; ++i)
        for (const TaskMemoryChange &change : changes.take_front(n)) {
          int64_t &level = live[change.device];
          level += change.bytes;
          peak[change.device] = std::max(peak[change.device], level);
        }
      changes = changes.drop_front(n);
    }
  };
  if (auto it = records.find({-1, 0, First}); it != records.end())
    play(it->second);
  std::optional<dist::PipelineSchedule> schedule =
      dist::symbolizePipelineSchedule(
          config.schedule.empty() ? "gpipe" : config.schedule);
  for (const PipelineTask &task : dist::getPipelineOrder(
           config.pp, k, schedule.value_or(dist::PipelineSchedule::GPipe))) {
    int64_t role = task.phase == PipelinePhase::Update
                       ? First
                       : roleOf(task.microbatch, k);
    auto it = records.find({task.stage, static_cast<int>(task.phase), role});
    if (it != records.end())
      play(it->second);
  }
  double latency = 0;
  for (const auto &[device, time] : free)
    latency = std::max(latency, time);

  // Per-device reports; in inference every replica repeats replica 0's.
  std::map<int64_t, DeviceReport> devices;
  int64_t capacity = options.cluster.device.memoryCapacity;
  for (const auto &[device, report] : sim->devices) {
    SmallVector<int64_t> ids = {device};
    if (shape.dp != config.dp) {
      ids.clear();
      // The template's device is replica 0's (t, s); find t and s again.
      for (int64_t s = 0; s < config.pp; ++s)
        for (int64_t t = 0; t < config.tp; ++t)
          if (dist::getDeviceId(*order, 0, t, s) == device)
            for (int64_t d = 0; d < config.dp; ++d)
              ids.push_back(dist::getDeviceId(*order, d, t, s));
    }
    for (int64_t id : ids) {
      DeviceReport &out = devices[id];
      out.peakBytes = peak[device];
      out.residentBytes = resident[device];
      out.exceedsCapacity = capacity > 0 && out.peakBytes > capacity;
    }
  }
  setSimulatedOutcome(result, latency, devices, capacity);
  result.simulateSeconds =
      std::chrono::duration<double>(Clock::now() - transformed).count();
  return result;
}
