//===- distir-replay.cpp - Replay the traces of a distributed job ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Reads the torch.profiler traces of every rank of a data-parallel job,
// joins them into one dataflow graph, estimates the ranks' clock offsets,
// replays the graph (dPRO) and reports the measured and predicted iteration
// time, the offsets, each collective's transfer time and the critical path.
// See docs/design/replay.md.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/MemoryAdvisor.h"
#include "DistIR/Replay/OpFusion.h"
#include "DistIR/Replay/Optimizer.h"
#include "DistIR/Replay/Program.h"
#include "DistIR/Support/Format.h"
#include "DistIR/Tools/ToolUtils.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace distir;
using namespace distir::replay;
namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::OptionCategory category("distir-replay options");
static cl::list<std::string>
    tracePaths(cl::Positional, cl::OneOrMore,
               cl::desc("<rank trace .json or .json.gz>..."),
               cl::cat(category));
static cl::opt<std::string> iterationsSpec(
    "iterations",
    cl::desc("Profiled iterations to replay: auto (default: every "
             "ProfilerStep#N) or N (the last N)"),
    cl::value_desc("auto|N"), cl::init("auto"), cl::cat(category));
enum class Format { Text, JSON };
static cl::opt<Format>
    format("format", cl::desc("Report format"),
           cl::values(clEnumValN(Format::Text, "text", "table (default)"),
                      clEnumValN(Format::JSON, "json", "one JSON object")),
           cl::init(Format::Text), cl::cat(category));
static cl::opt<std::string>
    tracePath("trace",
              cl::desc("Write the replayed timeline as a Chrome trace"),
              cl::value_desc("file.json"), cl::cat(category));

static cl::opt<std::string> programPath(
    "emit-program",
    cl::desc("Write the replayed graph (aligned clocks) as a dist program "
             "of dist.kernel ops, one per node, for distir-sim --overlap"),
    cl::value_desc("file.mlir"), cl::cat(category));

static cl::opt<bool> optimize(
    "optimize",
    cl::desc("Price DDP bucket sizes (tensor fusion and partition of the "
             "gradient all-reduces) and op fusions on the critical path by "
             "replay; recommend bucket_cap_mb and fusion groups"),
    cl::cat(category));

static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Bound on what an iteration allocates per rank beyond the level "
             "at its start (bytes; B, K/KB, M/MB, G/GB, KiB, MiB, GiB "
             "suffixes): price "
             "gradient accumulation and recomputation by replay and "
             "recommend the fastest that fits"),
    cl::value_desc("BYTES"), cl::cat(category));

static cl::opt<int64_t> ranksPerHost(
    "ranks-per-host",
    cl::desc("Consecutive ranks that share a host, whose collectives slow "
             "down each other's compute under --optimize (default 0: all "
             "ranks on one host)"),
    cl::init(0), cl::cat(category));

static int failWith(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "distir-replay") << message << "\n";
  return 1;
}

/// The relative difference of `predicted` from `measured`, e.g. "+1.2%".
static std::string formatError(double predicted, double measured) {
  double percent = (predicted / measured - 1) * 100;
  return llvm::formatv("{0}{1:f1}%", percent >= 0 ? "+" : "", percent).str();
}

/// Time on the critical path by op name, largest first.
static std::vector<std::pair<std::string, double>>
criticalPathByName(const SimulationResult &timeline) {
  std::map<std::string, double> byName;
  for (int64_t index : timeline.criticalPath) {
    const SimEvent &event = timeline.events[index];
    std::string name = event.name;
    if (event.isCommunication)
      name = name.substr(0, name.find(" step "));
    byName[name] += event.end - event.start;
  }
  std::vector<std::pair<std::string, double>> sorted(byName.begin(),
                                                     byName.end());
  llvm::sort(sorted,
             [](const auto &a, const auto &b) { return a.second > b.second; });
  return sorted;
}

/// Per rank: the GPU work (kernels, copies, memsets) replayed, its time
/// (summed over streams, which may overlap) and the CUDA streams it ran on.
struct GpuUsage {
  int64_t items = 0;
  double time = 0;
  std::set<int64_t> streams;
};
static std::map<int64_t, GpuUsage> gpuUsage(const DataflowGraph &graph) {
  std::map<int64_t, GpuUsage> usage;
  for (int64_t i = graph.firstGpuNode(); i < (int64_t)graph.nodes.size(); ++i) {
    const Node &node = graph.nodes[i];
    GpuUsage &rank = usage[node.rank];
    ++rank.items;
    rank.time += node.duration;
    rank.streams.insert(graph.streams[node.stream].thread);
  }
  return usage;
}

