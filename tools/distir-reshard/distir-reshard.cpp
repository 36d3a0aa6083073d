//===- distir-reshard.cpp - Cross-mesh resharding planner -----------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Plans the move of one tensor from a sharding on a source mesh to another
// sharding on a destination mesh (Alpa's cross-mesh resharding): prints the
// unit communication tasks, the predicted and simulated time of every
// strategy and of the naive send/recv plan, the chosen plan and its load
// balance, and writes the plans as dist functions. See
// docs/design/resharding.md.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Search/Reshard.h"
#include "DistIR/Support/Format.h"
#include "DistIR/Tools/ToolUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <map>

using namespace mlir;
using namespace distir;
using namespace distir::reshard;
namespace cl = llvm::cl;

static cl::OptionCategory category("distir-reshard options");
static cl::opt<std::string>
    clusterSpec("cluster",
                cl::desc("Cluster preset or JSON file (default: the Alpa "
                         "resharding paper's machine, 8 nodes)"),
                cl::value_desc("NAME|file.json"),
                cl::init("aws-p3.8xlarge:nodes=8"), cl::cat(category));
static cl::opt<std::string> sourceMeshSpec(
    "src-mesh",
    cl::desc("Source mesh: axis sizes, optionally @ its first device "
             "(default 0), e.g. 2x4 or 2x4@8"),
    cl::value_desc("AxBx..[@FIRST]"), cl::Required, cl::cat(category));
static cl::opt<std::string> destinationMeshSpec(
    "dst-mesh",
    cl::desc("Destination mesh: axis sizes, optionally @ its first device "
             "(default: the first host after the source mesh)"),
    cl::value_desc("AxBx..[@FIRST]"), cl::Required, cl::cat(category));
static cl::opt<std::string> sourceShardingSpec(
    "src-sharding",
    cl::desc("Source sharding, one token per dimension: R (replicated) or "
             "S followed by the mesh axes splitting it, e.g. S0RR, RS01R"),
    cl::Required, cl::cat(category));
static cl::opt<std::string> destinationShardingSpec(
    "dst-sharding", cl::desc("Destination sharding (as --src-sharding)"),
    cl::Required, cl::cat(category));
static cl::opt<std::string>
    shapeSpec("shape", cl::desc("Tensor shape, e.g. 1024x1024x512"),
              cl::Required, cl::cat(category));
static cl::opt<std::string> dtype("dtype",
                                  cl::desc("Element type: f32 (default), "
                                           "f16, bf16 or f64"),
                                  cl::init("f32"), cl::cat(category));
static cl::opt<std::string>
    strategyName("strategy",
                 cl::desc("auto (default: the fastest applicable), send-recv, "
                          "local-allgather, global-allgather or broadcast"),
                 cl::init("auto"), cl::cat(category));
static cl::opt<std::string>
    balancerName("balance",
                 cl::desc("Load balancing: ensemble (default), lpt, greedy, "
                          "dfs, random or none"),
                 cl::init("ensemble"), cl::cat(category));
static cl::opt<int64_t> searchBudget(
    "search-budget",
    cl::desc("Nodes the depth-first balancer may visit (default 20000)"),
    cl::init(20000), cl::cat(category));
static cl::opt<int64_t>
    randomRounds("random-rounds",
                 cl::desc("Rounds of the randomized balancer (default 16)"),
                 cl::init(16), cl::cat(category));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("Seed of the randomized balancer"),
                              cl::init(1), cl::cat(category));
static cl::opt<std::string> format("format", cl::desc("text (default) or json"),
                                   cl::init("text"), cl::cat(category));
static cl::opt<int64_t>
    listTasks("list-tasks",
              cl::desc("Unit tasks listed in the text report (default 8)"),
              cl::init(8), cl::cat(category));
static cl::opt<std::string>
    emitFile("emit",
             cl::desc("Write the chosen plan (@reshard), the naive send/recv "
                      "plan (@reshard_naive) and the unplanned dist.reshard "
                      "(@reshard_op) as dist functions"),
             cl::value_desc("file.mlir"), cl::cat(category));

