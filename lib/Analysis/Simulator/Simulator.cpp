//===- Simulator.cpp - Predict runtime and memory of dist programs
//---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The simulation domain of the program-order interpreter. Each abstract value
// is a type plus when it becomes available, which event produced it, which
// buffer holds it, and its concrete integer value when index arithmetic
// makes one known.
//
// Memory follows bufferization: destination-passing ops write into their
// init operand's buffer when that operand dies there, views (reshapes,
// slices, casts) alias their source, and every other result is a new
// buffer. A buffer lives while any value referring to it is live.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Analysis/Interpreter.h"
#include "DistIR/Analysis/MemoryPlan.h"
#include "DistIR/Analysis/OpCost.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Search/Reshard.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include <limits>

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace distir;

std::optional<CostModelKind> distir::symbolizeCostModelKind(StringRef name) {
  return llvm::StringSwitch<std::optional<CostModelKind>>(name)
      .Case("analytic", CostModelKind::Analytic)
      .Case("distir-compat", CostModelKind::DistIRCompat)
      .Case("calibrated", CostModelKind::Calibrated)
      .Default(std::nullopt);
}

StringRef distir::stringifyCostModelKind(CostModelKind kind) {
  switch (kind) {
  case CostModelKind::Analytic:
    return "analytic";
  case CostModelKind::DistIRCompat:
    return "distir-compat";
  case CostModelKind::Calibrated:
    return "calibrated";
  }
  llvm_unreachable("unknown cost model");
}

namespace {

/// Abstract value of the simulation domain.
struct SimValue {
  Type type;
  /// Concrete integer value, when known (index and shape arithmetic).
  std::optional<int64_t> concrete;
  /// Event that produced the value (-1: program input or free op).
  int64_t producer = -1;
  /// Time at which the value is available.
  double ready = 0;
  /// Buffer holding the value (-1: scalars).
  int64_t buffer = -1;
};

struct Buffer {
  Buffer(int64_t device, int64_t bytes, int64_t allocSeq)
      : device(device), bytes(bytes), allocSeq(allocSeq) {}
  int64_t device;
  int64_t bytes;
  int64_t handles = 0;
  /// Program-order positions of allocation and release (for the plan).
  int64_t allocSeq, freeSeq = -1;
  bool resident = false;
  /// A dead argument's buffer that a returned result took over.
  bool overwritten = false;
  /// A batch input streamed from the host, not on the device until an op
  /// reads it whole (slices of it are copied in on their own).
  bool pending = false;
  MemoryKind kind = MemoryKind::Activations;
  /// The value that allocated it (for the report of what is live at a
  /// peak).
  Value definer;
};

/// A device's resources: the order in which its streams become free.
struct DeviceState {
  double computeFree = 0, commFree = 0;
  int64_t computeLast = -1, commLast = -1;
  int64_t live = 0;
  MemoryBreakdown liveByKind{};
  /// Program-order position just after the allocation that reached the
  /// peak: a buffer is live there when allocated before and freed after.
  int64_t peakMark = 0;
};

class Simulation : public Interpreter<Simulation, SimValue> {
public:
  Simulation(const Cluster &cluster, const SimulatorOptions &options,
             SimulationResult &result)
      : cluster(cluster), options(options), result(result),
        collectives(cluster, options.algorithm) {}

  LogicalResult run(func::FuncOp entry) {
    SmallVector<SimValue> args;
    for (BlockArgument arg : entry.getArguments()) {
      SimValue value;
      value.type = arg.getType();
      if (isa<TensorType>(arg.getType())) {
        FailureOr<int64_t> device = getDeviceOf(entry, arg.getType());
        if (failed(device))
          return failure();
        // The step's batch inputs (`dist.batch_dim`) come from the host as
        // the data loader provides them: a microbatch's slice is on the
        // device from its first use to its last, not the whole batch for
        // the whole step.
        if (entry.getArgAttr(arg.getArgNumber(), "dist.batch_dim")) {
          buffers.emplace_back(*device, getTensorBytes(arg.getType()), seq++);
          buffers.back().pending = true;
          buffers.back().kind = MemoryKind::Inputs;
          buffers.back().definer = arg;
          value.buffer = static_cast<int64_t>(buffers.size()) - 1;
          args.push_back(value);
          continue;
        }
        bool state = static_cast<bool>(
            entry.getArgAttr(arg.getArgNumber(), "dist.optimizer_state"));
        value.buffer = allocate(
            *device, getTensorBytes(arg.getType()), /*time=*/0,
            state ? MemoryKind::OptimizerState : MemoryKind::Weights, arg);
        buffers[value.buffer].resident = true;
        result.devices[*device].residentBytes += buffers[value.buffer].bytes;
        argBuffers.push_back({value.buffer, arg.getType()});
      }
      args.push_back(value);
    }
    entryBlock = &entry.getBody().front();
    if (failed(callFunction(entry, args)))
      return failure();
    finish();
    return success();
  }