static json::Value toJSON(const DataflowGraph &graph,
                          const ClockAlignment &alignment,
                          const ReplayResult &aligned,
                          const ReplayResult &recorded) {
  json::Array ranks;
  std::map<int64_t, GpuUsage> gpu = gpuUsage(graph);
  for (const auto &[rank, report] : aligned.timeline.devices) {
    json::Object object{{"rank", rank},
                        {"compute_busy_s", report.computeBusy},
                        {"communication_busy_s", report.communicationBusy},
                        {"finish_s", report.finish}};
    if (auto usage = gpu.find(rank); usage != gpu.end()) {
      object["gpu_time_s"] = usage->second.time;
      object["gpu_streams"] = (int64_t)usage->second.streams.size();
      object["gpu_activities"] = usage->second.items;
    }
    if (graph.peakAllocatedBytes[rank] >= 0)
      object["peak_allocated_bytes"] = graph.peakAllocatedBytes[rank];
    ranks.push_back(std::move(object));
  }
  json::Array collectives;
  for (auto [index, collective] : llvm::enumerate(graph.collectives)) {
    json::Object object{
        {"name", collective.name},
        {"iteration", collective.iteration},
        {"ring_steps", collective.steps},
        {"transfer_s", aligned.transferTimes[index]},
        {"transfer_unaligned_s", recorded.transferTimes[index]}};
    if (collective.elements >= 0)
      object["elements"] = collective.elements;
    collectives.push_back(std::move(object));
  }
  json::Array path;
  for (int64_t index : aligned.timeline.criticalPath) {
    const SimEvent &event = aligned.timeline.events[index];
    path.push_back(json::Object{
        {"name", event.name},
        {"rank", event.devices.front()},
        {"stream", event.isCommunication ? "communication" : "compute"},
        {"start_s", event.start},
        {"end_s", event.end}});
  }
  json::Array offsets;
  for (double offset : alignment.offsets)
    offsets.push_back(offset);
  json::Array dropped;
  for (const std::string &why : graph.droppedIterations)
    dropped.push_back(why);
  double measured = graph.measuredIteration;
  return json::Object{
      {"ranks", graph.numRanks},
      {"iterations", graph.numIterations},
      {"measured_iteration_s", measured},
      {"predicted_iteration_s", aligned.predictedIteration},
      {"relative_error", aligned.predictedIteration / measured - 1},
      {"predicted_iteration_unaligned_s", recorded.predictedIteration},
      {"relative_error_unaligned", recorded.predictedIteration / measured - 1},
      {"left_out", std::move(dropped)},
      {"clock_offsets_s", std::move(offsets)},
      {"alignment", json::Object{{"residual_s", alignment.residual},
                                 {"constraints", alignment.constraints},
                                 {"violated_before_projection",
                                  alignment.violatedBeforeProjection}}},
      {"rank_reports", std::move(ranks)},
      {"collectives", std::move(collectives)},
      {"critical_path", std::move(path)}};
}

static std::string formatCap(double capMB) {
  if (capMB < 0)
    return "traced";
  if (capMB >= 1e6)
    return "one bucket";
  return llvm::formatv("{0}", capMB).str();
}

