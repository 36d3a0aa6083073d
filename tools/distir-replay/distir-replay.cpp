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

#include "DistIR/Replay/Replayer.h"
#include "DistIR/Tools/ToolUtils.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

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

static int failWith(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "distir-replay") << message << "\n";
  return 1;
}

static std::string formatSeconds(double seconds) {
  if (seconds >= 1)
    return llvm::formatv("{0:f3} s", seconds).str();
  if (seconds >= 1e-3)
    return llvm::formatv("{0:f3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:f1} us", seconds * 1e6).str();
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

static json::Value toJSON(const DataflowGraph &graph,
                          const ClockAlignment &alignment,
                          const ReplayResult &aligned,
                          const ReplayResult &recorded) {
  json::Array ranks;
  for (const auto &[rank, report] : aligned.timeline.devices) {
    json::Object object{{"rank", rank},
                        {"compute_busy_s", report.computeBusy},
                        {"communication_busy_s", report.communicationBusy},
                        {"finish_s", report.finish}};
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
      "job (dPRO)\n");
  std::optional<int64_t> iterations;
  if (iterationsSpec != "auto") {
    int64_t n = 0;
    if (llvm::StringRef(iterationsSpec).getAsInteger(10, n) || n < 1)
      return failWith("--iterations expects auto or a positive number, got '" +
                      iterationsSpec + "'");
    iterations = n;
  }
  if (!tracePath.empty() && failed(prepareOutputFile(tracePath)))
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
  if (format == Format::JSON)
    llvm::outs() << llvm::formatv("{0:2}",
                                  toJSON(*graph, alignment, aligned, recorded))
                 << "\n";
  else
    printText(*graph, alignment, aligned, recorded);
  return 0;
}