  // Interpreter domain interface.
  LogicalResult visitOp(Operation *op, ArrayRef<SimValue> operands,
                        SmallVectorImpl<SimValue> &results);
  std::optional<int64_t> getConcreteInt(const SimValue &value) {
    return value.concrete;
  }
  SimValue makeIndex(int64_t v) {
    SimValue value;
    value.concrete = v;
    return value;
  }
  void retain(SimValue &value) {
    if (value.buffer >= 0)
      ++buffers[value.buffer].handles;
  }
  void release(SimValue &value) {
    if (value.buffer < 0)
      return;
    Buffer &buffer = buffers[value.buffer];
    if (--buffer.handles > 0 || buffer.resident)
      return;
    buffer.freeSeq = seq++;
    if (buffer.pending)
      return; // never on the device
    DeviceState &state = devices[buffer.device];
    state.live -= buffer.bytes;
    state.liveByKind[static_cast<int>(buffer.kind)] -= buffer.bytes;
    if (options.recordMemoryChanges)
      result.memoryChanges.push_back(
          {currentOp, buffer.device, -buffer.bytes, buffer.kind});
    if (options.recordMemoryTimeline)
      result.devices[buffer.device].memoryTimeline.push_back(
          {releaseTime, state.live});
  }

private:
  /// `loc` as text, printed once per distinct location: the ops of a
  /// distributed program are clones that share their source's locations,
  /// and printing one builds an AsmState.
  const std::string &locationText(Location loc) {
    auto [it, inserted] = locationTexts.try_emplace(loc);
    if (inserted) {
      llvm::raw_string_ostream os(it->second);
      loc.print(os);
    }
    return it->second;
  }
  DenseMap<Location, std::string> locationTexts;

  FailureOr<int64_t> getDeviceOf(Operation *op, Type type) {
    auto device = dist::getDevice(type);
    if (!device) {
      op->emitError() << "cannot simulate unplaced tensor of type " << type
                      << "; run --dist-verify-placement";
      return failure();
    }
    int64_t id = device.getId();
    if (!options.deviceMap.empty()) {
      if (id >= static_cast<int64_t>(options.deviceMap.size())) {
        op->emitError() << "device " << id << " has no entry in the device "
                        << "map of " << options.deviceMap.size() << " devices";
        return failure();
      }
      id = options.deviceMap[id];
    }
    if (id >= cluster.getNumDevices()) {
      op->emitError() << "device " << id << " is outside cluster '"
                      << cluster.name << "' of " << cluster.getNumDevices()
                      << " devices";
      return failure();
    }
    return id;
  }

  /// The buffer of a result of the entry function that replaces an
  /// argument: the step returns its updated weights, which a trainer
  /// writes over the old ones once these are dead (ZeRO's all-gather into
  /// the parameter). Takes the buffer of a dead argument of the same type
  /// and device, else allocates.
  int64_t allocateResult(Value result, int64_t device, double time,
                         MemoryKind kind = MemoryKind::Activations) {
    // (DistIR never frees or reuses its function's inputs.)
    bool returned =
        options.costModel != CostModelKind::DistIRCompat &&
        llvm::any_of(result.getUsers(), [&](Operation *user) {
          return isa<func::ReturnOp>(user) && user->getBlock() == entryBlock;
        });
    if (returned)
      for (auto &[buffer, type] : argBuffers)
        if (type == result.getType() && buffers[buffer].device == device &&
            buffers[buffer].handles == 0 && !buffers[buffer].overwritten) {
          buffers[buffer].overwritten = true;
          return buffer;
        }
    return allocate(device, getTensorBytes(result.getType()), time, kind,
                    result);
  }

