//===- Optimizer.cpp - What-if bucketing of a traced DDP job --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/Optimizer.h"
#include "DistIR/Replay/GraphEdit.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

using distir::SimEvent;
using namespace distir::replay;

/// DDP's first bucket holds at least 1 MiB whatever the cap
/// (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES).
static constexpr int64_t kFirstBucketBytes = 1 << 20;
/// DDP's default bucket_cap_mb.
static constexpr double kDefaultCapMB = 25;
/// Gradients are fp32 in the traced jobs; "Input Dims" has no type.
static constexpr int64_t kElementBytes = 4;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

TransferModel
distir::replay::fitTransferModel(const DataflowGraph &graph,
                                 llvm::ArrayRef<double> transferTimes) {
  TransferModel model;
  // One point per size: the median transfer time of the collectives of that
  // size (one collective slowed down by the OS is not a bandwidth).
  std::map<int64_t, std::vector<double>> bySize;
  for (auto [collective, time] : llvm::zip(graph.collectives, transferTimes))
    if (collective.elements > 0) {
      bySize[collective.elements].push_back(time);
      ++model.samples;
    }
  std::vector<std::pair<double, double>> points;
  for (auto &[elements, times] : bySize) {
    llvm::sort(times);
    size_t half = times.size() / 2;
    double median =
        times.size() % 2 ? times[half] : (times[half - 1] + times[half]) / 2;
    points.push_back({(double)elements, median});
  }
  if (points.empty())
    return model;
  double lo = points.front().first, hi = lo;
  for (auto [x, y] : points) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  auto throughOrigin = [&] {
    double xy = 0, xx = 0;
    for (auto [x, y] : points) {
      xy += x * y;
      xx += x * x;
    }
    model.latency = 0;
    model.secondsPerElement = std::max(0.0, xy / xx);
  };
  model.latencySeparable = hi - lo >= 0.2 * hi;
  if (!model.latencySeparable) {
    throughOrigin();
  } else {
    double n = points.size(), sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (auto [x, y] : points) {
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    model.secondsPerElement = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    model.latency = (sy - model.secondsPerElement * sx) / n;
    // A negative latency or bandwidth term is noise: keep the other.
    if (model.latency < 0)
      throughOrigin();
    else if (model.secondsPerElement < 0) {
      model.secondsPerElement = 0;
      model.latency = sy / n;
    }
  }
  double squares = 0;
  for (auto [collective, time] : llvm::zip(graph.collectives, transferTimes))
    if (collective.elements > 0)
      squares += (model(collective.elements) - time) *
                 (model(collective.elements) - time);
  model.residual = std::sqrt(squares / model.samples);
  return model;
}

std::vector<int64_t>
distir::replay::assignBuckets(llvm::ArrayRef<int64_t> gradientElements,
                              int64_t elementBytes, int64_t firstBucketBytes,
                              int64_t bucketBytes) {
  std::vector<int64_t> counts;
  int64_t bytes = 0, count = 0;
  for (int64_t elements : gradientElements) {
    bytes += elements * elementBytes;
    ++count;
    int64_t limit = counts.empty() ? firstBucketBytes : bucketBytes;
    if (bytes >= limit) {
      counts.push_back(count);
      bytes = count = 0;
    }
  }
  if (count)
    counts.push_back(count);
  return counts;
}

using Intervals = std::vector<std::pair<double, double>>;

/// The mean number of `busy` intervals active during [start, end): the
/// communication load on the host while an op runs (two collectives in
/// flight count twice).
static double meanLoad(const Intervals &busy, double start, double end) {
  if (end <= start)
    return 0;
  double covered = 0;
  for (auto [from, to] : busy)
    covered += std::max(0.0, std::min(end, to) - std::max(start, from));
  return covered / (end - start);
}

/// The host of each rank: `ranksPerHost` consecutive ranks share one (0:
/// all ranks share one host).
static int64_t hostOf(int64_t rank, int64_t ranksPerHost) {
  return ranksPerHost > 0 ? rank / ranksPerHost : 0;
}

Interference
distir::replay::estimateInterference(const DataflowGraph &graph,
                                     llvm::ArrayRef<double> offsets,
                                     int64_t ranksPerHost) {
  Interference result;
  for (int64_t i = 0; i < graph.numComputeNodes; ++i)
    result.quietDurations.push_back(graph.nodes[i].duration);
  // The communication on each host, in aligned time.
  std::vector<Intervals> busy(graph.numRanks);
  for (const Collective &collective : graph.collectives)
    for (int64_t r = 0; r < graph.numRanks; ++r)
      busy[hostOf(r, ranksPerHost)].push_back(
          {collective.start[r] + offsets[r], collective.end[r] + offsets[r]});
  // The same op in every iteration, on that rank (iterations differ by a
  // few small ops).
  std::vector<OpIdentity> ids = identifyOps(graph);
  std::map<std::tuple<int64_t, std::string, int64_t>, std::vector<int64_t>>
      instances;
  for (int64_t i = 0; i < graph.numComputeNodes; ++i)
    instances[{graph.nodes[i].rank, ids[i].name, ids[i].occurrence}].push_back(
        i);
  double sxx = 0, sxy = 0, overlapped = 0, total = 0;
  for (const auto &[key, nodes] : instances) {
    std::vector<double> loads, quiet, all;
    for (int64_t i : nodes) {
      const Node &node = graph.nodes[i];
      double start = node.measuredStart + offsets[node.rank];
      loads.push_back(meanLoad(busy[hostOf(node.rank, ranksPerHost)], start,
                               start + node.duration));
      all.push_back(node.duration);
      if (loads.back() < 0.05)
        quiet.push_back(node.duration);
    }
    std::vector<double> &pool = quiet.empty() ? all : quiet;
    llvm::sort(pool);
    double base = quiet.empty() ? pool.front() : pool[pool.size() / 2];
    for (auto [i, x] : llvm::zip(nodes, loads)) {
      result.quietDurations[i] = base;
      if (base <= 0)
        continue;
      double y = graph.nodes[i].duration / base - 1;
      sxx += base * x * x;
      sxy += base * x * y;
      overlapped += base * x;
      total += base;
    }
  }
  // Too little overlap to tell: assume it is free.
  if (total <= 0 || overlapped < 0.01 * total)
    return result;
  result.estimated = true;
  result.slowdown = std::clamp(1 + sxy / sxx, 1.0, 20.0);
  return result;
}

/// Replays `graph` with compute durations slowed down by the communication
/// load on their host, iterated to a fixed point of the loads.
static double replayWithInterference(DataflowGraph graph,
                                     const Interference &interference,
                                     llvm::ArrayRef<double> offsets,
                                     int64_t ranksPerHost) {
  std::vector<double> load(graph.numComputeNodes, 0.0);
  double predicted = 0;
  for (int round = 0; round < 6; ++round) {
    for (int64_t i = 0; i < graph.numComputeNodes; ++i)
      graph.nodes[i].duration = interference.quietDurations[i] *
                                (1 + (interference.slowdown - 1) * load[i]);
    ReplayResult result = replay(graph, offsets);
    predicted = result.predictedIteration;
    if (interference.slowdown == 1)
      break;
    // A collective occupies a rank from its first step's start to its last
    // step's end, waits between steps included (as its traced span does).
    std::map<std::pair<int64_t, int64_t>, std::pair<double, double>> spans;
    for (size_t i = graph.numComputeNodes; i < graph.nodes.size(); ++i) {
      const Node &node = graph.nodes[i];
      const SimEvent &event = result.timeline.events[i];
      auto [it, inserted] = spans.try_emplace({node.collective, node.rank},
                                              event.start, event.end);
      if (!inserted) {
        it->second.first = std::min(it->second.first, event.start);
        it->second.second = std::max(it->second.second, event.end);
      }
    }
    std::vector<Intervals> busy(graph.numRanks);
    for (const auto &[key, span] : spans)
      busy[hostOf(key.second, ranksPerHost)].push_back(span);
    // Damped: half the old load, half the new.
    for (int64_t i = 0; i < graph.numComputeNodes; ++i) {
      const SimEvent &event = result.timeline.events[i];
      const Intervals &host = busy[hostOf(graph.nodes[i].rank, ranksPerHost)];
      load[i] = (load[i] + meanLoad(host, event.start, event.end)) / 2;
    }
  }
  return predicted;
}

/// The graph with the traced collectives replaced by buckets of
/// `counts[i]` gradients each (per iteration), priced by `model`.
static DataflowGraph
rebucket(const DataflowGraph &graph,
         llvm::ArrayRef<std::vector<int64_t>> countsPerIteration,
         const TransferModel &model) {
  DataflowGraph result = graph;
  result.nodes.resize(graph.numComputeNodes);
  result.collectives.clear();
  for (Node &node : result.nodes)
    llvm::erase_if(node.dependencies, [&](int64_t dependency) {
      return dependency >= graph.numComputeNodes;
    });
  int64_t ranks = graph.numRanks;
  // The process group's worker threads of each rank, used in turn.
  std::vector<std::vector<int64_t>> commStreams(ranks);
  for (auto [index, stream] : llvm::enumerate(graph.streams))
    if (stream.communication)
      commStreams[stream.rank].push_back(index);
  for (int64_t r = 0; r < ranks; ++r)
    if (commStreams[r].empty()) {
      commStreams[r].push_back(result.streams.size());
      result.streams.push_back({r, -1, true});
    }
  std::vector<int64_t> lastOfStream(result.streams.size(), -1);
  for (int64_t it = 0; it < graph.numIterations; ++it) {
    int64_t first = 0;
    for (auto [k, count] : llvm::enumerate(countsPerIteration[it])) {
      Collective collective;
      collective.name = "bucket " + std::to_string(k);
      collective.iteration = it;
      collective.steps = 2 * (ranks - 1);
      collective.elements = 0;
      for (int64_t g = first; g < first + count; ++g)
        collective.elements += graph.gradients[0][it][g].elements;
      collective.modelledTransfer = model(collective.elements);
      int64_t index = result.collectives.size();
      for (int64_t r = 0; r < ranks; ++r) {
        collective.firstTransfer.push_back(result.nodes.size());
        int64_t stream = commStreams[r][k % commStreams[r].size()];
        for (int64_t step = 0; step < collective.steps; ++step) {
          Node node;
          node.name = collective.name;
          node.stream = stream;
          node.rank = r;
          node.iteration = it;
          node.communication = true;
          node.collective = index;
          node.step = step;
          node.receiver = (r + 1) % ranks;
          node.duration = -1;
          node.previous = lastOfStream[stream];
          lastOfStream[stream] = result.nodes.size();
          if (step == 0)
            node.dependencies.push_back(
                graph.gradients[r][it][first + count - 1].node);
          result.nodes.push_back(std::move(node));
        }
      }
      for (int64_t r = 0; r < ranks; ++r) {
        int64_t sender = (r + ranks - 1) % ranks;
        for (int64_t step = 1; step < collective.steps; ++step)
          result.nodes[collective.firstTransfer[r] + step]
              .dependencies.push_back(collective.firstTransfer[sender] + step -
                                      1);
        // DDP waits for a bucket before copying out its first gradient
        // (else, when the copies are not traced, after the backward pass).
        llvm::ArrayRef<int64_t> copies = graph.copyNodes[r][it];
        Node &sync =
            result
                .nodes[copies.empty() ? graph.syncNodes[r][it] : copies[first]];
        sync.dependencies.push_back(collective.firstTransfer[r] +
                                    collective.steps - 1);
        sync.dependencies.push_back(collective.firstTransfer[sender] +
                                    collective.steps - 1);
      }
      result.collectives.push_back(std::move(collective));
      first += count;
    }
  }
  return result;
}

llvm::Expected<BucketAdvice>
distir::replay::adviseBucketSize(const DataflowGraph &graph,
                                 llvm::ArrayRef<double> offsets,
                                 int64_t ranksPerHost) {
  if (llvm::Error err = requireCpuJob(graph))
    return std::move(err);
  for (int64_t r = 0; r < graph.numRanks; ++r)
    for (int64_t it = 0; it < graph.numIterations; ++it) {
      if (graph.gradients[r][it].empty())
        return fail(llvm::formatv(
            "rank {0}, iteration {1}: no gradient shapes (AccumulateGrad with "
            "\"Input Dims\"); record the traces with record_shapes=True",
            r, it));
      if (graph.syncNodes[r][it] < 0)
        return fail(llvm::formatv("rank {0}, iteration {1}: no op after the "
                                  "backward pass waits for the gradients",
                                  r, it));
      std::vector<int64_t> mine, theirs;
      for (const Gradient &g : graph.gradients[r][it])
        mine.push_back(g.elements);
      for (const Gradient &g : graph.gradients[0][it])
        theirs.push_back(g.elements);
      if (mine != theirs)
        return fail(llvm::formatv("rank {0}, iteration {1}: the gradients "
                                  "differ from rank 0's",
                                  r, it));
    }
  // Every traced collective must be a bucket of these gradients.
  for (int64_t it = 0; it < graph.numIterations; ++it) {
    int64_t reduced = 0, gradients = 0;
    for (const Collective &collective : graph.collectives)
      if (collective.iteration == it)
        reduced += std::max<int64_t>(0, collective.elements);
    for (const Gradient &g : graph.gradients[0][it])
      gradients += g.elements;
    if (reduced != gradients)
      return fail(llvm::formatv(
          "iteration {0}: the collectives reduce {1} elements, the gradients "
          "have {2}: not DDP's gradient all-reduces alone",
          it, reduced, gradients));
  }
  BucketAdvice advice;
  ReplayResult measured = replay(graph, offsets);
  advice.model = fitTransferModel(graph, measured.transferTimes);
  if (advice.model.samples == 0)
    return fail("no collective has a recorded size (\"Input Dims\"); record "
                "the traces with record_shapes=True");

  // The traced buckets rebuilt and priced like every candidate, so that
  // all are compared under one model.
  std::vector<std::vector<int64_t>> tracedCounts(graph.numIterations);
  for (int64_t it = 0; it < graph.numIterations; ++it) {
    llvm::ArrayRef<Gradient> gradients = graph.gradients[0][it];
    size_t next = 0;
    for (const Collective &collective : graph.collectives) {
      if (collective.iteration != it)
        continue;
      int64_t elements = 0, count = 0;
      while (next < gradients.size() && elements < collective.elements) {
        elements += gradients[next++].elements;
        ++count;
      }
      if (elements != collective.elements)
        return fail(llvm::formatv(
            "iteration {0}: the traced buckets are not runs of gradients in "
            "the order they became ready (a bucket of {1} elements)",
            it, collective.elements));
      tracedCounts[it].push_back(count);
      if (it == 0)
        advice.tracedModelled.bucketElements.push_back(elements);
    }
  }
  advice.interference = estimateInterference(graph, offsets, ranksPerHost);
  advice.tracedModelled.predictedIteration =
      replayWithInterference(rebucket(graph, tracedCounts, advice.model),
                             advice.interference, offsets, ranksPerHost);
  advice.modelError = std::abs(advice.tracedModelled.predictedIteration /
                                   measured.predictedIteration -
                               1);
  for (double capMB :
       {0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0, 1e6}) {
    int64_t capBytes = (int64_t)(capMB * (1 << 20));
    std::vector<std::vector<int64_t>> counts;
    for (int64_t it = 0; it < graph.numIterations; ++it) {
      std::vector<int64_t> elements;
      for (const Gradient &g : graph.gradients[0][it])
        elements.push_back(g.elements);
      counts.push_back(
          assignBuckets(elements, kElementBytes, kFirstBucketBytes, capBytes));
    }
    DataflowGraph candidate = rebucket(graph, counts, advice.model);
    BucketCandidate row;
    row.capMB = capMB;
    for (const Collective &collective : candidate.collectives)
      if (collective.iteration == 0)
        row.bucketElements.push_back(collective.elements);
    row.predictedIteration = replayWithInterference(
        candidate, advice.interference, offsets, ranksPerHost);
    advice.candidates.push_back(std::move(row));
  }
  // Among candidates within 0.1% of each other, DDP's default (25 MB) or
  // else the larger cap (fewer collectives) wins.
  auto better = [](const BucketCandidate &a, const BucketCandidate &b) {
    double tolerance = 1e-3 * b.predictedIteration;
    if (a.predictedIteration < b.predictedIteration - tolerance)
      return true;
    if (a.predictedIteration > b.predictedIteration + tolerance)
      return false;
    if (b.capMB == kDefaultCapMB)
      return false;
    return a.capMB == kDefaultCapMB || a.capMB > b.capMB;
  };
  for (size_t i = 1; i < advice.candidates.size(); ++i)
    if (better(advice.candidates[i], advice.candidates[advice.best]))
      advice.best = i;
  // A change must win by more than the model can tell apart.
  double margin = std::max(0.02, advice.modelError);
  advice.keepTraced = advice.candidates[advice.best].predictedIteration >
                      advice.tracedModelled.predictedIteration * (1 - margin);
  return advice;
}