static json::Value toJSON(const BucketAdvice &advice) {
  auto candidate = [](const BucketCandidate &row) {
    json::Array buckets;
    for (int64_t elements : row.bucketElements)
      buckets.push_back(elements);
    json::Object object{{"buckets", (int64_t)buckets.size()},
                        {"bucket_elements", std::move(buckets)},
                        {"predicted_iteration_s", row.predictedIteration}};
    if (row.capMB >= 1e6)
      object["bucket_cap_mb"] = "one bucket";
    else if (row.capMB >= 0)
      object["bucket_cap_mb"] = row.capMB;
    return object;
  };
  json::Array candidates;
  for (const BucketCandidate &row : advice.candidates)
    candidates.push_back(candidate(row));
  const BucketCandidate &best = advice.keepTraced
                                    ? advice.tracedModelled
                                    : advice.candidates[advice.best];
  json::Object recommended = candidate(best);
  recommended["keep_traced"] = advice.keepTraced;
  json::Object result{
      {"transfer_model",
       json::Object{{"latency_s", advice.model.latency},
                    {"seconds_per_element", advice.model.secondsPerElement},
                    {"latency_separable", advice.model.latencySeparable},
                    {"samples", advice.model.samples},
                    {"residual_s", advice.model.residual}}},
      {"interference",
       json::Object{{"estimated", advice.interference.estimated},
                    {"slowdown", advice.interference.slowdown}}},
      {"model_error", advice.modelError},
      {"traced_modelled", candidate(advice.tracedModelled)},
      {"candidates", std::move(candidates)},
      {"recommended", std::move(recommended)},
      {"predicted_speedup",
       advice.tracedModelled.predictedIteration / best.predictedIteration}};
  if (advice.copyModel)
    result["copy_model"] = json::Object{
        {"latency_s", advice.copyModel->latency},
        {"seconds_per_element", advice.copyModel->secondsPerElement},
        {"samples", advice.copyModel->samples},
        {"residual_s", advice.copyModel->residual}};
  return result;
}

static void printAdvice(const BucketAdvice &advice, double traced) {
  llvm::raw_ostream &os = llvm::outs();
  const TransferModel &model = advice.model;
  os << llvm::formatv("DDP bucket size (transfer model {0} + {1:e2} s/element "
                      "fitted to {2} collectives, residual {3}{4}):\n",
                      formatSeconds(model.latency), model.secondsPerElement,
                      model.samples, formatSeconds(model.residual),
                      model.latencySeparable
                          ? ""
                          : "; one bucket size traced, latency taken as 0");
  if (advice.copyModel)
    os << llvm::formatv("  GPU job: each bucket copied to host memory first "
                        "({0} + {1:e2} s/element fitted to {2} copies, "
                        "residual {3})\n",
                        formatSeconds(advice.copyModel->latency),
                        advice.copyModel->secondsPerElement,
                        advice.copyModel->samples,
                        formatSeconds(advice.copyModel->residual));
  os << llvm::formatv("  compute slowed down {0:f2}x while collectives run "
                      "({1}); model error on the traced buckets {2:f1}%\n",
                      advice.interference.slowdown,
                      advice.interference.estimated
                          ? "fitted to the trace"
                          : "too little overlap traced to fit",
                      advice.modelError * 100);
  os << llvm::formatv("  {0,-14} {1,-8} {2}\n", "bucket_cap_mb", "buckets",
                      "predicted iteration");
  os << llvm::formatv("  {0,-14} {1,-8} {2} (model), {3} (measured "
                      "transfers)\n",
                      "traced", advice.tracedModelled.bucketElements.size(),
                      formatSeconds(advice.tracedModelled.predictedIteration),
                      formatSeconds(traced));
  for (const BucketCandidate &row : advice.candidates)
    os << llvm::formatv("  {0,-14} {1,-8} {2}\n", formatCap(row.capMB),
                        row.bucketElements.size(),
                        formatSeconds(row.predictedIteration));
  const BucketCandidate &best = advice.candidates[advice.best];
  if (advice.keepTraced) {
    os << llvm::formatv("recommended: keep the traced buckets (the best, "
                        "bucket_cap_mb={0} at {1}, is not faster by more than "
                        "{2:f1}%)\n",
                        formatCap(best.capMB),
                        formatSeconds(best.predictedIteration),
                        std::max(2.0, advice.modelError * 100));
    return;
  }
  os << llvm::formatv(
      "recommended: bucket_cap_mb={0}: predicted {1}, {2:f2}x "
      "the traced buckets' speed under the same model\n",
      formatCap(best.capMB), formatSeconds(best.predictedIteration),
      advice.tracedModelled.predictedIteration / best.predictedIteration);
}

/// "aten::relu#2" for the third op of that name in an iteration (backward
/// ops without the autograd engine's prefix; JSON keeps it).
static std::string formatOp(const OpIdentity &op) {
  llvm::StringRef name = op.name;
  name.consume_front("autograd::engine::evaluate_function: ");
  return llvm::formatv("{0}#{1}", name, op.occurrence).str();
}

static std::string formatGroup(const FusionGroup &group) {
  std::string text;
  for (const OpIdentity &op : group.ops)
    text += (text.empty() ? "" : " + ") + formatOp(op);
  return text;
}