  int64_t allocate(int64_t device, int64_t bytes, double time, MemoryKind kind,
                   Value definer) {
    buffers.emplace_back(device, bytes, seq++);
    buffers.back().kind = kind;
    buffers.back().definer = definer;
    count(device, bytes, time, kind);
    return static_cast<int64_t>(buffers.size()) - 1;
  }

  /// Brings a pending (streamed) buffer onto its device.
  void materialize(int64_t id, double time) {
    Buffer &buffer = buffers[id];
    buffer.pending = false;
    buffer.allocSeq = seq++;
    count(buffer.device, buffer.bytes, time, buffer.kind);
  }

  /// Adds `bytes` of `kind` to the live bytes of `device`.
  void count(int64_t device, int64_t bytes, double time, MemoryKind kind) {
    DeviceState &state = devices[device];
    state.live += bytes;
    state.liveByKind[static_cast<int>(kind)] += bytes;
    DeviceReport &report = result.devices[device];
    if (state.live > report.peakBytes) {
      report.peakBytes = state.live;
      report.peakBreakdown = state.liveByKind;
      state.peakMark = seq;
    }
    if (options.recordMemoryTimeline)
      report.memoryTimeline.push_back({time, state.live});
    if (options.recordMemoryChanges && currentOp)
      result.memoryChanges.push_back({currentOp, device, bytes, kind});
  }

  /// The argument that result `i` of `op` overwrites, or null: an
  /// element-wise op (parallel loops, identity maps) that reads a function
  /// argument of the result's type for the last time. Optimizers update
  /// parameters and their state in place (`param.add_(...)`), so a step's
  /// new weights take no memory beside the old ones.
  /// Under distir-compat only the optimizer's updates do (ops tagged
  /// `dist.phase = "update"`), as in DistIR, where every other op output is
  /// a new allocation.
  OpOperand *getOverwrittenArgument(Operation *op, unsigned i) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || linalgOp.getNumLoops() != linalgOp.getNumParallelLoops() ||
        i >= linalgOp->getNumResults() ||
        !linalgOp.getIndexingMapMatchingResult(op->getResult(i)).isIdentity())
      return nullptr;
    if (options.costModel == CostModelKind::DistIRCompat) {
      auto phase = op->getAttrOfType<StringAttr>("dist.phase");
      if (!phase || phase.getValue() != "update")
        return nullptr;
    }
    for (OpOperand *input : linalgOp.getDpsInputOperands()) {
      auto arg = dyn_cast<BlockArgument>(input->get());
      if (arg && arg.getOwner() == op->getBlock() &&
          arg.getType() == op->getResult(i).getType() &&
          linalgOp.getMatchingIndexingMap(input).isIdentity() &&
          isLastUse(arg, op))
        return input;
    }
    return nullptr;
  }

  LogicalResult visitScalar(Operation *op, ArrayRef<SimValue> operands,
                            SmallVectorImpl<SimValue> &results);
  LogicalResult visitCommunication(Operation *op, ArrayRef<SimValue> operands,
                                   SmallVectorImpl<SimValue> &results);
  /// Profiled work: its measured duration on its device's compute or
  /// communication stream.
  LogicalResult visitKernel(dist::KernelOp op, ArrayRef<SimValue> operands,
                            SmallVectorImpl<SimValue> &results);
  LogicalResult visitCompute(Operation *op, ArrayRef<SimValue> operands,
                             SmallVectorImpl<SimValue> &results);
  double priceCommunication(Operation *op, ArrayRef<int64_t> group,
                            CollectiveKind &kind);
  /// The time of the fastest plan of a dist.reshard (the transfers
  /// dist-lower-reshard would emit, priced alone).
  FailureOr<double> priceReshard(dist::ReshardOp op);

  /// Places an event of `duration` on `group` and returns its index. A
  /// communication event also waits for the shared links it holds.
  int64_t schedule(Operation *op, ArrayRef<int64_t> group, bool isComm,
                   ArrayRef<SimValue> operands, double duration,
                   const ComputeWork *work, ArrayRef<int64_t> heldLinks = {});
  void finish();
  void listPeakBuffers();

  const Cluster &cluster;
  const SimulatorOptions &options;
  SimulationResult &result;
  CollectiveCostModel collectives;
  std::map<int64_t, DeviceState> devices;
  /// When each shared link (CollectiveCostModel::getHeldLinks) is free, and
  /// the event that last held it.
  llvm::DenseMap<int64_t, std::pair<double, int64_t>> links;
  std::vector<Buffer> buffers;
  /// The entry function's argument buffers and types, and its body.
  SmallVector<std::pair<int64_t, Type>> argBuffers;
  Block *entryBlock = nullptr;
  int64_t seq = 0;
  /// End of the op being retired: when values it used last are released.
  double releaseTime = 0;
  /// The op being visited or retired (null for the arguments).
  Operation *currentOp = nullptr;
};

} // namespace

