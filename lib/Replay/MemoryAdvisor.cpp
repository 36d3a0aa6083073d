//===- MemoryAdvisor.cpp - Recomputation vs gradient accumulation ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/MemoryAdvisor.h"
#include "DistIR/Replay/Replayer.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using namespace distir::replay;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {
/// One rank's iteration: its forward ops (from after the optimizer's last
/// op before the backward pass), its backward ops, and their memory.
struct Passes {
  std::vector<int64_t> forward, backward;
  int64_t peak = 0, activations = 0, largestAllocation = 0;
};
} // namespace

static llvm::Expected<std::vector<Passes>>
findPasses(const DataflowGraph &graph) {
  std::vector<Passes> result;
  for (int64_t r = 0; r < graph.numRanks; ++r) {
    if (graph.iterationPeakBytes.size() <= (size_t)r ||
        graph.iterationPeakBytes[r].empty())
      return fail(llvm::formatv("rank {0}: the trace has no memory events; "
                                "record it with profile_memory=True",
                                r));
    for (int64_t it = 0; it < graph.numIterations; ++it) {
      IterationPasses found = findIterationPasses(graph, r, it);
      if (found.backward.empty())
        return fail(llvm::formatv("rank {0}, iteration {1}: no backward pass "
                                  "(autograd engine functions) in the trace",
                                  r, it));
      Passes passes;
      passes.forward = std::move(found.forward);
      passes.backward = std::move(found.backward);
      passes.peak = graph.iterationPeakBytes[r][it];
      const Node &firstBackward = graph.nodes[passes.backward.front()];
      int64_t before = passes.forward.empty()
                           ? firstBackward.memoryAtStart
                           : graph.nodes[passes.forward.front()].memoryAtStart;
      passes.activations =
          std::max<int64_t>(0, firstBackward.memoryAtStart - before);
      for (int64_t i : passes.forward)
        passes.largestAllocation = std::max(passes.largestAllocation,
                                            graph.nodes[i].largestAllocation);
      result.push_back(std::move(passes));
    }
  }
  return result;
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Per compute node: the GPU work its end launched (a GPU job's), but for
/// the collectives' bucket copies (a transfer waits for them): DDP copies
/// full buckets once, after the last microbatch.
static std::vector<std::vector<int64_t>>
launchedWork(const DataflowGraph &graph) {
  std::vector<bool> bucketCopy(graph.nodes.size(), false);
  for (int64_t i = graph.numComputeNodes; i < graph.firstGpuNode(); ++i)
    for (int64_t dependency : graph.nodes[i].dependencies)
      if (dependency >= graph.firstGpuNode())
        bucketCopy[dependency] = true;
  std::vector<std::vector<int64_t>> launched(graph.numComputeNodes);
  for (int64_t i = graph.firstGpuNode(); i < (int64_t)graph.nodes.size(); ++i)
    if (int64_t launcher = launcherOf(graph, graph.nodes[i]);
        !bucketCopy[i] && launcher >= 0)
      launched[launcher].push_back(i);
  return launched;
}

/// Every forward and backward op run k times on 1/k of the batch, each run
/// taking 1/k of the traced time (`scale`) or all of it; the collectives
/// follow the last microbatch, as under DDP's no_sync.
static DataflowGraph accumulate(const DataflowGraph &graph,
                                llvm::ArrayRef<Passes> passes, int64_t k,
                                bool scale) {
  double factor = scale ? 1.0 / k : 1.0;
  std::vector<std::vector<int64_t>> launched = launchedWork(graph);
  ComputeEdit edit(graph);
  for (const Passes &p : passes) {
    std::vector<int64_t> ops = p.forward;
    ops.insert(ops.end(), p.backward.begin(), p.backward.end());
    for (int64_t i : ops) {
      edit.duration[i] = graph.nodes[i].duration * factor;
      for (int64_t work : launched[i])
        edit.duration[work] = graph.nodes[work].duration * factor;
    }
    for (int64_t micro = 1; micro < k; ++micro)
      for (int64_t i : ops) {
        std::string suffix = llvm::formatv(" (microbatch {0})", micro - 1);
        Node copy = graph.nodes[i];
        copy.duration *= factor;
        copy.name += suffix;
        // A GPU job's op launches its kernels again, on 1/k of the batch.
        std::vector<Node> launches;
        for (int64_t work : launched[i]) {
          launches.push_back(graph.nodes[work]);
          launches.back().duration *= factor;
          launches.back().name += suffix;
        }
        edit.insertBefore(ops.front(), std::move(copy), std::move(launches));
      }
  }
  return edit.apply();
}

/// The forward run again in `segments` pieces during the backward pass, each
/// before the backward ops of its segment (the backward split by time).
static DataflowGraph recompute(const DataflowGraph &graph,
                               llvm::ArrayRef<Passes> passes,
                               int64_t segments) {
  std::vector<std::vector<int64_t>> launched = launchedWork(graph);
  ComputeEdit edit(graph);
  for (const Passes &p : passes) {
    double forward = 0, gaps = 0, backward = 0;
    // A GPU job's forward kernels, run again by each segment on the stream
    // that ran most of them.
    double kernels = 0;
    std::map<int64_t, double> byStream;
    for (int64_t i : p.forward) {
      forward += graph.nodes[i].duration;
      gaps += graph.nodes[i].gap;
      for (int64_t work : launched[i]) {
        kernels += graph.nodes[work].duration;
        byStream[graph.nodes[work].stream] += graph.nodes[work].duration;
      }
    }
    int64_t kernelStream = -1;
    for (auto [stream, time] : byStream)
      if (kernelStream < 0 || time > byStream[kernelStream])
        kernelStream = stream;
    // The backward pass's progress: its ops' time, or on a GPU job the time
    // of the kernels they launch.
    bool onGpu = kernelStream >= 0;
    auto weight = [&](int64_t i) {
      if (!onGpu)
        return graph.nodes[i].duration;
      double time = 0;
      for (int64_t work : launched[i])
        time += graph.nodes[work].duration;
      return time;
    };
    for (int64_t i : p.backward)
      backward += weight(i);
    double done = 0;
    int64_t inserted = 0;
    auto insertBefore = [&](int64_t i) {
      Node node;
      node.name = llvm::formatv("recomputed forward, segment {0} of {1}",
                                segments - inserted, segments)
                      .str();
      node.duration = forward / segments;
      node.gap = gaps / segments;
      std::vector<Node> launches;
      if (kernelStream >= 0) {
        Node work;
        work.name = node.name + " (kernels)";
        work.stream = kernelStream;
        work.duration = kernels / segments;
        launches.push_back(std::move(work));
      }
      edit.insertBefore(i, std::move(node), std::move(launches));
      ++inserted;
    };
    for (int64_t i : p.backward) {
      // On a GPU job a segment runs before the op whose kernels its share of
      // the backward starts in (their launch comes before the op ends).
      double reached = onGpu ? done + weight(i) : done;
      while (inserted < segments &&
             (onGpu ? reached > backward * inserted / segments
                    : reached >= backward * inserted / segments))
        insertBefore(i);
      done += weight(i);
    }
    // Segments whose share of the backward starts inside its last op (e.g.
    // fewer backward ops than segments): before that op.
    while (inserted < segments)
      insertBefore(p.backward.back());
  }
  return edit.apply();
}

llvm::Expected<MemoryAdvice>
distir::replay::adviseMemory(const DataflowGraph &graph,
                             llvm::ArrayRef<double> offsets,
                             int64_t budgetBytes) {
  llvm::Expected<std::vector<Passes>> passes = findPasses(graph);
  if (!passes)
    return passes.takeError();
  MemoryAdvice advice;
  advice.budgetBytes = budgetBytes;
  // Per rank, a typical iteration: the median over the replayed iterations
  // (one iteration's peak varies with when the process group's threads
  // allocate their buffers), and the forward's largest allocation.
  auto median = [](std::vector<int64_t> values) {
    llvm::sort(values);
    size_t half = values.size() / 2;
    return values.size() % 2 ? values[half]
                             : (values[half - 1] + values[half]) / 2;
  };
  std::vector<Passes> typical;
  for (int64_t r = 0; r < graph.numRanks; ++r) {
    std::vector<int64_t> peaks, activations;
    Passes rank;
    for (int64_t it = 0; it < graph.numIterations; ++it) {
      const Passes &p = (*passes)[r * graph.numIterations + it];
      peaks.push_back(p.peak);
      activations.push_back(p.activations);
      rank.largestAllocation =
          std::max(rank.largestAllocation, p.largestAllocation);
      advice.tracedMaxPeakBytes = std::max(advice.tracedMaxPeakBytes, p.peak);
    }
    rank.peak = median(peaks);
    rank.activations = std::min(rank.peak, median(activations));
    advice.tracedPeakBytes = std::max(advice.tracedPeakBytes, rank.peak);
    advice.activationBytes = std::max(advice.activationBytes, rank.activations);
    advice.largestForwardAllocation =
        std::max(advice.largestForwardAllocation, rank.largestAllocation);
    typical.push_back(std::move(rank));
  }
  // The typical peak, largest over the ranks, with the activations
  // replaced.
  auto peakWith = [&](auto activationsOf) {
    int64_t peak = 0;
    for (const Passes &p : typical)
      peak = std::max(peak, p.peak - p.activations + activationsOf(p));
    return peak;
  };
  auto add = [&](MemoryOption option, const DataflowGraph &replayed,
                 const DataflowGraph *unscaled = nullptr) -> llvm::Error {
    if (!isAcyclic(replayed) || (unscaled && !isAcyclic(*unscaled)))
      return fail("the rewritten graph of an option has a dependency cycle");
    option.predictedIteration = replay(replayed, offsets).predictedIteration;
    option.predictedIterationUpper =
        unscaled ? replay(*unscaled, offsets).predictedIteration
                 : option.predictedIteration;
    option.fits = option.peakBytes <= budgetBytes;
    advice.options.push_back(option);
    return llvm::Error::success();
  };
  MemoryOption traced;
  traced.peakBytes = advice.tracedPeakBytes;
  if (llvm::Error err = add(traced, graph))
    return std::move(err);
  // Fewer microbatches are faster: stop at the first that fits. Powers of
  // two, since the microbatches must divide the batch, which the trace does
  // not record.
  for (int64_t k : {2, 4, 8, 16, 32, 64}) {
    MemoryOption option;
    option.kind = MemoryOption::Kind::Accumulation;
    option.microbatches = k;
    option.peakBytes =
        peakWith([&](const Passes &p) { return ceilDiv(p.activations, k); });
    DataflowGraph unscaled = accumulate(graph, *passes, k, false);
    if (llvm::Error err =
            add(option, accumulate(graph, *passes, k, true), &unscaled))
      return std::move(err);
    if (option.peakBytes <= budgetBytes)
      break;
  }
  // Every segment count costs one more forward pass; keep the one with
  // the least memory.
  MemoryOption recomputation;
  recomputation.kind = MemoryOption::Kind::Recomputation;
  for (int64_t s = 2; s <= 16; ++s) {
    int64_t peak = peakWith([&](const Passes &p) {
      return std::min(p.activations,
                      s * p.largestAllocation + ceilDiv(p.activations, s));
    });
    if (recomputation.segments == 0 || peak < recomputation.peakBytes) {
      recomputation.segments = s;
      recomputation.peakBytes = peak;
    }
  }
  if (llvm::Error err =
          add(recomputation, recompute(graph, *passes, recomputation.segments)))
    return std::move(err);
  for (auto [index, option] : llvm::enumerate(advice.options))
    if (option.fits &&
        (advice.best < 0 ||
         option.predictedIterationUpper <
             advice.options[advice.best].predictedIterationUpper))
      advice.best = index;
  return advice;
}