static json::Value toJSON(const FusionAdvice &advice) {
  json::Array groups;
  for (const FusionGroup &group : advice.groups) {
    json::Array ops;
    for (const OpIdentity &op : group.ops)
      ops.push_back(
          json::Object{{"name", op.name}, {"occurrence", op.occurrence}});
    groups.push_back(
        json::Object{{"ops", std::move(ops)},
                     {"estimated_saving_s", group.estimatedSaving}});
  }
  return json::Object{
      {"candidates", advice.candidates},
      {"rejected_by_rule", advice.rejectedByRule},
      {"rejected_by_replay", advice.rejectedByReplay},
      {"groups", std::move(groups)},
      {"baseline_iteration_s", advice.baseline},
      {"predicted_iteration_s", advice.predictedIteration},
      {"predicted_speedup", advice.baseline / advice.predictedIteration}};
}

static void printFusion(const FusionAdvice &advice) {
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("op fusion (pairs back to back on the critical path; "
                      "Theorem 1: fuse when the saved overhead exceeds the "
                      "lost overlap; each fusion checked by replay):\n  {0} "
                      "candidate pairs, {1} rejected by the rule, {2} not "
                      "faster in replay\n",
                      advice.candidates, advice.rejectedByRule,
                      advice.rejectedByReplay);
  for (const FusionGroup &group : advice.groups)
    os << llvm::formatv("  fuse {0} (estimated {1} per iteration)\n",
                        formatGroup(group),
                        formatSeconds(group.estimatedSaving));
  if (advice.groups.empty()) {
    os << "recommended: no op fusion\n";
    return;
  }
  os << llvm::formatv("recommended: {0} fusion groups: predicted {1}, {2:f3}x "
                      "the traced replay ({3})\n",
                      advice.groups.size(),
                      formatSeconds(advice.predictedIteration),
                      advice.baseline / advice.predictedIteration,
                      formatSeconds(advice.baseline));
}

static std::string describe(const MemoryOption &option) {
  switch (option.kind) {
  case MemoryOption::Kind::Traced:
    return "traced";
  case MemoryOption::Kind::Accumulation:
    return llvm::formatv("gradient accumulation, {0} microbatches",
                         option.microbatches);
  case MemoryOption::Kind::Recomputation:
    return llvm::formatv("recomputation, {0} segments", option.segments);
  }
  llvm_unreachable("unknown memory option");
}

static json::Value toJSON(const MemoryAdvice &advice) {
  json::Array options;
  for (const MemoryOption &option : advice.options) {
    json::Object object{
        {"option", describe(option)},
        {"peak_bytes", option.peakBytes},
        {"predicted_iteration_s", option.predictedIteration},
        {"predicted_iteration_upper_s", option.predictedIterationUpper},
        {"fits", option.fits}};
    if (option.kind == MemoryOption::Kind::Accumulation)
      object["microbatches"] = option.microbatches;
    if (option.kind == MemoryOption::Kind::Recomputation)
      object["segments"] = option.segments;
    options.push_back(std::move(object));
  }
  json::Object object{
      {"budget_bytes", advice.budgetBytes},
      {"traced_peak_bytes", advice.tracedPeakBytes},
      {"traced_max_peak_bytes", advice.tracedMaxPeakBytes},
      {"activation_bytes", advice.activationBytes},
      {"largest_forward_allocation_bytes", advice.largestForwardAllocation},
      {"options", std::move(options)}};
  if (advice.best >= 0)
    object["recommended"] = describe(advice.options[advice.best]);
  else
    object["recommended"] = nullptr;
  return object;
}