LogicalResult Simulation::visitOp(Operation *op, ArrayRef<SimValue> operands,
                                  SmallVectorImpl<SimValue> &results) {
  currentOp = op;
  // A streamed input read whole is copied in now; a static slice of it
  // copies only the slice (visitCompute).
  for (auto [i, operand] : llvm::enumerate(operands))
    if (operand.buffer >= 0 && buffers[operand.buffer].pending &&
        !(i == 0 && isa<tensor::ExtractSliceOp>(op)))
      materialize(operand.buffer,
                  devices[buffers[operand.buffer].device].computeFree);
  if (auto kernel = dyn_cast<dist::KernelOp>(op))
    return visitKernel(kernel, operands, results);
  if (isa<dist::DistDialect>(op->getDialect()))
    return visitCommunication(op, operands, results);
  bool touchesTensors =
      llvm::any_of(op->getOperandTypes(),
                   [](Type t) { return isa<TensorType>(t); }) ||
      llvm::any_of(op->getResultTypes(),
                   [](Type t) { return isa<TensorType>(t); });
  if (!touchesTensors)
    return visitScalar(op, operands, results);
  return visitCompute(op, operands, results);
}

/// Scalar ops cost nothing; integer arithmetic is folded concretely so that
/// loop bounds and shapes computed in the program are known.
LogicalResult Simulation::visitScalar(Operation *op,
                                      ArrayRef<SimValue> operands,
                                      SmallVectorImpl<SimValue> &results) {
  SmallVector<Attribute> constants;
  Builder b(op->getContext());
  for (const SimValue &operand : operands)
    constants.push_back(operand.concrete && operand.type.isIntOrIndex()
                            ? b.getIntegerAttr(operand.type, *operand.concrete)
                            : Attribute());
  SmallVector<OpFoldResult> folded;
  bool didFold = op->getNumResults() > 0 &&
                 succeeded(op->fold(constants, folded)) &&
                 folded.size() == op->getNumResults();
  for (auto [i, resultValue] : llvm::enumerate(op->getResults())) {
    SimValue value;
    value.type = resultValue.getType();
    APInt concrete;
    if (matchPattern(resultValue, m_ConstantInt(&concrete)))
      value.concrete = concrete.getSExtValue();
    else if (didFold)
      if (auto attr = dyn_cast_if_present<IntegerAttr>(
              dyn_cast_if_present<Attribute>(folded[i])))
        value.concrete = attr.getValue().getSExtValue();
    results.push_back(value);
  }
  return success();
}