namespace {
/// What the command line asked for, resolved.
struct Request {
  Cluster cluster;
  SmallVector<int64_t> shape;
  Type elementType;
  int64_t elementBytes = 4;
  dist::ShardingAttr source, destination;
};

/// One row of the report.
struct Row {
  std::string label;
  Plan plan;
  double simulated = 0;
};
} // namespace

static LogicalResult fail(const Twine &message) {
  llvm::errs() << "error: " << message << "\n";
  return failure();
}

/// `AxBxC` into sizes >= 1 (0 allowed for tensor shapes).
static FailureOr<SmallVector<int64_t>>
parseSizes(StringRef text, StringRef what, int64_t minimum) {
  SmallVector<StringRef> parts;
  text.split(parts, 'x');
  SmallVector<int64_t> sizes;
  for (StringRef part : parts) {
    int64_t size;
    if (part.trim().getAsInteger(10, size) || size < minimum ||
        size > (int64_t(1) << 40)) {
      (void)fail("invalid " + what + " '" + text + "' (expected sizes >= " +
                 Twine(minimum) + " separated by 'x', e.g. 2x4)");
      return failure();
    }
    sizes.push_back(size);
  }
  return sizes;
}

/// `S0RR`, `R S01 R`, `S^0,R,R`, `RS^{01}R`: the split axes per dimension.
static FailureOr<SmallVector<SmallVector<int64_t>>>
parseShardingNotation(StringRef text, StringRef option) {
  SmallVector<SmallVector<int64_t>> split;
  auto bad = [&](const Twine &why) {
    (void)fail("invalid --" + option + " '" + text + "': " + why +
               " (expected one token per dimension: R, or S followed by mesh "
               "axes, e.g. S0RR or RS01R)");
    return failure();
  };
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == ' ' || c == ',') {
      ++i;
      continue;
    }
    if (c == 'R') {
      split.emplace_back();
      ++i;
      continue;
    }
    if (c != 'S')
      return bad(Twine("unexpected '") + Twine(c) + "'");
    ++i;
    if (i < text.size() && text[i] == '^')
      ++i;
    bool braced = i < text.size() && text[i] == '{';
    if (braced)
      ++i;
    SmallVector<int64_t> axes;
    while (i < text.size() && llvm::isDigit(text[i]))
      axes.push_back(text[i++] - '0');
    if (braced) {
      if (i >= text.size() || text[i] != '}')
        return bad("missing '}'");
      ++i;
    }
    if (axes.empty())
      return bad("S without mesh axes");
    split.push_back(std::move(axes));
  }
  if (split.empty())
    return bad("no dimensions");
  return split;
}

static FailureOr<dist::ShardingAttr>
buildSharding(MLIRContext *context, StringRef option, StringRef notation,
              ArrayRef<int64_t> meshShape, int64_t firstDevice,
              StringRef meshName, RankedTensorType type) {
  FailureOr<SmallVector<SmallVector<int64_t>>> split =
      parseShardingNotation(notation, option);
  if (failed(split))
    return failure();
  if (split->size() != static_cast<size_t>(type.getRank()))
    return fail("--" + option + " '" + notation + "' has " +
                Twine(split->size()) + " dimensions, the tensor " +
                Twine(type.getRank()));
  int64_t positions = 1;
  for (int64_t size : meshShape)
    positions *= size;
  SmallVector<int64_t> devices;
  for (int64_t p = 0; p < positions; ++p)
    devices.push_back(firstDevice + p);
  std::string error;
  llvm::raw_string_ostream os(error);
  ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
    os << diag.str();
    return success();
  });
  auto emit = [&]() { return mlir::emitError(UnknownLoc::get(context)); };
  if (failed(dist::MeshAttr::verify(emit, meshName, meshShape, devices)))
    return fail("--" + option + ": " + error);
  auto mesh = dist::MeshAttr::get(context, meshName, meshShape, devices);
  SmallVector<DenseI64ArrayAttr> axes;
  for (const SmallVector<int64_t> &dimAxes : *split)
    axes.push_back(DenseI64ArrayAttr::get(context, dimAxes));
  if (failed(dist::ShardingAttr::verify(
          emit, mesh, axes, ArrayRef<int64_t>(), dist::ReductionKind::Sum,
          ArrayRef<int64_t>(), ArrayRef<int64_t>())))
    return fail("--" + option + " '" + notation + "': " + error);
  auto sharding = dist::ShardingAttr::get(
      context, mesh, axes, ArrayRef<int64_t>(), dist::ReductionKind::Sum,
      ArrayRef<int64_t>(), ArrayRef<int64_t>());
  if (failed(sharding.verifyFor(type, emit)))
    return fail("--" + option + " '" + notation + "': " + error);
  return sharding;
}