static void printMemory(const MemoryAdvice &advice) {
  llvm::raw_ostream &os = llvm::outs();
  os << llvm::formatv("memory budget {0} B per rank (allocated over a typical "
                      "iteration's start; traced peak {1} B, in any one "
                      "iteration {2} B; activations {3} B, largest forward "
                      "allocation {4} B):\n",
                      advice.budgetBytes, advice.tracedPeakBytes,
                      advice.tracedMaxPeakBytes, advice.activationBytes,
                      advice.largestForwardAllocation);
  os << llvm::formatv("  {0,-40} {1,-12} {2,-24} {3}\n", "option", "peak (B)",
                      "predicted iteration", "fits");
  for (const MemoryOption &option : advice.options) {
    std::string time = formatSeconds(option.predictedIteration);
    if (option.predictedIterationUpper != option.predictedIteration)
      time += " to " + formatSeconds(option.predictedIterationUpper);
    os << llvm::formatv("  {0,-40} {1,-12} {2,-24} {3}\n", describe(option),
                        option.peakBytes, time, option.fits ? "yes" : "no");
  }
  if (advice.best < 0) {
    int64_t least = advice.options.front().peakBytes;
    for (const MemoryOption &option : advice.options)
      least = std::min(least, option.peakBytes);
    os << llvm::formatv("recommended: nothing fits: the least predicted peak "
                        "is {0} B\n",
                        least);
    return;
  }
  // Ranked by the upper bound: an op's time may not shrink with the batch.
  const MemoryOption &best = advice.options[advice.best];
  os << llvm::formatv(
      "recommended: {0}: predicted at most {1}, {2:f3}x the "
      "traced replay's time\n",
      describe(best), formatSeconds(best.predictedIterationUpper),
      best.predictedIterationUpper / advice.options.front().predictedIteration);
}

/// Bytes with an optional suffix: B, decimal (K, M, G, KB, MB, GB) or
/// binary (KiB, MiB, GiB).
static std::optional<int64_t> parseBytes(llvm::StringRef text) {
  static const std::pair<const char *, double> suffixes[] = {
      {"KiB", 1024.0},
      {"MiB", 1024.0 * 1024},
      {"GiB", 1024.0 * 1024 * 1024},
      {"KB", 1e3},
      {"MB", 1e6},
      {"GB", 1e9},
      {"K", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"B", 1}};
  double scale = 1;
  for (auto [suffix, factor] : suffixes)
    if (text.consume_back(suffix)) {
      scale = factor;
      break;
    }
  double value = 0;
  if (text.trim().getAsDouble(value) || !(value > 0) || value * scale > 9e18)
    return std::nullopt;
  return (int64_t)(value * scale);
}