double Simulation::priceCommunication(Operation *op, ArrayRef<int64_t> group,
                                      CollectiveKind &kind) {
  int64_t n = group.size();
  auto bytesOf = [](Value v) {
    return static_cast<double>(getTensorBytes(v.getType()));
  };
  double operandBytes = op->getNumOperands() ? bytesOf(op->getOperand(0)) : 0;
  double resultBytes = op->getNumResults() ? bytesOf(op->getResult(0)) : 0;
  double size = 0;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](dist::SendOp) {
        kind = CollectiveKind::SendRecv;
        size = operandBytes;
      })
      .Case([&](dist::AllReduceOp) {
        kind = CollectiveKind::AllReduce;
        size = operandBytes;
      })
      .Case([&](dist::AllGatherOp) {
        kind = CollectiveKind::AllGather;
        size = resultBytes;
      })
      .Case([&](dist::ReduceScatterOp) {
        kind = CollectiveKind::ReduceScatter;
        size = operandBytes;
      })
      .Case([&](dist::AllToAllOp) {
        kind = CollectiveKind::AllToAll;
        size = operandBytes;
      })
      .Case([&](dist::BroadcastOp) {
        kind = CollectiveKind::Broadcast;
        size = operandBytes;
      })
      .Case([&](dist::ScatterOp) {
        kind = CollectiveKind::Scatter;
        size = operandBytes;
      })
      .Case([&](dist::ReduceOp) {
        kind = CollectiveKind::Reduce;
        size = operandBytes;
      })
      .Case([&](dist::GatherOp) {
        kind = CollectiveKind::Gather;
        size = resultBytes;
      })
      .Default([](Operation *other) {
        // A communication op added to the dialect needs its case here.
        llvm::report_fatal_error("simulator: no price for '" +
                                 other->getName().getStringRef() + "'");
      });
  if (n < 2)
    return 0;

  if (options.costModel == CostModelKind::Calibrated && options.calibration)
    if (std::optional<double> time =
            options.calibration->getCollectiveTime(kind, n, size))
      return *time;
  if (options.costModel != CostModelKind::DistIRCompat)
    return collectives.getTime(kind, group, size);

  // The published DistIR formulas: no latency, the slowest link spanned, and
  // its simplifications (all-gather priced like all-reduce of its input,
  // broadcast and scatter free).
  std::optional<unsigned> level = cluster.getSpanningLevel(group);
  double bandwidth = cluster.levels[level.value_or(0)].link.bandwidth;
  double factor = static_cast<double>(n - 1) / static_cast<double>(n);
  switch (kind) {
  case CollectiveKind::SendRecv:
  case CollectiveKind::Reduce:
    return size / bandwidth;
  case CollectiveKind::AllReduce:
    return 2 * size * factor / bandwidth;
  case CollectiveKind::AllGather:
    return 2 * operandBytes * factor / bandwidth;
  case CollectiveKind::Broadcast:
  case CollectiveKind::Scatter:
    return 0;
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::Gather:
  case CollectiveKind::AllToAll:
    return size * factor / bandwidth;
  }
  llvm_unreachable("unknown collective");
}

FailureOr<double> Simulation::priceReshard(dist::ReshardOp op) {
  auto element =
      cast<RankedTensorType>(op.getInputs().front().getType()).getElementType();
  int64_t elementBytes =
      std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
  std::string error;
  FailureOr<reshard::Problem> problem = reshard::decompose(
      op.getSource(), op.getDestination(), op.getShape(), elementBytes, cluster,
      [&](const Twine &message) { error = message.str(); });
  if (failed(problem))
    return op.emitOpError() << error;
  // Send/recv always applies.
  return reshard::planFastest(*problem, reshard::Balancer::Ensemble,
                              collectives)
      ->time;
}

int64_t Simulation::schedule(Operation *op, ArrayRef<int64_t> group,
                             bool isComm, ArrayRef<SimValue> operands,
                             double duration, const ComputeWork *work,
                             ArrayRef<int64_t> heldLinks) {
  // The op starts when its devices (streams) and shared links are free and,
  // with separate streams, when its operands have arrived.
  double start = 0;
  int64_t predecessor = -1;
  auto consider = [&](double time, int64_t event) {
    if (time > start || (time == start && predecessor < 0 && event >= 0)) {
      start = time;
      predecessor = event;
    }
  };
  for (int64_t d : group) {
    DeviceState &state = devices[d];
    if (!options.overlap) {
      // One op at a time per device: both "streams" are the device.
      consider(std::max(state.computeFree, state.commFree),
               state.computeFree >= state.commFree ? state.computeLast
                                                   : state.commLast);
    } else if (isComm) {
      consider(state.commFree, state.commLast);
    } else {
      consider(state.computeFree, state.computeLast);
    }
  }
  for (int64_t link : heldLinks) {
    auto it = links.find(link);
    if (it != links.end())
      consider(it->second.first, it->second.second);
  }
  if (options.overlap)
    for (const SimValue &operand : operands)
      consider(operand.ready, operand.producer);

  SimEvent event;
  if (options.describeEvents) {
    event.name = op->getName().getStringRef().str();
    event.location = locationText(op->getLoc());
  }
  event.devices.assign(group.begin(), group.end());
  event.isCommunication = isComm;
  event.start = start;
  event.end = start + duration;
  event.duration = duration;
  event.predecessor = predecessor;
  event.op = op;
  if (work) {
    event.flops = work->flops;
    event.bytes = work->bytesRead + work->bytesWritten;
  } else {
    for (Value v : op->getOperands())
      event.bytes += getTensorBytes(v.getType());
  }
  int64_t index = static_cast<int64_t>(result.events.size());
  for (int64_t d : group) {
    DeviceState &state = devices[d];
    DeviceReport &report = result.devices[d];
    if (!options.overlap || !isComm) {
      state.computeFree = event.end;
      state.computeLast = index;
    }
    if (!options.overlap || isComm) {
      state.commFree = event.end;
      state.commLast = index;
    }
    (isComm ? report.communicationBusy : report.computeBusy) += duration;
    report.finish = std::max(report.finish, event.end);
  }
  for (int64_t link : heldLinks)
    links[link] = {event.end, index};
  result.events.push_back(std::move(event));
  releaseTime = start + duration;
  return index;
}