/// `AxB[@FIRST]`.
static FailureOr<std::pair<SmallVector<int64_t>, std::optional<int64_t>>>
parseMesh(StringRef text, StringRef option) {
  auto [shapeText, firstText] = text.split('@');
  FailureOr<SmallVector<int64_t>> shape =
      parseSizes(shapeText, "--" + option.str(), 1);
  if (failed(shape))
    return failure();
  std::optional<int64_t> first;
  if (text.contains('@')) {
    int64_t value;
    if (firstText.getAsInteger(10, value) || value < 0)
      return fail("invalid first device '" + firstText + "' in --" + option);
    first = value;
  }
  return std::make_pair(*shape, first);
}

static FailureOr<Request> resolveRequest(MLIRContext *context) {
  Request request;
  FailureOr<Cluster> cluster = resolveCluster(
      clusterSpec, [](const Twine &message) { (void)fail(message); });
  if (failed(cluster))
    return failure();
  request.cluster = std::move(*cluster);
  FailureOr<SmallVector<int64_t>> shape = parseSizes(shapeSpec, "--shape", 0);
  if (failed(shape))
    return failure();
  request.shape = *shape;
  Builder b(context);
  std::map<std::string, std::pair<Type, int64_t>> types = {
      {"f32", {b.getF32Type(), 4}},
      {"f16", {b.getF16Type(), 2}},
      {"bf16", {b.getBF16Type(), 2}},
      {"f64", {b.getF64Type(), 8}}};
  auto type = types.find(dtype);
  if (type == types.end())
    return fail("unknown --dtype '" + dtype +
                "' (expected f32, f16, bf16 or "
                "f64)");
  request.elementType = type->second.first;
  request.elementBytes = type->second.second;
  auto tensorType = RankedTensorType::get(request.shape, request.elementType);

  auto sourceMesh = parseMesh(sourceMeshSpec, "src-mesh");
  auto destinationMesh = parseMesh(destinationMeshSpec, "dst-mesh");
  if (failed(sourceMesh) || failed(destinationMesh))
    return failure();
  int64_t sourceFirst = sourceMesh->second.value_or(0);
  int64_t sourcePositions = 1;
  for (int64_t size : sourceMesh->first)
    sourcePositions *= size;
  // By default the destination starts on the first host past the source.
  int64_t hostSize = 1;
  for (size_t l = 1; l < request.cluster.levels.size(); ++l)
    hostSize *= request.cluster.levels[l].size;
  int64_t sourceEnd = sourceFirst + sourcePositions;
  int64_t destinationFirst = destinationMesh->second.value_or(
      (sourceEnd + hostSize - 1) / hostSize * hostSize);
  auto source =
      buildSharding(context, "src-sharding", sourceShardingSpec,
                    sourceMesh->first, sourceFirst, "source", tensorType);
  if (failed(source))
    return failure();
  auto destination = buildSharding(
      context, "dst-sharding", destinationShardingSpec, destinationMesh->first,
      destinationFirst, "destination", tensorType);
  if (failed(destination))
    return failure();
  request.source = *source;
  request.destination = *destination;
  return request;
}

static std::string formatBox(const Box &box) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      box, os,
      [&](auto range) {
        os << "[" << range.first << "," << range.second << ")";
      },
      "x");
  return text;
}

