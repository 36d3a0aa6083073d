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
#include <set>
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

/// Fits time = latency + secondsPerElement * elements to (elements,
/// seconds) samples.
static TransferModel
fitLinear(llvm::ArrayRef<std::pair<int64_t, double>> samples) {
  TransferModel model;
  // One point per size: the median time of the samples of that size (one
  // transfer slowed down by the OS is not a bandwidth).
  std::map<int64_t, std::vector<double>> bySize;
  for (auto [elements, time] : samples)
    bySize[elements].push_back(time);
  model.samples = samples.size();
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
  for (auto [elements, time] : samples)
    squares += (model(elements) - time) * (model(elements) - time);
  model.residual = std::sqrt(squares / model.samples);
  return model;
}

/// DDP's gradient all-reduces: sized all-reduces. Other collectives (a
/// barrier, a broadcast of buffers) are kept as traced.
static bool reducesGradients(const DataflowGraph &graph,
                             const Collective &collective) {
  return collective.elements > 0 &&
         collective.steps == 2 * (graph.numRanks - 1);
}

TransferModel
distir::replay::fitTransferModel(const DataflowGraph &graph,
                                 llvm::ArrayRef<double> transferTimes) {
  std::vector<std::pair<int64_t, double>> samples;
  for (auto [collective, time] : llvm::zip(graph.collectives, transferTimes))
    if (reducesGradients(graph, collective))
      samples.push_back({collective.elements, time});
  return fitLinear(samples);
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
    for (int64_t i = graph.numComputeNodes; i < graph.firstGpuNode(); ++i) {
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

namespace {
/// The traced buckets, as the what-ifs need them.
struct TracedBuckets {
  /// Per collective: the index (in its iteration's ready order) of the last
  /// gradient its bucket holds; -1 for collectives kept as traced.
  std::vector<int64_t> lastGradient;
  /// A GPU job's copies of the buckets to host memory (gloo reduces CUDA
  /// tensors in pinned host memory): per collective and rank, the GPU node
  /// the collective's first transfer waits for; empty for a CPU job.
  std::vector<std::vector<int64_t>> copies;
  TransferModel copyModel;
  /// A GPU job's per rank: the median time its worker took, after the copy
  /// ended, to start the transfers (waking from its wait for the copy).
  std::vector<double> workerDelay;
};
} // namespace

/// A GPU job's bucket copies (per gradient all-reduce and rank, the GPU
/// node its first transfer waits for) and their duration model.
static llvm::Error findBucketCopies(const DataflowGraph &graph,
                                    TracedBuckets &traced) {
  std::vector<std::vector<int64_t>> &copies = traced.copies;
  copies.assign(graph.collectives.size(),
                std::vector<int64_t>(graph.numRanks, -1));
  std::vector<std::pair<int64_t, double>> samples;
  std::vector<std::vector<double>> delays(graph.numRanks);
  for (auto [k, collective] : llvm::enumerate(graph.collectives)) {
    if (!reducesGradients(graph, collective))
      continue;
    for (int64_t r = 0; r < graph.numRanks; ++r) {
      for (int64_t dependency :
           graph.nodes[collective.firstTransfer[r]].dependencies)
        if (dependency >= graph.firstGpuNode())
          copies[k][r] = dependency;
      if (copies[k][r] < 0)
        return fail(llvm::formatv(
            "rank {0}: {1} of iteration {2} reduces a bucket that was not "
            "copied from the GPU: only DDP over gloo with CUDA tensors is "
            "modelled",
            r, collective.name, collective.iteration));
      samples.push_back(
          {collective.elements, graph.nodes[copies[k][r]].duration});
      delays[r].push_back(graph.nodes[collective.firstTransfer[r]].gap);
    }
  }
  traced.copyModel = fitLinear(samples);
  for (std::vector<double> &rank : delays) {
    llvm::sort(rank);
    traced.workerDelay.push_back(rank.empty() ? 0 : rank[rank.size() / 2]);
  }
  return llvm::Error::success();
}

/// The graph with the traced gradient all-reduces replaced by buckets of
/// `counts[i]` gradients each (per iteration), priced by `model`; other
/// collectives are kept. In a GPU job each bucket is first copied to host
/// memory on a stream of its own (as gloo does), priced by the traced
/// copies' model, after the GPU work launched up to its last gradient.
static DataflowGraph
rebucket(const DataflowGraph &graph,
         llvm::ArrayRef<std::vector<int64_t>> countsPerIteration,
         const TransferModel &model, const TracedBuckets &traced) {
  int64_t ranks = graph.numRanks;
  int64_t computeCount = graph.numComputeNodes;
  int64_t firstGpu = graph.firstGpuNode();
  int64_t oldCount = graph.nodes.size();
  bool gpu = graph.hasGpuActivity();
  // Removed: the gradient all-reduces' transfers and their copies.
  std::vector<bool> removed(oldCount, false);
  std::set<int64_t> copyStreams;
  for (auto [k, collective] : llvm::enumerate(graph.collectives)) {
    if (!reducesGradients(graph, collective))
      continue;
    for (int64_t r = 0; r < ranks; ++r) {
      for (int64_t step = 0; step < collective.steps; ++step)
        removed[collective.firstTransfer[r] + step] = true;
      if (gpu) {
        removed[traced.copies[k][r]] = true;
        copyStreams.insert(graph.nodes[traced.copies[k][r]].stream);
      }
    }
  }
  // Per iteration: the kept collectives traced before its first gradient
  // all-reduce, the new buckets, the other kept collectives.
  struct Item {
    int64_t traced = -1;
    int64_t iteration = 0, first = 0, count = 0;
  };
  std::vector<Item> items;
  // Per iteration and gradient: the new bucket (ordinal) that holds it.
  std::vector<std::vector<int64_t>> bucketOf(graph.numIterations);
  int64_t newBuckets = 0, transferCount = 0;
  for (int64_t it = 0; it < graph.numIterations; ++it) {
    bool placed = false;
    auto placeBuckets = [&] {
      int64_t first = 0;
      for (int64_t count : countsPerIteration[it]) {
        items.push_back({-1, it, first, count});
        bucketOf[it].insert(bucketOf[it].end(), count, newBuckets++);
        transferCount += 2 * (ranks - 1) * ranks;
        first += count;
      }
      placed = true;
    };
    for (auto [k, collective] : llvm::enumerate(graph.collectives)) {
      if (collective.iteration != it)
        continue;
      if (reducesGradients(graph, collective)) {
        if (!placed)
          placeBuckets();
        continue;
      }
      items.push_back({(int64_t)k, it});
      transferCount += collective.steps * ranks;
    }
    if (!placed)
      placeBuckets();
  }
  // New indices: compute nodes keep theirs; transfers follow in the items'
  // order; then the kept GPU nodes and the new copies.
  std::vector<int64_t> newIndex(oldCount, -1);
  for (int64_t i = 0; i < computeCount; ++i)
    newIndex[i] = i;
  int64_t next = computeCount + transferCount;
  for (int64_t i = firstGpu; i < oldCount; ++i)
    if (!removed[i])
      newIndex[i] = next++;
  int64_t firstNewCopy = next;
  auto newCopy = [&](int64_t bucket, int64_t rank) {
    return firstNewCopy + bucket * ranks + rank;
  };

  DataflowGraph result = graph;
  result.nodes.assign(graph.nodes.begin(), graph.nodes.begin() + computeCount);
  result.collectives.clear();
  // Nodes whose dependencies still name the traced graph's nodes.
  std::vector<bool> oldDependencies(computeCount, true);
  // Waits for the new buckets, added once the traced ones are remapped.
  std::vector<std::pair<int64_t, int64_t>> syncs;
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
  auto appendTransfer = [&](Node node, bool old) {
    node.previous = lastOfStream[node.stream];
    lastOfStream[node.stream] = result.nodes.size();
    result.nodes.push_back(std::move(node));
    oldDependencies.push_back(old);
  };
  // Traced buckets by (iteration, last gradient).
  std::map<std::pair<int64_t, int64_t>, int64_t> tracedEndingAt;
  for (auto [k, collective] : llvm::enumerate(graph.collectives))
    if (reducesGradients(graph, collective))
      tracedEndingAt[{collective.iteration, traced.lastGradient[k]}] = k;
  int64_t bucket = 0;
  // Per new bucket: its collective in `result`.
  std::vector<int64_t> bucketCollective;
  std::vector<int64_t> bucketInIteration(graph.numIterations, 0);
  for (const Item &item : items) {
    if (item.traced >= 0) {
      const Collective &old = graph.collectives[item.traced];
      Collective collective = old;
      for (int64_t r = 0; r < ranks; ++r) {
        collective.firstTransfer[r] = result.nodes.size();
        for (int64_t step = 0; step < old.steps; ++step) {
          int64_t index = old.firstTransfer[r] + step;
          Node node = graph.nodes[index];
          node.collective = result.collectives.size();
          newIndex[index] = result.nodes.size();
          appendTransfer(std::move(node), /*old=*/true);
        }
      }
      result.collectives.push_back(std::move(collective));
      continue;
    }
    int64_t it = item.iteration, k = bucketInIteration[it]++;
    Collective collective;
    collective.name = "bucket " + std::to_string(k);
    collective.iteration = it;
    collective.steps = 2 * (ranks - 1);
    collective.elements = 0;
    for (int64_t g = item.first; g < item.first + item.count; ++g)
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
        if (step == 0) {
          node.dependencies.push_back(
              graph.gradients[r][it][item.first + item.count - 1].node);
          if (gpu) {
            node.dependencies.push_back(newCopy(bucket, r));
            node.gap = traced.workerDelay[r];
          }
        }
        appendTransfer(std::move(node), /*old=*/false);
      }
    }
    for (int64_t r = 0; r < ranks; ++r) {
      int64_t sender = (r + ranks - 1) % ranks;
      for (int64_t step = 1; step < collective.steps; ++step)
        result.nodes[collective.firstTransfer[r] + step].dependencies.push_back(
            collective.firstTransfer[sender] + step - 1);
      // DDP waits for a bucket before copying out its first gradient
      // (else, when the copies are not traced, after the backward pass).
      llvm::ArrayRef<int64_t> copies = graph.copyNodes[r][it];
      int64_t sync =
          copies.empty() ? graph.syncNodes[r][it] : copies[item.first];
      syncs.push_back(
          {sync, collective.firstTransfer[r] + collective.steps - 1});
      syncs.push_back(
          {sync, collective.firstTransfer[sender] + collective.steps - 1});
    }
    bucketCollective.push_back(result.collectives.size());
    result.collectives.push_back(std::move(collective));
    ++bucket;
  }
  for (int64_t i = firstGpu; i < oldCount; ++i) {
    if (removed[i])
      continue;
    Node node = graph.nodes[i];
    int64_t previous = node.previous;
    while (previous >= 0 && removed[previous])
      previous = graph.nodes[previous].previous;
    node.previous = previous < 0 ? -1 : newIndex[previous];
    result.nodes.push_back(std::move(node));
    oldDependencies.push_back(true);
  }
  // Each new bucket's copy, on a stream of its own, after its last gradient's
  // launch and the work launched up to there onto the streams the traced
  // copies waited for (the compute stream).
  auto launchPiece = [&](const Node &node) { return launcherOf(graph, node); };
  std::set<int64_t> waitedStreams;
  for (const std::vector<int64_t> &ranksCopies : traced.copies)
    for (int64_t copy : ranksCopies)
      if (copy >= 0)
        for (int64_t dependency : graph.nodes[copy].dependencies)
          if (dependency >= firstGpu)
            waitedStreams.insert(graph.nodes[dependency].stream);
  // Per rank: the GPU work a new copy may wait for, by launch piece, with
  // the latest (new) index launched up to each.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> waitable(ranks);
  for (int64_t i = firstGpu; i < oldCount; ++i) {
    const Node &work = graph.nodes[i];
    if (!removed[i] && !copyStreams.count(work.stream) &&
        (waitedStreams.empty() || waitedStreams.count(work.stream)))
      waitable[work.rank].push_back({launchPiece(work), newIndex[i]});
  }
  for (auto &work : waitable) {
    llvm::sort(work);
    for (size_t k = 1; k < work.size(); ++k)
      work[k].second = std::max(work[k].second, work[k - 1].second);
  }
  // Per new bucket and rank: the piece that launches its copy.
  std::vector<int64_t> copyLaunch;
  int64_t copyBucket = 0;
  for (const Item &item : items) {
    if (!gpu || item.traced >= 0)
      continue;
    for (int64_t r = 0; r < ranks; ++r) {
      int64_t it = item.iteration;
      int64_t last = item.first + item.count - 1;
      int64_t launch = graph.gradients[r][it][last].node;
      // DDP's launch op (c10d::allreduce_) launches the copy; the graph keeps
      // its host time where it was traced.
      auto tracedLaunch = tracedEndingAt.find({it, last});
      if (tracedLaunch != tracedEndingAt.end())
        launch = std::max(
            launch,
            launchPiece(graph.nodes[traced.copies[tracedLaunch->second][r]]));
      auto upTo = llvm::partition_point(
          waitable[r], [&](const auto &work) { return work.first <= launch; });
      int64_t waitsFor =
          upTo == waitable[r].begin() ? -1 : std::prev(upTo)->second;
      copyLaunch.push_back(launch);
      const Collective &collective =
          result.collectives[bucketCollective[copyBucket]];
      Node node;
      node.name = "bucket copy to host (" + collective.name + ")";
      node.duration = traced.copyModel(collective.elements);
      node.rank = r;
      node.iteration = it;
      node.stream = result.streams.size();
      result.streams.push_back({r, -1 - (int64_t)result.streams.size(),
                                /*communication=*/false, /*gpu=*/true});
      node.dependencies.push_back(launch);
      if (waitsFor >= 0)
        node.dependencies.push_back(waitsFor);
      result.nodes.push_back(std::move(node));
      oldDependencies.push_back(false);
    }
    ++copyBucket;
  }
  // The traced graph's edges in new indices: a wait for a removed copy
  // waits for the new bucket that holds the copied bucket's last gradient,
  // if that copy is launched before the waiting work (else the syncs order
  // them: an edge to a later launch would be a cycle); waits for removed
  // transfers are replaced by the syncs.
  std::map<int64_t, int64_t> copyOf;
  if (gpu)
    for (auto [k, collective] : llvm::enumerate(graph.collectives))
      if (reducesGradients(graph, collective))
        for (int64_t r = 0; r < ranks; ++r)
          copyOf[traced.copies[k][r]] =
              bucketOf[collective.iteration][traced.lastGradient[k]] * ranks +
              r;
  auto remap = [&](int64_t dependency, int64_t launchedBy) -> int64_t {
    if (!removed[dependency])
      return newIndex[dependency];
    auto copy = copyOf.find(dependency);
    if (copy == copyOf.end() || launchedBy < 0 ||
        copyLaunch[copy->second] > launchedBy)
      return -1;
    return firstNewCopy + copy->second;
  };
  for (auto [index, node] : llvm::enumerate(result.nodes)) {
    if (!oldDependencies[index])
      continue;
    // Where the node is launched: itself on the host, else its launch piece.
    int64_t launchedBy = (int64_t)index < computeCount ? (int64_t)index
                         : node.communication          ? -1
                                                       : launchPiece(node);
    llvm::SmallVector<int64_t, 2> dependencies;
    for (int64_t dependency : node.dependencies) {
      int64_t mapped = remap(dependency, launchedBy);
      if (mapped >= 0 && !llvm::is_contained(dependencies, mapped))
        dependencies.push_back(mapped);
    }
    node.dependencies = std::move(dependencies);
  }
  for (auto [node, dependency] : syncs)
    result.nodes[node].dependencies.push_back(dependency);
  result.numGpuNodes = result.nodes.size() - (computeCount + transferCount);
  return result;
}