LogicalResult
Simulation::visitCommunication(Operation *op, ArrayRef<SimValue> operands,
                               SmallVectorImpl<SimValue> &results) {
  SmallVector<int64_t> group;
  auto addDevice = [&](Type type) -> LogicalResult {
    FailureOr<int64_t> device = getDeviceOf(op, type);
    if (failed(device))
      return failure();
    if (!llvm::is_contained(group, *device))
      group.push_back(*device);
    return success();
  };
  // Rooted one-to-many ops list their group in the results; the others in
  // the operands (the root of reduce/gather is one of them).
  for (Type type : op->getOperandTypes())
    if (failed(addDevice(type)))
      return failure();
  for (Type type : op->getResultTypes())
    if (failed(addDevice(type)))
      return failure();
  // A send's group is its two endpoints in order; others keep operand order.
  CollectiveKind kind;
  double duration;
  if (auto reshard = dyn_cast<dist::ReshardOp>(op)) {
    FailureOr<double> time = priceReshard(reshard);
    if (failed(time))
      return failure();
    duration = *time;
    // It holds every shared link it crosses, both ways.
    kind = CollectiveKind::AllToAll;
  } else {
    duration = priceCommunication(op, group, kind);
  }
  SmallVector<int64_t> heldLinks;
  if (options.linkContention)
    heldLinks = collectives.getHeldLinks(kind, group);
  int64_t event = schedule(op, group, /*isComm=*/true, operands, duration,
                           nullptr, heldLinks);
  double start = result.events[event].start;
  for (auto [i, resultValue] : llvm::enumerate(op->getResults())) {
    SimValue value;
    value.type = resultValue.getType();
    value.producer = event;
    value.ready = result.events[event].end;
    FailureOr<int64_t> device = getDeviceOf(op, resultValue.getType());
    if (failed(device))
      return failure();
    // NCCL all-reduces in place when the input is not needed afterwards
    // (DistIR allocates every collective's outputs).
    if (isa<dist::AllReduceOp>(op) &&
        options.costModel != CostModelKind::DistIRCompat &&
        isLastUse(op->getOperand(i), op))
      value.buffer = operands[i].buffer;
    else
      value.buffer = allocateResult(resultValue, *device, start,
                                    MemoryKind::Communication);
    results.push_back(value);
  }
  return success();
}

LogicalResult Simulation::visitKernel(dist::KernelOp op,
                                      ArrayRef<SimValue> operands,
                                      SmallVectorImpl<SimValue> &results) {
  FailureOr<int64_t> device = getDeviceOf(op, op.getResult().getType());
  if (failed(device))
    return failure();
  // Always on the compute stream: the device stands for one thread of a
  // profiled rank, which runs its transfers itself, and tokens sent to it
  // (dist.send, on the communication streams) must not queue behind them.
  bool isComm = op.getCommunication();
  double duration = op.getDuration().convertToDouble();
  int64_t event =
      schedule(op, {*device}, /*isComm=*/false, operands, duration, nullptr);
  if (options.describeEvents)
    result.events[event].name = op.getLabel().str();
  if (isComm) {
    // Reported as the transfer it is.
    result.events[event].isCommunication = true;
    DeviceReport &report = result.devices[*device];
    report.computeBusy -= duration;
    report.communicationBusy += duration;
  }
  SimValue value;
  value.type = op.getResult().getType();
  value.producer = event;
  value.ready = result.events[event].end;
  value.buffer = allocateResult(
      op.getResult(), *device, result.events[event].start,
      isComm ? MemoryKind::Communication : MemoryKind::Activations);
  results.push_back(value);
  return success();
}

