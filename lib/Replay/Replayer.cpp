//===- Replayer.cpp - dPRO's replay of a global dataflow graph ------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/Replayer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <queue>

using namespace distir;
using namespace distir::replay;

/// From the last rank to start the collective to its median end, with the
/// clocks aligned by `offsets`.
static double transferTime(const Collective &collective,
                           llvm::ArrayRef<double> offsets) {
  double lastStart = -1e300;
  std::vector<double> ends;
  for (size_t r = 0; r < collective.start.size(); ++r) {
    lastStart = std::max(lastStart, collective.start[r] + offsets[r]);
    ends.push_back(collective.end[r] + offsets[r]);
  }
  llvm::sort(ends);
  double median = ends.size() % 2
                      ? ends[ends.size() / 2]
                      : (ends[ends.size() / 2 - 1] + ends[ends.size() / 2]) / 2;
  return std::max(0.0, median - lastStart);
}

ReplayResult distir::replay::replay(const DataflowGraph &graph,
                                    llvm::ArrayRef<double> offsets) {
  ReplayResult result;
  for (const Collective &collective : graph.collectives)
    result.transferTimes.push_back(collective.modelledTransfer >= 0
                                       ? collective.modelledTransfer
                                       : transferTime(collective, offsets));

  size_t count = graph.nodes.size();
  std::vector<int64_t> pending(count, 0);
  std::vector<std::vector<int64_t>> users(count);
  for (auto [index, node] : llvm::enumerate(graph.nodes)) {
    for (int64_t dependency : node.dependencies) {
      ++pending[index];
      users[dependency].push_back(index);
    }
    if (node.previous >= 0) {
      ++pending[index];
      users[node.previous].push_back(index);
    }
  }
  std::vector<double> start(count, 0), end(count, 0);
  std::vector<int64_t> predecessor(count, -1);
  // Ready nodes, earliest start first (the modified Kahn algorithm).
  using Entry = std::pair<double, int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  auto schedule = [&](int64_t index) {
    const Node &node = graph.nodes[index];
    // The critical path goes through the dependency that ended last.
    double earliest = 0;
    auto consider = [&](int64_t other) {
      if (predecessor[index] < 0 || end[other] > earliest) {
        earliest = end[other];
        predecessor[index] = other;
      }
    };
    if (node.previous >= 0)
      consider(node.previous);
    for (int64_t dependency : node.dependencies)
      consider(dependency);
    start[index] = earliest + node.gap;
    ready.push({start[index], index});
  };
  for (size_t index = 0; index < count; ++index)
    if (pending[index] == 0)
      schedule(index);
  size_t done = 0;
  while (!ready.empty()) {
    int64_t index = ready.top().second;
    ready.pop();
    ++done;
    result.order.push_back(index);
    const Node &node = graph.nodes[index];
    double duration = node.communication
                          ? result.transferTimes[node.collective] /
                                graph.collectives[node.collective].steps
                          : node.duration;
    end[index] = start[index] + duration;
    for (int64_t user : users[index])
      if (--pending[user] == 0)
        schedule(user);
  }
  if (done != count)
    llvm::report_fatal_error("replay: the dataflow graph has a cycle");

  SimulationResult &timeline = result.timeline;
  timeline.functionName = "replay";
  timeline.clusterName = "trace";
  timeline.options.planMemory = false;
  for (int64_t r = 0; r < graph.numRanks; ++r) {
    DeviceReport &report = timeline.devices[r];
    report.plannedBytes = -1;
    report.peakBytes = std::max<int64_t>(0, graph.peakAllocatedBytes[r]);
  }
  std::vector<double> gpuFinish(graph.numRanks, 0.0);
  for (auto [index, node] : llvm::enumerate(graph.nodes)) {
    SimEvent event;
    event.name = node.communication
                     ? llvm::formatv("{0} step {1} {2}->{3}", node.name,
                                     node.step, node.rank, node.receiver)
                           .str()
                     : node.name;
    const Stream &stream = graph.streams[node.stream];
    event.location = llvm::formatv("rank {0} {1} {2} iteration {3}", node.rank,
                                   stream.gpu ? "GPU stream" : "thread",
                                   stream.thread, node.iteration);
    event.devices = {node.rank};
    event.isCommunication = node.communication;
    event.start = start[index];
    event.end = end[index];
    event.duration = end[index] - start[index];
    event.predecessor = predecessor[index];
    DeviceReport &report = timeline.devices[node.rank];
    // Busy times and the finish are the host's threads' (the measured tail
    // follows the host's last op); GPU streams overlap them.
    if (stream.gpu) {
      gpuFinish[node.rank] = std::max(gpuFinish[node.rank], event.end);
    } else {
      (node.communication ? report.communicationBusy : report.computeBusy) +=
          event.duration;
      report.finish = std::max(report.finish, event.end);
    }
    timeline.latency = std::max(timeline.latency, event.end);
    timeline.events.push_back(std::move(event));
  }
  int64_t last = -1;
  for (size_t index = 0; index < count; ++index)
    if (last < 0 || end[index] > end[last])
      last = index;
  for (int64_t at = last; at >= 0; at = predecessor[at])
    timeline.criticalPath.push_back(at);
  std::reverse(timeline.criticalPath.begin(), timeline.criticalPath.end());
  for (auto &[rank, report] : timeline.devices) {
    report.finish =
        std::max(report.finish + graph.tails[rank], gpuFinish[rank]);
    timeline.latency = std::max(timeline.latency, report.finish);
  }
  result.predictedIteration = timeline.latency / graph.numIterations;
  return result;
}