llvm::Expected<BucketAdvice>
distir::replay::adviseBucketSize(const DataflowGraph &graph,
                                 llvm::ArrayRef<double> offsets,
                                 int64_t ranksPerHost) {
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
  // Every traced all-reduce must be a bucket of these gradients.
  for (int64_t it = 0; it < graph.numIterations; ++it) {
    int64_t reduced = 0, gradients = 0;
    for (const Collective &collective : graph.collectives)
      if (collective.iteration == it && reducesGradients(graph, collective))
        reduced += collective.elements;
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
  TracedBuckets traced;
  traced.lastGradient.assign(graph.collectives.size(), -1);
  std::vector<std::vector<int64_t>> tracedCounts(graph.numIterations);
  for (int64_t it = 0; it < graph.numIterations; ++it) {
    llvm::ArrayRef<Gradient> gradients = graph.gradients[0][it];
    size_t next = 0;
    for (auto [k, collective] : llvm::enumerate(graph.collectives)) {
      if (collective.iteration != it || !reducesGradients(graph, collective))
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
      traced.lastGradient[k] = next - 1;
      if (it == 0)
        advice.tracedModelled.bucketElements.push_back(elements);
    }
  }
  if (graph.hasGpuActivity()) {
    if (llvm::Error err = findBucketCopies(graph, traced))
      return std::move(err);
    advice.copyModel = traced.copyModel;
  }
  advice.interference = estimateInterference(graph, offsets, ranksPerHost);
  // The rewrite keeps every traced edge it cannot place out of the graph; a
  // cycle left would abort the replay, so it is one error instead.
  auto rewrite = [&](llvm::ArrayRef<std::vector<int64_t>> counts,
                     llvm::StringRef what) -> llvm::Expected<DataflowGraph> {
    DataflowGraph candidate = rebucket(graph, counts, advice.model, traced);
    if (!isAcyclic(candidate))
      return fail(what + ": the rewritten graph has a dependency cycle");
    return candidate;
  };
  llvm::Expected<DataflowGraph> rebuilt =
      rewrite(tracedCounts, "the traced buckets");
  if (!rebuilt)
    return rebuilt.takeError();
  advice.tracedModelled.predictedIteration = replayWithInterference(
      *rebuilt, advice.interference, offsets, ranksPerHost);
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
    llvm::Expected<DataflowGraph> rewritten =
        rewrite(counts, llvm::formatv("bucket_cap_mb={0}", capMB).str());
    if (!rewritten)
      return rewritten.takeError();
    DataflowGraph &candidate = *rewritten;
    BucketCandidate row;
    row.capMB = capMB;
    for (const Collective &collective : candidate.collectives)
      if (collective.iteration == 0 && collective.modelledTransfer >= 0)
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