LogicalResult Simulation::visitCompute(Operation *op,
                                       ArrayRef<SimValue> operands,
                                       SmallVectorImpl<SimValue> &results) {
  std::optional<int64_t> device;
  for (Type type :
       llvm::concat<const Type>(op->getResultTypes(), op->getOperandTypes())) {
    if (!isa<TensorType>(type))
      continue;
    FailureOr<int64_t> d = getDeviceOf(op, type);
    if (failed(d))
      return failure();
    if (device && *device != *d)
      return op->emitError() << "has tensors on devices " << *device << " and "
                             << *d << "; run --dist-verify-placement";
    device = *d;
  }

  ComputeWork work = getComputeWork(op);
  // (The DistIR-compatible model prices every dtype at the f32 peak.)
  if (!work.isFree && options.costModel != CostModelKind::DistIRCompat &&
      !cluster.device.getPeakFlops(work.dtype))
    return op->emitError() << "cluster '" << cluster.name
                           << "' has no peak flop/s for " << work.dtype
                           << ", the element type of this op (add it to the "
                              "device's peak_flops)";
  double duration = priceCompute(work, cluster.device, options.costModel,
                                 options.calibration.get());
  if (options.costModel == CostModelKind::DistIRCompat)
    if (std::optional<double> fixed =
            getDistIRCompatFixedPrice(op, cluster.device))
      duration = *fixed;
  int64_t event = -1;
  double start = std::max(devices[*device].computeFree,
                          options.overlap ? 0.0 : devices[*device].commFree);
  double ready = start;
  if (!work.isFree) {
    event =
        schedule(op, {*device}, /*isComm=*/false, operands, duration, &work);
    start = result.events[event].start;
    ready = result.events[event].end;
  } else {
    for (const SimValue &operand : operands)
      ready = std::max(ready, operand.ready);
    releaseTime = start;
  }

  auto dps = dyn_cast<DestinationStyleOpInterface>(op);
  bool isView =
      isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp,
          tensor::BitcastOp, tensor::ReshapeOp, tensor::ExtractSliceOp>(op) ||
      isTransposedOperandView(op);
  for (auto [i, resultValue] : llvm::enumerate(op->getResults())) {
    SimValue value;
    value.type = resultValue.getType();
    value.producer = event;
    value.ready = ready;
    if (!isa<TensorType>(value.type)) {
      results.push_back(value);
      continue;
    }
    if (isView && operands[0].buffer >= 0 &&
        !buffers[operands[0].buffer].pending) {
      value.buffer = operands[0].buffer;
    } else if (OpOperand *arg = getOverwrittenArgument(op, i);
               arg && operands[arg->getOperandNumber()].buffer >= 0 &&
               buffers[operands[arg->getOperandNumber()].buffer].resident) {
      value.buffer = operands[arg->getOperandNumber()].buffer;
    } else if (dps && static_cast<int64_t>(i) < dps.getNumDpsInits()) {
      OpOperand *init = dps.getDpsInitOperand(i);
      const SimValue &initValue = operands[init->getOperandNumber()];
      if (initValue.buffer >= 0 && isLastUse(init->get(), op))
        value.buffer = initValue.buffer; // in place
    }
    // The destination of a transpose that is a view, or of an update that
    // overwrites its argument, is never written.
    bool unwritten =
        isa<tensor::EmptyOp>(op) && !resultValue.use_empty() &&
        llvm::all_of(resultValue.getUses(), [&](OpOperand &use) {
          Operation *user = use.getOwner();
          if (isTransposedOperandView(user))
            return true;
          auto dpsUser = dyn_cast<DestinationStyleOpInterface>(user);
          return dpsUser && dpsUser.isDpsInit(&use) &&
                 getOverwrittenArgument(user, use.getOperandNumber() -
                                                  dpsUser.getNumDpsInputs());
        });
    // dist-dtp's step-long gradient buffers; slices of streamed inputs.
    MemoryKind kind = MemoryKind::Activations;
    if (op->hasAttr("dist.gradient_buffer"))
      kind = MemoryKind::Gradients;
    else if (isa<tensor::ExtractSliceOp>(op) && operands[0].buffer >= 0 &&
             buffers[operands[0].buffer].kind == MemoryKind::Inputs)
      kind = MemoryKind::Inputs;
    if (value.buffer < 0 && !unwritten)
      value.buffer = allocateResult(resultValue, *device, start, kind);
    results.push_back(value);
  }
  return success();
}