static void printText(const DataflowGraph &graph,
                      const ClockAlignment &alignment,
                      const ReplayResult &aligned,
                      const ReplayResult &recorded) {
  llvm::raw_ostream &os = llvm::outs();
  double measured = graph.measuredIteration;
  os << llvm::formatv("replay of {0} ranks, {1} iterations, {2} nodes, {3} "
                      "collectives\n",
                      graph.numRanks, graph.numIterations, graph.nodes.size(),
                      graph.collectives.size());
  for (const std::string &why : graph.droppedIterations)
    os << "left out: " << why << "\n";
  os << "measured iteration:  " << formatSeconds(measured) << "\n";
  os << llvm::formatv("predicted iteration: {0} ({1}) with aligned clocks, {2} "
                      "({3}) with the clocks as recorded\n",
                      formatSeconds(aligned.predictedIteration),
                      formatError(aligned.predictedIteration, measured),
                      formatSeconds(recorded.predictedIteration),
                      formatError(recorded.predictedIteration, measured));
  os << "clock offsets:";
  for (auto [rank, offset] : llvm::enumerate(alignment.offsets))
    os << " " << rank << ":" << formatSeconds(offset);
  os << llvm::formatv(" (residual {0}, {1} of {2} ordering constraints "
                      "violated before projection)\n",
                      formatSeconds(alignment.residual),
                      alignment.violatedBeforeProjection,
                      alignment.constraints);
  os << llvm::formatv("  {0,-5} {1,-14} {2,-14} {3}\n", "rank", "compute",
                      "communication", "peak allocated (B)");
  for (const auto &[rank, report] : aligned.timeline.devices)
    os << llvm::formatv("  {0,-5} {1,-14} {2,-14} {3}\n", rank,
                        formatSeconds(report.computeBusy),
                        formatSeconds(report.communicationBusy),
                        graph.peakAllocatedBytes[rank] >= 0
                            ? std::to_string(graph.peakAllocatedBytes[rank])
                            : std::string("not traced"));
  for (const auto &[rank, usage] : gpuUsage(graph))
    os << llvm::formatv("  GPU of rank {0}: {1} of kernels, copies and "
                        "memsets ({2}) on {3} CUDA stream(s)\n",
                        rank, formatSeconds(usage.time), usage.items,
                        usage.streams.size());
  os << "critical path (" << aligned.timeline.criticalPath.size()
     << " nodes), time by op:\n";
  std::vector<std::pair<std::string, double>> byName =
      criticalPathByName(aligned.timeline);
  for (const auto &[name, time] : llvm::ArrayRef(byName).take_front(10))
    os << llvm::formatv("  {0,-12} {1}\n", formatSeconds(time), name);
  if (byName.size() > 10)
    os << "  ... " << byName.size() - 10 << " more ops\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "distir-replay: replay the torch.profiler traces of a data-parallel "
      "job (dPRO), on CPUs or GPUs (Kineto traces with CUDA kernels)\n");
  std::optional<int64_t> iterations;
  if (iterationsSpec != "auto") {
    int64_t n = 0;
    if (llvm::StringRef(iterationsSpec).getAsInteger(10, n) || n < 1)
      return failWith("--iterations expects auto or a positive number, got '" +
                      iterationsSpec + "'");
    iterations = n;
  }
  if (ranksPerHost < 0)
    return failWith("--ranks-per-host must not be negative");
  std::optional<int64_t> budget;
  if (memoryBudget.getNumOccurrences()) {
    budget = parseBytes(memoryBudget);
    if (!budget || *budget < 1)
      return failWith("--memory-budget expects a positive number of bytes "
                      "(optionally with B, K, KB, M, MB, G, GB, KiB, MiB or "
                      "GiB), got '" +
                      memoryBudget + "'");
  }
  if (!tracePath.empty() && failed(prepareOutputFile(tracePath)))
    return 1;
  if (!programPath.empty() && failed(prepareOutputFile(programPath)))
    return 1;
  llvm::Expected<std::vector<RankTrace>> traces = readJobTraces(tracePaths);
  if (!traces)
    return failWith(llvm::toString(traces.takeError()));
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(*traces, iterations);
  if (!graph)
    return failWith(llvm::toString(graph.takeError()));
  ClockAlignment alignment = alignClocks(*graph);
  ReplayResult aligned = replay::replay(*graph, alignment.offsets);
  std::vector<double> none(graph->numRanks, 0.0);
  ReplayResult recorded = replay::replay(*graph, none);
  if (!tracePath.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << aligned.timeline.toChromeTrace() << "\n";
    if (failed(writeFile(tracePath, text)))
      return 1;
  }
  if (!programPath.empty()) {
    mlir::MLIRContext context;
    mlir::OwningOpRef<mlir::ModuleOp> program =
        buildReplayProgram(context, *graph, aligned);
    if (failed(mlir::verify(*program)))
      return failWith("the replayed program does not verify");
    std::string text;
    llvm::raw_string_ostream os(text);
    // With locations: each op's rank, thread and iteration.
    program->print(os, mlir::OpPrintingFlags().enableDebugInfo());
    if (failed(writeFile(programPath, text)))
      return 1;
  }
  std::optional<BucketAdvice> advice;
  if (optimize) {
    llvm::Expected<BucketAdvice> advised =
        adviseBucketSize(*graph, alignment.offsets, ranksPerHost);
    if (!advised)
      return failWith("--optimize: " + llvm::toString(advised.takeError()));
    advice = std::move(*advised);
  }
  std::optional<FusionAdvice> fusion;
  if (optimize)
    fusion = adviseOpFusion(*graph, alignment.offsets);
  std::optional<MemoryAdvice> memory;
  if (budget) {
    llvm::Expected<MemoryAdvice> advised =
        adviseMemory(*graph, alignment.offsets, *budget);
    if (!advised)
      return failWith("--memory-budget: " +
                      llvm::toString(advised.takeError()));
    memory = std::move(*advised);
  }
  if (format == Format::JSON) {
    json::Value report = toJSON(*graph, alignment, aligned, recorded);
    if (advice)
      (*report.getAsObject())["optimization"] = toJSON(*advice);
    if (fusion)
      (*report.getAsObject())["op_fusion"] = toJSON(*fusion);
    if (memory)
      (*report.getAsObject())["memory"] = toJSON(*memory);
    llvm::outs() << llvm::formatv("{0:2}", report) << "\n";
    return 0;
  }
  printText(*graph, alignment, aligned, recorded);
  if (advice)
    printAdvice(*advice, aligned.predictedIteration);
  if (fusion)
    printFusion(*fusion);
  if (memory)
    printMemory(*memory);
  return 0;
}