static std::string formatDevices(ArrayRef<int64_t> devices) {
  if (devices.empty())
    return "-";
  // Runs of consecutive ids as a-b.
  std::string text;
  llvm::raw_string_ostream os(text);
  for (size_t i = 0; i < devices.size();) {
    size_t j = i;
    while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1)
      ++j;
    if (i)
      os << ",";
    os << devices[i];
    if (j > i)
      os << "-" << devices[j];
    i = j + 1;
  }
  return text;
}

static std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 4) {
    bytes /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:f2} {1}", bytes, units[unit]).str();
}

/// Simulates `plan`'s emitted function (overlapping streams, shared links
/// contended): the time the program would take.
static FailureOr<double> simulatePlan(MLIRContext *context,
                                      const Request &request,
                                      const Problem &problem,
                                      const Plan &plan) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(context));
  auto report = [](const Twine &message) { (void)fail(message); };
  FailureOr<func::FuncOp> func =
      emitPlan(*module, "reshard", problem, plan, request.elementType, report);
  if (failed(func))
    return failure();
  SimulatorOptions options;
  options.overlap = true;
  options.linkContention = true;
  options.planMemory = false;
  options.describeEvents = false;
  options.recordMemoryTimeline = false;
  FailureOr<SimulationResult> result =
      simulate(*func, request.cluster, options);
  if (failed(result))
    return failure();
  return result->latency;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "DistIR cross-mesh resharding: plans the move of a tensor between two "
      "shardings on two device meshes (unit tasks, strategies, load "
      "balancing) and predicts each plan's time\n");
  MLIRContext context;
  context.loadDialect<dist::DistDialect, func::FuncDialect,
                      tensor::TensorDialect>();

  if (format != "text" && format != "json")
    return failed(
        fail("unknown --format '" + format + "' (expected text or json)"));
  std::optional<Balancer> balancer = symbolizeBalancer(balancerName);
  if (!balancer)
    return failed(
        fail("unknown --balance '" + balancerName +
             "' (expected ensemble, lpt, greedy, dfs, random or none)"));
  std::optional<Strategy> forced;
  if (strategyName != "auto") {
    forced = symbolizeStrategy(strategyName);
    if (!forced)
      return failed(fail("unknown --strategy '" + strategyName +
                         "' (expected auto, send-recv, local-allgather, "
                         "global-allgather or broadcast)"));
  }
  if (searchBudget < 0 || randomRounds < 0 || listTasks < 0)
    return failed(fail("--search-budget, --random-rounds and --list-tasks must "
                       "not be negative"));
  FailureOr<Request> request = resolveRequest(&context);
  if (failed(request))
    return 1;
  FailureOr<Problem> problem =
      decompose(request->source, request->destination, request->shape,
                request->elementBytes, request->cluster,
                [](const Twine &message) { (void)fail(message); });
  if (failed(problem))
    return 1;

  CollectiveCostModel model(request->cluster);
  PlanOptions options;
  options.searchBudget = searchBudget;
  options.randomRounds = randomRounds;
  options.seed = seed;

  // The naive plan, then each strategy under the chosen balancer.
  SmallVector<Row> rows;
  std::map<std::string, std::string> notApplicable;
  rows.push_back({"naive send-recv",
                  planResharding(*problem, Strategy::SendRecv, Balancer::None,
                                 model, options),
                  0});
  for (Strategy strategy : getAllStrategies()) {
    if (std::optional<std::string> why =
            whyNotApplicable(*problem, strategy, request->cluster)) {
      notApplicable[stringifyStrategy(strategy).str()] = *why;
      continue;
    }
    rows.push_back(
        {stringifyStrategy(strategy).str(),
         planResharding(*problem, strategy, *balancer, model, options), 0});
  }
  for (Row &row : rows) {
    FailureOr<double> simulated =
        simulatePlan(&context, *request, *problem, row.plan);
    if (failed(simulated))
      return 1;
    row.simulated = *simulated;
  }
  // The chosen plan: the forced strategy, or the fastest in simulation
  // (the first on ties: send/recv before collectives).
  const Row *chosen = nullptr;
  if (forced) {
    StringRef name = stringifyStrategy(*forced);
    if (notApplicable.count(name.str()))
      return failed(fail("--strategy " + name +
                         " does not apply: " + notApplicable[name.str()]));
    for (const Row &row : llvm::drop_begin(rows))
      if (row.label == name)
        chosen = &row;
  } else {
    for (const Row &row : llvm::drop_begin(rows))
      if (!chosen || row.simulated < chosen->simulated)
        chosen = &row;
  }

  if (!emitFile.empty()) {
    OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&context));
    // The cluster travels with the plans, so distir-sim prices them alike.
    (*module)->setAttr(dist::DistDialect::getClusterAttrName(),
                       dist::clusterToAttr(&context, request->cluster));
    auto report = [](const Twine &message) { (void)fail(message); };
    if (failed(emitPlan(*module, "reshard", *problem, chosen->plan,
                        request->elementType, report)) ||
        failed(emitPlan(*module, "reshard_naive", *problem, rows[0].plan,
                        request->elementType, report)))
      return 1;
    emitReshardOp(*module, "reshard_op", *problem, request->elementType);
    if (failed(verify(*module)))
      return failed(fail("internal: the emitted plan does not verify"));
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    if (failed(writeFile(emitFile, text)))
      return 1;
  }

  // Load per sender: what each source device sends (bytes), the balance.
  std::map<int64_t, double> sent;
  for (const Transfer &transfer : chosen->plan.transfers)
    if (transfer.kind != CollectiveKind::AllGather)
      sent[transfer.group[0]] +=
          static_cast<double>(getVolume(transfer.box)) * request->elementBytes;
  int64_t needTransfer = llvm::count_if(
      problem->tasks, [](const UnitTask &t) { return !t.receivers.empty(); });
  double totalBytes = request->elementBytes;
  for (int64_t size : request->shape)
    totalBytes *= static_cast<double>(size);

  if (format == "json") {
    llvm::json::Array tasks, strategies;
    for (const UnitTask &task : problem->tasks) {
      llvm::json::Array box;
      for (auto [lo, hi] : task.box)
        box.push_back(llvm::json::Array{lo, hi});
      tasks.push_back(
          llvm::json::Object{{"box", std::move(box)},
                             {"bytes", task.bytes},
                             {"senders", llvm::json::Array(task.senders)},
                             {"receivers", llvm::json::Array(task.receivers)},
                             {"local", llvm::json::Array(task.local)}});
    }
    for (const Row &row : rows)
      strategies.push_back(llvm::json::Object{
          {"strategy", row.label},
          {"balancer", stringifyBalancer(row.plan.balancer)},
          {"chosen_balancer", stringifyBalancer(row.plan.chosen)},
          {"predicted_s", row.plan.time},
          {"simulated_s", row.simulated},
          {"transfers", static_cast<int64_t>(row.plan.transfers.size())},
          {"shared_link_bytes", row.plan.sharedLinkBytes}});
    llvm::json::Object notApplicableJSON;
    for (const auto &[name, why] : notApplicable)
      notApplicableJSON[name] = why;
    llvm::json::Object load;
    for (auto [device, bytes] : sent)
      load[std::to_string(device)] = bytes;
    auto tilesOf = [](const Layout &layout) {
      llvm::json::Array tiles;
      for (auto [device, box] : llvm::zip(layout.devices, layout.boxes)) {
        llvm::json::Array ranges;
        for (auto [lo, hi] : box)
          ranges.push_back(llvm::json::Array{lo, hi});
        tiles.push_back(
            llvm::json::Object{{"device", device}, {"box", std::move(ranges)}});
      }
      return tiles;
    };
    llvm::json::Object root{
        {"cluster", request->cluster.name},
        {"source_tiles", tilesOf(problem->sourceLayout)},
        {"destination_tiles", tilesOf(problem->destinationLayout)},
        {"shape", llvm::json::Array(request->shape)},
        {"dtype", dtype},
        {"unit_tasks", std::move(tasks)},
        {"strategies", std::move(strategies)},
        {"not_applicable", std::move(notApplicableJSON)},
        {"chosen",
         llvm::json::Object{
             {"strategy", chosen->label},
             {"balancer", stringifyBalancer(chosen->plan.chosen)},
             {"predicted_s", chosen->plan.time},
             {"simulated_s", chosen->simulated},
             {"speedup_over_naive", rows[0].simulated / chosen->simulated}}},
        {"bytes_sent_per_device", std::move(load)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)))
                 << "\n";
    return 0;
  }

  llvm::raw_ostream &os = llvm::outs();
  os << "resharding a "
     << llvm::join(llvm::map_range(request->shape,
                                   [](int64_t s) { return std::to_string(s); }),
                   "x")
     << " " << dtype << " tensor (" << formatBytes(totalBytes) << ") on "
     << request->cluster.name << " (" << request->cluster.getNumDevices()
     << " devices)\n";
  os << "  source:      " << sourceShardingSpec << " on mesh " << sourceMeshSpec
     << ", devices " << formatDevices(problem->sourceLayout.devices) << "\n";
  os << "  destination: " << destinationShardingSpec << " on mesh "
     << destinationMeshSpec << ", devices "
     << formatDevices(problem->destinationLayout.devices) << "\n";
  os << "unit tasks: " << problem->tasks.size() << " (" << needTransfer
     << " need a transfer)\n";
  os << llvm::formatv("  {0,-4} {1,-36} {2,-12} {3,-12} {4}\n", "#", "piece",
                      "bytes", "senders", "receivers");
  for (auto [i, task] : llvm::enumerate(problem->tasks)) {
    if (static_cast<int64_t>(i) >= listTasks) {
      os << "  ... " << problem->tasks.size() - i << " more\n";
      break;
    }
    os << llvm::formatv("  {0,-4} {1,-36} {2,-12} {3,-12} {4}\n", i,
                        formatBox(task.box), formatBytes(task.bytes),
                        formatDevices(task.senders),
                        formatDevices(task.receivers));
  }
  os << "plans (" << stringifyBalancer(*balancer)
     << " load balancing; simulated with shared links contended):\n";
  os << llvm::formatv("  {0,-18} {1,-10} {2,-13} {3,-13} {4,-10} {5}\n",
                      "strategy", "balancer", "predicted", "simulated",
                      "transfers", "NIC bytes");
  for (const Row &row : rows)
    os << llvm::formatv("  {0,-18} {1,-10} {2,-13} {3,-13} {4,-10} {5}\n",
                        row.label, stringifyBalancer(row.plan.chosen),
                        formatSeconds(row.plan.time),
                        formatSeconds(row.simulated), row.plan.transfers.size(),
                        formatBytes(row.plan.sharedLinkBytes));
  for (const auto &[name, why] : notApplicable)
    os << "  " << name << ": not applicable (" << why << ")\n";
  os << llvm::formatv("chosen: {0} balanced by {1}: predicted {2}, simulated "
                      "{3}, {4:f2}x the naive plan's speed\n",
                      chosen->label, stringifyBalancer(chosen->plan.chosen),
                      formatSeconds(chosen->plan.time),
                      formatSeconds(chosen->simulated),
                      rows[0].simulated / chosen->simulated);
  // The load balance: bytes each sender puts on the wire.
  double least = std::numeric_limits<double>::infinity(), most = 0;
  for (auto [device, bytes] : sent) {
    least = std::min(least, bytes);
    most = std::max(most, bytes);
  }
  os << "bytes sent per source device";
  if (sent.size() > 16) {
    os << ": " << sent.size() << " senders, " << formatBytes(least) << " to "
       << formatBytes(most) << "\n";
  } else {
    os << ":";
    for (auto [device, bytes] : sent)
      os << " " << device << ":" << formatBytes(bytes);
    os << "\n";
  }
  return 0;
}