void Simulation::finish() {
  for (auto &entry : result.devices) {
    DeviceReport &report = entry.second;
    result.latency = std::max(result.latency, report.finish);
    report.exceedsCapacity = report.peakBytes > cluster.device.memoryCapacity;
    // Time order; changes at the same time keep program order.
    std::vector<size_t> order(report.memoryTimeline.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      double ta = report.memoryTimeline[a].first;
      double tb = report.memoryTimeline[b].first;
      return ta != tb ? ta < tb : a < b;
    });
    std::vector<std::pair<double, int64_t>> sorted;
    sorted.reserve(order.size());
    for (size_t i : order)
      sorted.push_back(report.memoryTimeline[i]);
    report.memoryTimeline = std::move(sorted);
  }
  if (options.peakBuffers > 0)
    listPeakBuffers();
  // Static-offset plan per device over program order.
  std::map<int64_t, std::vector<PlanBuffer>> perDevice;
  for (const Buffer &buffer : buffers)
    if (!buffer.pending)
      perDevice[buffer.device].push_back(
          {buffer.allocSeq,
           buffer.resident || buffer.freeSeq < 0 ? seq : buffer.freeSeq,
           buffer.bytes});
  for (auto &[device, planBuffers] : perDevice)
    result.devices[device].plannedBytes =
        options.planMemory ? planStaticOffsets(planBuffers) : -1;

  // Critical path: follow, from the last event to finish, the events that
  // determined each start.
  int64_t last = -1;
  for (auto [i, event] : llvm::enumerate(result.events))
    if (last < 0 || event.end > result.events[last].end)
      last = static_cast<int64_t>(i);
  for (int64_t e = last; e >= 0; e = result.events[e].predecessor)
    result.criticalPath.push_back(e);
  std::reverse(result.criticalPath.begin(), result.criticalPath.end());
}

void Simulation::listPeakBuffers() {
  std::map<int64_t, std::vector<const Buffer *>> live;
  for (const Buffer &buffer : buffers) {
    int64_t mark = devices[buffer.device].peakMark;
    if (!buffer.pending && buffer.allocSeq < mark &&
        (buffer.freeSeq < 0 || buffer.freeSeq >= mark))
      live[buffer.device].push_back(&buffer);
  }
  for (auto &[device, list] : live) {
    // Largest first; ties in allocation order (determinism).
    std::sort(list.begin(), list.end(), [](const Buffer *a, const Buffer *b) {
      return a->bytes != b->bytes ? a->bytes > b->bytes
                                  : a->allocSeq < b->allocSeq;
    });
    if (static_cast<int64_t>(list.size()) > options.peakBuffers)
      list.resize(options.peakBuffers);
    for (const Buffer *buffer : list) {
      PeakBuffer entry;
      entry.bytes = buffer->bytes;
      entry.kind = buffer->kind;
      llvm::raw_string_ostream location(entry.location);
      if (auto arg = dyn_cast_if_present<BlockArgument>(buffer->definer)) {
        auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
        auto name =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "dist.name");
        entry.definer =
            name ? name.str() : "@" + std::to_string(arg.getArgNumber());
        arg.getLoc().print(location);
      } else if (Operation *op = buffer->definer
                                     ? buffer->definer.getDefiningOp()
                                     : nullptr) {
        entry.definer = op->getName().getStringRef().str();
        op->getLoc().print(location);
      }
      result.devices[device].peakBuffers.push_back(std::move(entry));
    }
  }
}

llvm::StringRef distir::stringifyMemoryKind(MemoryKind kind) {
  switch (kind) {
  case MemoryKind::Weights:
    return "weights";
  case MemoryKind::Gradients:
    return "gradients";
  case MemoryKind::Activations:
    return "activations";
  case MemoryKind::Inputs:
    return "inputs";
  case MemoryKind::Communication:
    return "communication";
  case MemoryKind::OptimizerState:
    return "optimizer_state";
  }
  llvm_unreachable("unknown memory kind");
}

FailureOr<SimulationResult> distir::simulate(func::FuncOp entry,
                                             const Cluster &cluster,
                                             const SimulatorOptions &options) {
  SimulationResult result;
  result.functionName = entry.getSymName().str();
  result.clusterName = cluster.name;
  result.deviceCapacity = cluster.device.memoryCapacity;
  result.options = options;
  if (options.costModel == CostModelKind::Calibrated && !options.calibration)
    return entry.emitError() << "the calibrated cost model needs a calibration";
  Simulation simulation(cluster, options, result);
  if (failed(simulation.run(entry)))
    return failure();
  return result;
}
