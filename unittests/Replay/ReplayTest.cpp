//===- ReplayTest.cpp - Clock alignment and replay of synthetic jobs ------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Synthetic data-parallel jobs with a known common clock: each rank runs
// compute, launches ring all-reduces at different times, waits for them and
// steps. Recording each rank's trace with a known clock shift must be undone
// by the alignment (to within the jitter of the collectives' ends), and the
// replay of an exactly consistent job must reproduce its iteration time.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/MemoryAdvisor.h"
#include "DistIR/Replay/OpFusion.h"
#include "DistIR/Replay/Optimizer.h"

#include "gtest/gtest.h"

#include <functional>
#include <random>
#include <set>

using namespace distir::replay;

namespace {

struct JobShape {
  int64_t ranks = 4;
  int64_t iterations = 3;
  int64_t buckets = 3;
  /// Seconds each rank's clock is behind the common clock.
  std::vector<double> shifts;
  /// Random spread of the collectives' ends across ranks (seconds).
  double endJitter = 0;
  /// Elements of each bucket's (single) gradient; empty: 262144 each.
  std::vector<int64_t> gradientElements;
  /// Transfer time of a bucket from its elements.
  std::function<double(int64_t)> transfer = [](int64_t) { return 1.5e-3; };
  /// DDP's copies out of the buckets and the optimizer step after the
  /// backward pass.
  bool withStep = true;
};

/// One rank's trace of the job, times on the rank's own clock.
std::vector<RankTrace> makeJob(const JobShape &shape, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<RankTrace> traces(shape.ranks);
  for (int64_t r = 0; r < shape.ranks; ++r) {
    traces[r].path = "rank" + std::to_string(r);
    traces[r].rank = r;
    traces[r].worldSize = shape.ranks;
  }
  auto add = [&](int64_t rank, std::string name, int64_t thread, double start,
                 double end, std::vector<int64_t> elements = {}) {
    TraceEvent event;
    event.name = std::move(name);
    event.thread = thread;
    event.start = start - shape.shifts[rank];
    event.duration = end - start;
    event.inputElements = std::move(elements);
    traces[rank].events.push_back(std::move(event));
  };
  auto elementsOf = [&](int64_t bucket) {
    return shape.gradientElements.empty() ? int64_t(262144)
                                          : shape.gradientElements[bucket];
  };
  double time = 0;
  for (int64_t it = 0; it < shape.iterations; ++it) {
    double iterationStart = time;
    // Backward: each rank computes the buckets' gradients at its own pace
    // and launches each bucket's all-reduce; a bucket's ring ends for
    // everybody a fixed time after the last rank launched it.
    std::vector<double> launched(shape.ranks, time + 1e-3);
    std::vector<double> bucketEnd;
    std::vector<std::vector<double>> launchAt(shape.ranks);
    for (int64_t b = 0; b < shape.buckets; ++b) {
      double last = 0;
      for (int64_t r = 0; r < shape.ranks; ++r) {
        double compute = 2e-3 * (1 + 0.3 * unit(random));
        add(r, "autograd::engine::evaluate_function: AddmmBackward0", 1,
            launched[r], launched[r] + compute);
        // The bucket's gradient, accumulated inside the backward op.
        add(r, "torch::autograd::AccumulateGrad", 1,
            launched[r] + 0.8 * compute, launched[r] + 0.9 * compute,
            {elementsOf(b)});
        launched[r] += compute;
        launchAt[r].push_back(launched[r]);
        last = std::max(last, launched[r]);
      }
      double end = std::max(last, bucketEnd.empty() ? 0 : bucketEnd.back()) +
                   shape.transfer(elementsOf(b));
      bucketEnd.push_back(end);
    }
    double stepStart = 0;
    for (int64_t r = 0; r < shape.ranks; ++r) {
      for (int64_t b = 0; b < shape.buckets; ++b) {
        double launch = launchAt[r][b];
        // Launched by the hook at the end of the backward op.
        add(r, "c10d::allreduce_", 1, launch - 2e-6, launch - 1e-6);
        double end = bucketEnd[b] + shape.endJitter * unit(random);
        add(r, "gloo:all_reduce", 2, launch + 2e-6, end, {elementsOf(b)});
        stepStart = std::max(stepStart, end);
      }
    }
    for (int64_t r = 0; r < shape.ranks; ++r) {
      for (int64_t b = 0; shape.withStep && b < shape.buckets; ++b)
        add(r, "torch.distributed.ddp.reducer::copy_bucket_to_grad", 1,
            stepStart + 1e-6 * b, stepStart + 1e-6 * b + 5e-7, {elementsOf(b)});
      if (shape.withStep)
        add(r, "Optimizer.step#SGD.step", 1, stepStart + 1e-5,
            stepStart + 5e-4);
      add(r, "ProfilerStep#" + std::to_string(it), 1, iterationStart,
          stepStart + 5e-4);
    }
    time = stepStart + 6e-4;
  }
  for (RankTrace &trace : traces)
    llvm::sort(trace.events, [](const TraceEvent &a, const TraceEvent &b) {
      return a.start != b.start ? a.start < b.start : a.duration > b.duration;
    });
  return traces;
}

TEST(ClockAlignment, RecoversKnownShifts) {
  JobShape shape;
  shape.shifts = {0.0, 0.25, -1.5, 3e-3};
  shape.endJitter = 20e-6;
  std::vector<RankTrace> traces = makeJob(shape, 7);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  ClockAlignment alignment = alignClocks(*graph);
  ASSERT_EQ(alignment.offsets.size(), 4u);
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_NEAR(alignment.offsets[r], shape.shifts[r] - shape.shifts[0],
                shape.endJitter)
        << "rank " << r;
  EXPECT_LE(alignment.residual, shape.endJitter);
}

TEST(ClockAlignment, ShiftingOneRankShiftsItsOffset) {
  JobShape shape;
  shape.ranks = 2;
  shape.shifts = {0.0, 0.0};
  shape.endJitter = 50e-6;
  std::vector<RankTrace> traces = makeJob(shape, 3);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph);
  double before = alignClocks(*graph).offsets[1];
  for (TraceEvent &event : traces[1].events)
    event.start += 0.123;
  llvm::Expected<DataflowGraph> shifted = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!shifted);
  EXPECT_NEAR(alignClocks(*shifted).offsets[1], before - 0.123, 1e-9);
}

TEST(Replay, ReproducesAConsistentJob) {
  JobShape shape;
  shape.shifts = {0.0, 0.01, 0.02, -0.01};
  std::vector<RankTrace> traces = makeJob(shape, 11);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph);
  ClockAlignment alignment = alignClocks(*graph);
  ReplayResult aligned = replay(*graph, alignment.offsets);
  EXPECT_NEAR(aligned.predictedIteration / graph->measuredIteration, 1.0,
              0.005);
  // Every collective's transfer time is the 1.5 ms after its last launch.
  for (double transfer : aligned.transferTimes)
    EXPECT_NEAR(transfer, 1.5e-3, 1e-5);
  // With the shifts left in, the transfer times are wrong.
  std::vector<double> none(shape.ranks, 0.0);
  ReplayResult recorded = replay(*graph, none);
  EXPECT_GT(std::abs(recorded.transferTimes.front() - 1.5e-3), 1e-3);
}

TEST(Dataflow, RefusesDifferentJobs) {
  JobShape shape;
  shape.ranks = 2;
  shape.shifts = {0.0, 0.0};
  std::vector<RankTrace> traces = makeJob(shape, 5);
  shape.buckets = 2;
  traces[1] = makeJob(shape, 5)[1];
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_FALSE(!!graph);
  EXPECT_NE(llvm::toString(graph.takeError()).find("different jobs"),
            std::string::npos);
}

// Each traced bucket takes 1.5 ms whatever its size: a latency. Fewer,
// larger buckets (one transfer after the last gradients) beat three
// serialized ones.
TEST(Optimizer, MergesLatencyBoundBuckets) {
  JobShape shape;
  shape.ranks = 2;
  shape.shifts = {0.0, 0.0};
  shape.gradientElements = {262144, 524288, 786432};
  std::vector<RankTrace> traces = makeJob(shape, 13);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph);
  llvm::Expected<BucketAdvice> advice =
      adviseBucketSize(*graph, alignClocks(*graph).offsets);
  ASSERT_TRUE(!!advice) << llvm::toString(advice.takeError());
  EXPECT_TRUE(advice->model.latencySeparable);
  EXPECT_NEAR(advice->model.latency, 1.5e-3, 1e-5);
  EXPECT_NEAR(advice->model.secondsPerElement, 0, 1e-12);
  EXPECT_EQ(advice->tracedModelled.bucketElements,
            (std::vector<int64_t>{262144, 524288, 786432}));
  const BucketCandidate &best = advice->candidates[advice->best];
  EXPECT_EQ(best.bucketElements, (std::vector<int64_t>{262144, 1310720}));
  EXPECT_LT(best.predictedIteration, advice->tracedModelled.predictedIteration);
}

// Transfer time proportional to size: splitting keeps the buckets
// overlapped with the backward pass, so the traced three buckets stay.
TEST(Optimizer, KeepsBandwidthBoundBucketsSplit) {
  JobShape shape;
  shape.ranks = 2;
  shape.shifts = {0.0, 0.0};
  shape.gradientElements = {262144, 524288, 786432};
  shape.transfer = [](int64_t elements) { return elements * 4e-9; };
  std::vector<RankTrace> traces = makeJob(shape, 17);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph);
  llvm::Expected<BucketAdvice> advice =
      adviseBucketSize(*graph, alignClocks(*graph).offsets);
  ASSERT_TRUE(!!advice) << llvm::toString(advice.takeError());
  EXPECT_NEAR(advice->model.latency, 0, 1e-6);
  EXPECT_NEAR(advice->model.secondsPerElement, 4e-9, 1e-10);
  const BucketCandidate &best = advice->candidates[advice->best];
  EXPECT_EQ(best.bucketElements.size(), 3u);
}

TEST(Optimizer, NeedsAnOpAfterTheBackwardPass) {
  JobShape shape;
  shape.ranks = 2;
  shape.shifts = {0.0, 0.0};
  shape.withStep = false;
  std::vector<RankTrace> traces = makeJob(shape, 19);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph);
  llvm::Expected<BucketAdvice> advice =
      adviseBucketSize(*graph, alignClocks(*graph).offsets);
  ASSERT_FALSE(!!advice);
  EXPECT_EQ(llvm::toString(advice.takeError()),
            "rank 0, iteration 0: no op after the backward pass waits for the "
            "gradients");
}

TEST(Optimizer, AssignsBucketsLikeDDP) {
  // 1 MiB first bucket, then at least the cap; a partial last bucket.
  EXPECT_EQ(assignBuckets({10, 5120, 512, 262144, 512, 262144, 512}, 4, 1 << 20,
                          1 << 18),
            (std::vector<int64_t>{4, 2, 1}));
  EXPECT_EQ(assignBuckets({100, 100}, 4, 1 << 20, 1 << 20),
            (std::vector<int64_t>{2}));
  EXPECT_TRUE(assignBuckets({}, 4, 1 << 20, 1 << 20).empty());
}

/// One rank, one iteration, built by hand: compute nodes on stream 0 in
/// order (name, duration, gap, backward), a collective's single transfer on
/// stream 1 launched after node `launcher` and awaited by node `waiter`.
struct HandGraph {
  DataflowGraph graph;
  HandGraph() {
    graph.numRanks = 1;
    graph.numIterations = 1;
    graph.streams = {{0, 0, false}, {0, 1, true}};
    graph.peakAllocatedBytes = {-1};
    graph.tails = {0};
    graph.gradients = {{{}}};
    graph.syncNodes = {{-1}};
    graph.copyNodes = {{{}}};
  }
  int64_t compute(std::string name, double duration, double gap,
                  bool backward = false, int64_t memoryAtStart = 0,
                  int64_t largestAllocation = 0) {
    Node node;
    node.name = std::move(name);
    node.duration = duration;
    node.gap = gap;
    node.backward = backward;
    node.memoryAtStart = memoryAtStart;
    node.largestAllocation = largestAllocation;
    node.previous = graph.numComputeNodes - 1;
    graph.nodes.push_back(std::move(node));
    return graph.numComputeNodes++;
  }
  void collective(int64_t launcher, int64_t waiter, double transfer) {
    Collective collective;
    collective.name = "gloo:all_reduce";
    collective.steps = 1;
    collective.modelledTransfer = transfer;
    collective.start = collective.end = {0};
    collective.firstTransfer = {(int64_t)graph.nodes.size()};
    Node node;
    node.name = collective.name;
    node.stream = 1;
    node.communication = true;
    node.collective = graph.collectives.size();
    node.step = 0;
    node.receiver = 0;
    node.duration = -1;
    node.previous = -1;
    node.dependencies = {launcher};
    graph.nodes[waiter].dependencies.push_back(graph.nodes.size());
    graph.nodes.push_back(std::move(node));
    graph.collectives.push_back(std::move(collective));
  }
};

// The overhead before an op is saved by fusing it with the op before.
TEST(OpFusion, SavesTheOverheadBetweenOps) {
  HandGraph hand;
  hand.compute("aten::linear", 1e-3, 0);
  hand.compute("aten::relu", 1e-3, 5e-4);
  FusionAdvice advice = adviseOpFusion(hand.graph, {0.0});
  EXPECT_DOUBLE_EQ(advice.baseline, 2.5e-3);
  EXPECT_NEAR(advice.predictedIteration, 2e-3, 1e-12);
  ASSERT_EQ(advice.groups.size(), 1u);
  EXPECT_EQ(advice.groups[0].ops.size(), 2u);
  EXPECT_EQ(advice.groups[0].ops[1].name, "aten::relu");
  EXPECT_NEAR(advice.groups[0].estimatedSaving, 5e-4, 1e-12);
}

// Theorem 1: a collective launched after the first op would start only
// after the second; fusing a long second op behind a small overhead loses
// more overlap than it saves.
TEST(OpFusion, KeepsOverlapWithALaunchedCollective) {
  HandGraph hand;
  int64_t first = hand.compute(
      "autograd::engine::evaluate_function: AddmmBackward0", 1e-3, 0, true);
  hand.compute("autograd::engine::evaluate_function: MmBackward0", 4e-3, 1e-4,
               true);
  int64_t step = hand.compute("Optimizer.step", 1e-4, 0, false);
  hand.collective(first, step, 3.5e-3);
  FusionAdvice advice = adviseOpFusion(hand.graph, {0.0});
  EXPECT_EQ(advice.candidates, 1);
  EXPECT_EQ(advice.rejectedByRule, 1);
  EXPECT_TRUE(advice.groups.empty());
  EXPECT_DOUBLE_EQ(advice.predictedIteration, advice.baseline);
}

// Forward and backward ops are never fused together, nor the framework's
// own ops (DDP's reducer and forward wrapper, AccumulateGrad, the
// profiler's record_function handles).
TEST(OpFusion, FusesModelOpsOfOnePassOnly) {
  HandGraph hand;
  hand.compute("Optimizer.zero_grad#SGD.zero_grad", 1e-4, 0);
  hand.compute("aten::zeros", 1e-5, 5e-4);
  hand.compute("aten::zero_", 1e-5, 5e-4);
  hand.compute("DistributedDataParallel.forward", 1e-3, 5e-4);
  hand.compute("aten::cross_entropy_loss", 1e-4, 5e-4);
  hand.compute("autograd::engine::evaluate_function: NllLossBackward0", 1e-4,
               5e-4, true);
  hand.compute(
      "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad",
      1e-4, 5e-4, true);
  hand.compute("torch.distributed.ddp.reducer::copy_bucket_to_grad", 1e-4, 5e-4,
               true);
  FusionAdvice advice = adviseOpFusion(hand.graph, {0.0});
  EXPECT_EQ(advice.candidates, 0);
  EXPECT_TRUE(advice.groups.empty());
  // Two model ops of the backward pass do fuse.
  hand.compute("autograd::engine::evaluate_function: ReluBackward0", 1e-4, 5e-4,
               true);
  hand.compute("autograd::engine::evaluate_function: AddmmBackward0", 1e-4,
               5e-4, true);
  advice = adviseOpFusion(hand.graph, {0.0});
  EXPECT_EQ(advice.candidates, 1);
  ASSERT_EQ(advice.groups.size(), 1u);
  EXPECT_EQ(advice.groups[0].ops[0].name,
            "autograd::engine::evaluate_function: ReluBackward0");
}

// A merged node's users move to the node it joined; nodes that wait for
// something are not merged.
TEST(GraphEdit, MergesAndInserts) {
  HandGraph hand;
  int64_t a = hand.compute("a", 1e-3, 0);
  int64_t b = hand.compute("b", 2e-3, 1e-4);
  int64_t c = hand.compute("c", 1e-3, 0);
  hand.collective(b, c, 1e-3);
  hand.graph.gradients = {{{{4, b}}}};
  hand.graph.syncNodes = {{c}};
  hand.graph.copyNodes = {{{c}}};
  ComputeEdit edit(hand.graph);
  EXPECT_FALSE(edit.mergeIntoPrevious(a)); // starts its stream
  EXPECT_FALSE(edit.mergeIntoPrevious(c)); // waits for the collective
  EXPECT_TRUE(edit.mergeIntoPrevious(b));
  Node extra;
  extra.name = "x";
  extra.duration = 5e-4;
  extra.dependencies = {c}; // dropped: inserted nodes follow their stream
  edit.insertBefore(a, extra);
  DataflowGraph edited = edit.apply();
  ASSERT_EQ(edited.numComputeNodes, 3);
  EXPECT_EQ(edited.nodes[0].name, "x");
  EXPECT_TRUE(edited.nodes[0].dependencies.empty());
  EXPECT_EQ(edited.nodes[1].name, "a");
  EXPECT_DOUBLE_EQ(edited.nodes[1].duration, 3e-3);
  EXPECT_EQ(edited.nodes[1].previous, 0);
  EXPECT_EQ(edited.nodes[2].previous, 1);
  // The transfer launched after b now follows the merged node; c waits
  // for it; b's gradient is ready when the merged node ends.
  EXPECT_EQ(edited.nodes[3].dependencies[0], 1);
  EXPECT_EQ(edited.nodes[2].dependencies[0], 3);
  EXPECT_EQ(edited.collectives[0].firstTransfer[0], 3);
  EXPECT_EQ(edited.gradients[0][0][0].node, 1);
  EXPECT_EQ(edited.syncNodes[0][0], 2);
  EXPECT_EQ(edited.copyNodes[0][0][0], 2);
  // x, then a + b without b's gap, then the transfer (1 ms) before c.
  EXPECT_NEAR(replay(edited, {0.0}).predictedIteration, 5.5e-3, 1e-12);
}

/// A job whose forward leaves 1000 bytes of activations (largest single
/// allocation 100) and whose iteration peaks at 1500.
static HandGraph memoryJob() {
  HandGraph hand;
  hand.compute("Optimizer.zero_grad", 1e-4, 0, false, 0);
  hand.compute("forward", 2e-3, 1e-4, false, 0, 100);
  hand.compute("autograd::engine::evaluate_function: AddmmBackward0", 2e-3,
               1e-4, true, 1000);
  hand.compute("autograd::engine::evaluate_function: AddmmBackward0", 2e-3,
               1e-4, true, 1200);
  hand.compute("Optimizer.step", 1e-4, 0, false, 0);
  hand.graph.iterationPeakBytes = {{1500}};
  return hand;
}

TEST(MemoryAdvisor, AccumulatesOrRecomputesToFit) {
  HandGraph hand = memoryJob();
  llvm::Expected<MemoryAdvice> advice =
      adviseMemory(hand.graph, {0.0}, /*budgetBytes=*/1100);
  ASSERT_TRUE(!!advice) << llvm::toString(advice.takeError());
  EXPECT_EQ(advice->activationBytes, 1000);
  EXPECT_EQ(advice->largestForwardAllocation, 100);
  ASSERT_EQ(advice->options.size(), 3u);
  const MemoryOption &traced = advice->options[0];
  EXPECT_FALSE(traced.fits);
  EXPECT_NEAR(traced.predictedIteration, 6.5e-3, 1e-12);
  // Two microbatches: 500 bytes of activations; the forward and backward
  // run twice at half the time, their overheads twice.
  const MemoryOption &two = advice->options[1];
  EXPECT_EQ(two.kind, MemoryOption::Kind::Accumulation);
  EXPECT_EQ(two.microbatches, 2);
  EXPECT_EQ(two.peakBytes, 1000);
  EXPECT_TRUE(two.fits);
  EXPECT_NEAR(two.predictedIteration, 6.5e-3 + 3e-4, 1e-12);
  // At most: each microbatch's ops take their whole traced time.
  EXPECT_NEAR(two.predictedIterationUpper, 6.5e-3 + 6.3e-3, 1e-12);
  // Recomputation: 3 segments keep 3 x 100 bytes of inputs and 334 of
  // activations; one more forward (and its overhead).
  const MemoryOption &recompute = advice->options[2];
  EXPECT_EQ(recompute.kind, MemoryOption::Kind::Recomputation);
  EXPECT_EQ(recompute.segments, 3);
  EXPECT_EQ(recompute.peakBytes, 500 + 300 + 334);
  EXPECT_FALSE(recompute.fits);
  EXPECT_NEAR(recompute.predictedIteration, 6.5e-3 + 2.1e-3, 1e-12);
  EXPECT_EQ(advice->best, 1);
}

TEST(MemoryAdvisor, PicksTheFastestThatFits) {
  HandGraph hand = memoryJob();
  // Both fit: recomputation (8.6 ms) beats accumulation's upper bound
  // (12.8 ms) though not its lower one (6.8 ms).
  llvm::Expected<MemoryAdvice> both = adviseMemory(hand.graph, {0.0}, 1200);
  ASSERT_TRUE(!!both);
  EXPECT_TRUE(both->options[1].fits && both->options[2].fits);
  EXPECT_EQ(both->best, 2);
  llvm::Expected<MemoryAdvice> advice = adviseMemory(hand.graph, {0.0}, 1500);
  ASSERT_TRUE(!!advice);
  EXPECT_EQ(advice->best, 0);
  advice = adviseMemory(hand.graph, {0.0}, 1);
  ASSERT_TRUE(!!advice);
  EXPECT_EQ(advice->best, -1);
  // Stopped at 64 microbatches, nothing fits.
  EXPECT_EQ(advice->options[advice->options.size() - 2].microbatches, 64);
}

TEST(MemoryAdvisor, NeedsMemoryEventsAndABackwardPass) {
  HandGraph hand = memoryJob();
  hand.graph.iterationPeakBytes.clear();
  llvm::Expected<MemoryAdvice> advice = adviseMemory(hand.graph, {0.0}, 1);
  ASSERT_FALSE(!!advice);
  EXPECT_EQ(llvm::toString(advice.takeError()),
            "rank 0: the trace has no memory events; record it with "
            "profile_memory=True");
  HandGraph forwardOnly;
  forwardOnly.compute("forward", 1e-3, 0);
  forwardOnly.graph.iterationPeakBytes = {{10}};
  advice = adviseMemory(forwardOnly.graph, {0.0}, 1);
  ASSERT_FALSE(!!advice);
  EXPECT_EQ(llvm::toString(advice.takeError()),
            "rank 0, iteration 0: no backward pass (autograd engine "
            "functions) in the trace");
}

/// Writes one rank of a 2-rank GPU job's trace: host events, runtime calls
/// (each with a new correlation id) and the GPU work they launch; sorts the
/// events by start (enclosing ones first) when done.
struct GpuTraceBuilder {
  RankTrace &trace;
  int64_t correlation = 0;
  GpuTraceBuilder(RankTrace &trace, llvm::StringRef name, int64_t rank)
      : trace(trace) {
    trace.path = (name + std::to_string(rank)).str();
    trace.rank = rank;
    trace.worldSize = 2;
  }
  ~GpuTraceBuilder() {
    llvm::sort(trace.events, [](const TraceEvent &a, const TraceEvent &b) {
      return a.start != b.start ? a.start < b.start : a.duration > b.duration;
    });
  }
  TraceEvent &add(std::string name, double start, double end,
                  bool runtime = false, int64_t thread = 1) {
    TraceEvent event;
    event.name = std::move(name);
    event.thread = thread;
    event.start = start;
    event.duration = end - start;
    event.runtimeCall = runtime;
    event.correlation = runtime ? ++correlation : -1;
    trace.events.push_back(std::move(event));
    return trace.events.back();
  }
  void launch(std::string call, std::string work, double start, double end,
              double workStart, double workEnd, int64_t stream = 7) {
    add(std::move(call), start, end, /*runtime=*/true);
    trace.gpu.push_back(
        {std::move(work), stream, workStart, workEnd - workStart, correlation});
  }
};

/// A GPU job of 2 ranks and 3 iterations of 6 ms: an op launches a 5 ms
/// kernel, the host waits for it (`waitCall`), optionally copies
/// synchronously to the host (a cudaMemcpy that waits for its own copy),
/// then steps. With `allReduce`, DDP over gloo: the launch op makes a side
/// stream wait for the kernel and copies the bucket there; the worker
/// thread waits for that copy, then reduces for 0.2 ms. Times start at
/// `base` seconds.
std::vector<RankTrace> makeGpuJob(double base, llvm::StringRef waitCall,
                                  bool synchronousCopy,
                                  bool allReduce = false) {
  std::vector<RankTrace> traces(2);
  for (int64_t r = 0; r < 2; ++r) {
    GpuTraceBuilder builder(traces[r], "gpu-rank", r);
    auto add = [&](auto &&...args) { builder.add(args...); };
    auto launch = [&](auto &&...args) { builder.launch(args...); };
    for (int64_t it = 0; it < 3; ++it) {
      double t = base + it * 6e-3;
      add("ProfilerStep#" + std::to_string(it), t, t + 6e-3);
      add("aten::addmm", t + 0.1e-3, t + 0.3e-3);
      launch("cudaLaunchKernel", "sgemm", t + 0.2e-3, t + 0.25e-3, t + 0.26e-3,
             t + 5.26e-3);
      if (allReduce) {
        add("c10d::allreduce_", t + 0.32e-3, t + 0.38e-3);
        add("cudaEventRecord", t + 0.33e-3, t + 0.335e-3, true);
        add("cudaStreamWaitEvent", t + 0.34e-3, t + 0.345e-3, true);
        launch("cudaMemcpyAsync", "Memcpy DtoH", t + 0.35e-3, t + 0.36e-3,
               t + 5.27e-3, t + 5.29e-3, /*stream=*/20);
        add("gloo:all_reduce", t + 0.37e-3, t + 5.5e-3, false, 2);
        add("cudaStreamSynchronize", t + 0.38e-3, t + 5.3e-3, true, 2);
      }
      add(waitCall.str(), t + 0.4e-3, t + 5.3e-3, /*runtime=*/true);
      if (synchronousCopy)
        launch("cudaMemcpy", "Memcpy DtoH", t + 5.4e-3, t + 5.5e-3, t + 5.42e-3,
               t + 5.48e-3);
      add("Optimizer.step#SGD.step", t + 5.6e-3, t + 5.8e-3);
    }
  }
  return traces;
}

/// Per iteration of rank 0: the index of the first node named `name`.
std::vector<int64_t> nodesNamed(const DataflowGraph &graph,
                                llvm::StringRef name) {
  std::vector<int64_t> found(graph.numIterations, -1);
  for (auto [index, node] : llvm::enumerate(graph.nodes))
    if (node.rank == 0 && node.name == name && found[node.iteration] < 0)
      found[node.iteration] = index;
  return found;
}

// The host's wait depends on the kernel it waited for and lasts only what
// the call took beyond the kernel's end; kernels 10 ms long then hold the
// next op back. Without the wait (a call that does not block) they do not:
// the check can fail.
TEST(GpuReplay, HostWaitsForItsKernels) {
  for (bool blocking : {true, false}) {
    std::vector<RankTrace> traces = makeGpuJob(
        1.0, blocking ? "cudaDeviceSynchronize" : "cudaEventRecord", false);
    llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
    ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
    ASSERT_EQ(graph->numGpuNodes, 6);
    std::vector<int64_t> kernels = nodesNamed(*graph, "sgemm");
    std::vector<int64_t> steps = nodesNamed(*graph, "Optimizer.step#SGD.step");
    if (blocking) {
      const Node &wait =
          graph->nodes[nodesNamed(*graph, "cudaDeviceSynchronize")[0]];
      ASSERT_EQ(wait.dependencies.size(), 1u);
      EXPECT_EQ(wait.dependencies.front(), kernels[0]);
      EXPECT_NEAR(wait.duration, 0.04e-3, 1e-9);
    }
    ReplayResult base = replay(*graph, {0.0, 0.0});
    EXPECT_NEAR(base.predictedIteration, 6e-3, 1e-7);
    for (int64_t kernel : kernels)
      graph->nodes[kernel].duration = 10e-3;
    ReplayResult slow = replay(*graph, {0.0, 0.0});
    for (int64_t it = 0; it < 3; ++it) {
      double kernelEnd = slow.timeline.events[kernels[it]].end;
      double stepStart = slow.timeline.events[steps[it]].start;
      if (blocking)
        EXPECT_GE(stepStart, kernelEnd);
      else
        EXPECT_LT(stepStart, kernelEnd);
    }
  }
}

// A synchronous cudaMemcpy launches the copy it waits for: the copy depends
// on the call, so the call must not depend on the copy (a cycle).
TEST(GpuReplay, SynchronousCopyIsNotACycle) {
  std::vector<RankTrace> traces =
      makeGpuJob(1.0, "cudaDeviceSynchronize", /*synchronousCopy=*/true);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  ASSERT_EQ(graph->numGpuNodes, 12);
  int64_t copy = nodesNamed(*graph, "Memcpy DtoH")[0];
  int64_t call = graph->nodes[copy].dependencies.front();
  EXPECT_EQ(graph->nodes[call].name, "cudaMemcpy");
  ASSERT_EQ(graph->nodes[call].dependencies.size(), 1u);
  EXPECT_EQ(graph->nodes[call].dependencies.front(),
            nodesNamed(*graph, "sgemm")[0]);
  ReplayResult result = replay(*graph, {0.0, 0.0});
  EXPECT_NEAR(result.predictedIteration, 6e-3, 1e-7);
}

// DDP over gloo on GPUs: the bucket's copy waits for the kernel on the
// other stream (cudaStreamWaitEvent), the collective's transfers begin when
// the worker's wait for the copy returns and depend on the copy; so halving
// the kernel (on the graph) shortens the iteration, which it could not if
// the collective's traced span (5.1 ms, mostly waiting) were its transfer.
TEST(GpuReplay, CollectiveWaitsForItsBucketCopy) {
  std::vector<RankTrace> traces =
      makeGpuJob(1.0, "cudaDeviceSynchronize", false, /*allReduce=*/true);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  ASSERT_EQ(graph->collectives.size(), 3u);
  std::vector<int64_t> kernels = nodesNamed(*graph, "sgemm");
  std::vector<int64_t> copies = nodesNamed(*graph, "Memcpy DtoH");
  const Node &copy = graph->nodes[copies[0]];
  EXPECT_NE(llvm::find(copy.dependencies, kernels[0]), copy.dependencies.end());
  // The wait is for the copy only: later kernels wait for no copy.
  for (int64_t kernel : kernels)
    for (int64_t dependency : graph->nodes[kernel].dependencies)
      EXPECT_LT(dependency, graph->numComputeNodes);
  const Collective &collective = graph->collectives[0];
  EXPECT_DOUBLE_EQ(collective.start[0], 1.0 + 5.3e-3);
  const Node &step0 = graph->nodes[collective.firstTransfer[0]];
  EXPECT_NE(llvm::find(step0.dependencies, copies[0]),
            step0.dependencies.end());
  ReplayResult base = replay(*graph, {0.0, 0.0});
  EXPECT_NEAR(base.transferTimes[0], 0.2e-3, 1e-9);
  EXPECT_NEAR(base.predictedIteration, 6e-3, 2e-5);
  for (Node &node : graph->nodes)
    if (node.name == "sgemm")
      node.duration /= 2;
  ReplayResult fast = replay(*graph, {0.0, 0.0});
  EXPECT_LT(fast.predictedIteration, 4e-3);
}

// Absolute timestamps of a host up for 231 days (2e7 s, past 2^24 s where a
// nanosecond tolerance vanishes) still find each wait's piece.
TEST(GpuReplay, WaitsOnLongUptimeClocks) {
  std::vector<RankTrace> traces =
      makeGpuJob(2e7, "cudaDeviceSynchronize", false);
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  for (int64_t wait : nodesNamed(*graph, "cudaDeviceSynchronize"))
    EXPECT_EQ(graph->nodes[wait].dependencies.size(), 1u);
}

/// DDP over gloo on GPUs, 2 ranks, 3 iterations of `gradients` + 1.2 ms: a
/// forward op, then per gradient (262144 elements each, one bucket each) a
/// backward op that launches a `kernel`-second kernel, AccumulateGrad and
/// DDP's launch op, which makes its own stream wait for the kernels and
/// copies the bucket to host memory there (20 us); the worker waits for the
/// copy and reduces for 0.5 ms. Then DDP copies each bucket out (a
/// device-to-device copy after a cross-stream wait, which the graph links to
/// the last bucket's copy to the host) and the optimizer steps. Without
/// `copies` the launch op copies nothing (as with NCCL).
std::vector<RankTrace> makeGpuDdpJob(double kernel, bool copies = true,
                                     int64_t gradients = 2) {
  const int64_t elements = 262144;
  std::vector<RankTrace> traces(2);
  for (int64_t r = 0; r < 2; ++r) {
    GpuTraceBuilder builder(traces[r], "gpu-ddp-rank", r);
    double kernelEnd = 0;
    const double period = (gradients + 1.2) * 1e-3;
    for (int64_t it = 0; it < 3; ++it) {
      double t = 1.0 + it * period;
      builder.add("ProfilerStep#" + std::to_string(it), t, t + period);
      builder.add("aten::addmm", t + 0.1e-3, t + 0.3e-3);
      builder.launch("cudaLaunchKernel", "sgemm", t + 0.2e-3, t + 0.25e-3,
                     t + 0.26e-3, t + 0.26e-3 + kernel, 7);
      kernelEnd = t + 0.26e-3 + kernel;
      std::vector<double> ends;
      for (int64_t g = 0; g < gradients; ++g) {
        double s = t + 0.5e-3 + g * 1e-3;
        builder.add("autograd::engine::evaluate_function: AddmmBackward0", s,
                    s + 0.3e-3);
        double start = std::max(kernelEnd, s + 0.11e-3);
        builder.launch("cudaLaunchKernel", "sgemm backward", s + 0.05e-3,
                       s + 0.1e-3, start, start + kernel, 7);
        kernelEnd = start + kernel;
        builder.add("autograd::engine::evaluate_function: "
                    "torch::autograd::AccumulateGrad",
                    s + 0.3e-3, s + 0.55e-3);
        builder.add("torch::autograd::AccumulateGrad", s + 0.31e-3, s + 0.33e-3)
            .inputElements = {elements};
        builder.add("c10d::allreduce_", s + 0.42e-3, s + 0.5e-3);
        double copyEnd = s + 0.46e-3;
        if (copies) {
          builder.add("cudaStreamWaitEvent", s + 0.43e-3, s + 0.435e-3, true);
          double copyStart = std::max(kernelEnd, s + 0.451e-3);
          copyEnd = copyStart + 20e-6;
          builder.launch("cudaMemcpyAsync", "Memcpy DtoH", s + 0.44e-3,
                         s + 0.45e-3, copyStart, copyEnd,
                         20 + 4 * (gradients * it + g));
        }
        double end = copyEnd + 0.01e-3 + 0.5e-3;
        builder.add("gloo:all_reduce", s + 0.46e-3, end, false, 2)
            .inputElements = {elements};
        if (copies)
          builder.add("cudaStreamSynchronize", s + 0.47e-3, copyEnd + 0.01e-3,
                      true, 2);
        ends.push_back(end);
      }
      // DDP copies each bucket out once the backward pass ended and the
      // bucket's collective did.
      double at = t + 0.5e-3 + (gradients - 1) * 1e-3 + 0.55e-3;
      for (double end : ends) {
        at = std::max(at, end) + 0.01e-3;
        builder
            .add("torch.distributed.ddp.reducer::copy_bucket_to_grad", at,
                 at + 0.01e-3)
            .inputElements = {elements};
        builder.add("cudaStreamWaitEvent", at + 0.001e-3, at + 0.002e-3, true);
        double start = std::max(kernelEnd, at + 0.007e-3);
        builder.launch("cudaMemcpyAsync", "Memcpy DtoD", at + 0.003e-3,
                       at + 0.006e-3, start, start + 5e-6, 7);
        kernelEnd = start + 5e-6;
        at += 0.01e-3;
      }
      builder.add("Optimizer.step#SGD.step", at + 0.05e-3, at + 0.15e-3);
    }
  }
  return traces;
}

// Bucket advice on a GPU job: each candidate bucket is copied to host
// memory after the kernels launched before its last gradient, priced by the
// traced copies; the traced buckets rebuilt that way replay as measured.
// With the kernels made 3 ms long (on the graph) every candidate's
// transfers wait for the last backward kernel: an iteration takes at least
// its three kernels and the last transfer (without the copy's wait it would
// be the kernels alone).
TEST(GpuOptimizer, BucketsWaitForTheirGradientsKernels) {
  const int64_t gradients = 6;
  const double period = 7.2e-3;
  llvm::Expected<DataflowGraph> graph =
      buildDataflowGraph(makeGpuDdpJob(0.3e-3, true, gradients), {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  ASSERT_EQ(graph->collectives.size(), 18u);
  // The copies out wait (cross-stream) for the last bucket's copy.
  int64_t waitsForCopy = 0;
  for (const Node &node : graph->nodes)
    if (node.name == "Memcpy DtoD")
      for (int64_t dependency : node.dependencies)
        waitsForCopy += graph->nodes[dependency].name == "Memcpy DtoH";
  EXPECT_EQ(waitsForCopy, 2 * 3 * gradients);
  std::vector<double> offsets = alignClocks(*graph).offsets;
  llvm::Expected<BucketAdvice> advice = adviseBucketSize(*graph, offsets);
  ASSERT_TRUE(!!advice) << llvm::toString(advice.takeError());
  ASSERT_TRUE(advice->copyModel.has_value());
  EXPECT_EQ(advice->copyModel->samples, 2 * 3 * gradients);
  EXPECT_NEAR((*advice->copyModel)(262144), 20e-6, 1e-9);
  EXPECT_NEAR(advice->model(262144), 0.5e-3, 1e-6);
  EXPECT_EQ(advice->tracedModelled.bucketElements,
            std::vector<int64_t>(gradients, 262144));
  EXPECT_LT(advice->modelError, 0.001);
  // DDP's 1 MiB first bucket, then pairs (2 MB) or the rest (5 MB and up).
  // Transfers cost per element: merged buckets overlap less of the backward
  // pass (the last one, up to 5 gradients, runs after it), so the traced
  // layout is the fastest.
  std::set<size_t> layouts;
  for (const BucketCandidate &row : advice->candidates) {
    layouts.insert(row.bucketElements.size());
    EXPECT_LT(row.predictedIteration, period + 5 * 0.5e-3);
  }
  EXPECT_EQ(layouts, (std::set<size_t>{2, 4, 6}));
  EXPECT_EQ(advice->candidates[advice->best].bucketElements.size(), 6u);
  EXPECT_LT(advice->candidates[advice->best].predictedIteration, period);

  const double kernel = 3e-3;
  for (Node &node : graph->nodes)
    if (llvm::StringRef(node.name).starts_with("sgemm"))
      node.duration = kernel;
  advice = adviseBucketSize(*graph, offsets);
  ASSERT_TRUE(!!advice) << llvm::toString(advice.takeError());
  for (const BucketCandidate &row : advice->candidates) {
    EXPECT_GE(row.predictedIteration, (gradients + 1) * kernel + 0.5e-3);
    EXPECT_LT(row.predictedIteration,
              (gradients + 1) * kernel + period + 5 * 0.5e-3);
  }
}

// Op fusion on a GPU job: two ops, each cut into two pieces where it
// launches its kernel, with 0.1 ms of framework time between them. Fusing
// them saves that time on the host, which is the critical path (the
// kernels are short); the group names whole ops, not pieces.
TEST(GpuOptimizer, FusesOpsThatLaunchKernels) {
  std::vector<RankTrace> traces(2);
  for (int64_t r = 0; r < 2; ++r) {
    GpuTraceBuilder builder(traces[r], "gpu-fusion-rank", r);
    for (int64_t it = 0; it < 3; ++it) {
      double t = 1.0 + it * 1e-3;
      builder.add("ProfilerStep#" + std::to_string(it), t, t + 1e-3);
      builder.add("aten::mm", t + 0.1e-3, t + 0.3e-3);
      builder.launch("cudaLaunchKernel", "sgemm", t + 0.2e-3, t + 0.25e-3,
                     t + 0.26e-3, t + 0.28e-3);
      builder.add("aten::relu", t + 0.4e-3, t + 0.5e-3);
      builder.launch("cudaLaunchKernel", "relu kernel", t + 0.45e-3,
                     t + 0.47e-3, t + 0.48e-3, t + 0.49e-3);
      builder.add("cudaDeviceSynchronize", t + 0.6e-3, t + 0.62e-3, true);
    }
  }
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  ASSERT_TRUE(graph->hasGpuActivity());
  FusionAdvice advice = adviseOpFusion(*graph, {0.0, 0.0});
  ASSERT_EQ(advice.groups.size(), 1u);
  EXPECT_EQ(advice.groups[0].ops,
            (std::vector<OpIdentity>{{"aten::mm", 0}, {"aten::relu", 0}}));
  EXPECT_NEAR(advice.groups[0].estimatedSaving, 0.1e-3, 1e-9);
  EXPECT_NEAR(advice.baseline - advice.predictedIteration, 0.1e-3, 1e-6);
}

// Memory advice on a GPU-bound job: a forward op launches a 3 ms kernel
// and allocates 1 MB of activations, a backward op launches a 4 ms kernel
// and frees them, the host waits for the GPU. Accumulating gradients over
// two microbatches runs every kernel twice (on half the batch at best: the
// range is 7 to 14 ms of kernels); recomputation runs the forward kernels
// again before the backward ones.
TEST(GpuOptimizer, MemoryOptionsRunTheirKernels) {
  std::vector<RankTrace> traces(2);
  for (int64_t r = 0; r < 2; ++r) {
    GpuTraceBuilder builder(traces[r], "gpu-memory-rank", r);
    for (int64_t it = 0; it < 3; ++it) {
      double t = 1.0 + it * 8e-3;
      builder.add("ProfilerStep#" + std::to_string(it), t, t + 8e-3);
      builder.add("aten::mm", t + 0.1e-3, t + 0.2e-3);
      builder.launch("cudaLaunchKernel", "forward kernel", t + 0.15e-3,
                     t + 0.16e-3, t + 0.17e-3, t + 3.17e-3);
      traces[r].memory.push_back({t + 0.18e-3, 1000000});
      builder.add("autograd::engine::evaluate_function: MmBackward0",
                  t + 0.3e-3, t + 0.4e-3);
      builder.launch("cudaLaunchKernel", "backward kernel", t + 0.35e-3,
                     t + 0.36e-3, t + 3.17e-3, t + 7.17e-3);
      traces[r].memory.push_back({t + 0.38e-3, -1000000});
      builder.add("cudaDeviceSynchronize", t + 0.5e-3, t + 7.2e-3, true);
      builder.add("Optimizer.step#SGD.step", t + 7.3e-3, t + 7.4e-3);
    }
  }
  llvm::Expected<DataflowGraph> graph = buildDataflowGraph(traces, {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  llvm::Expected<MemoryAdvice> advice =
      adviseMemory(*graph, {0.0, 0.0}, 600000);
  ASSERT_TRUE(!!advice) << llvm::toString(advice.takeError());
  EXPECT_EQ(advice->activationBytes, 1000000);
  ASSERT_EQ(advice->options.size(), 3u);
  const MemoryOption &traced = advice->options[0];
  const MemoryOption &accumulation = advice->options[1];
  const MemoryOption &recomputation = advice->options[2];
  EXPECT_NEAR(traced.predictedIteration, 8e-3, 1e-6);
  EXPECT_FALSE(traced.fits);
  ASSERT_EQ(accumulation.kind, MemoryOption::Kind::Accumulation);
  EXPECT_EQ(accumulation.microbatches, 2);
  EXPECT_TRUE(accumulation.fits);
  EXPECT_GE(accumulation.predictedIteration, 7e-3);
  EXPECT_GE(accumulation.predictedIterationUpper, 14e-3);
  EXPECT_LT(accumulation.predictedIterationUpper, 16e-3);
  ASSERT_EQ(recomputation.kind, MemoryOption::Kind::Recomputation);
  EXPECT_GE(recomputation.predictedIteration, 8e-3 + 3e-3 - 1e-6);
  EXPECT_LT(recomputation.predictedIteration, 11.5e-3);
  EXPECT_EQ(advice->best, 1);
}

// ComputeEdit on a GPU job: without edits the graph comes back as it was
// (stream order, dependencies, times); a node inserted before a backward op
// launches its GPU work onto the compute stream between the work launched
// before it and the work launched after.
TEST(GpuOptimizer, EditsKeepTheStreamsInLaunchOrder) {
  llvm::Expected<DataflowGraph> graph =
      buildDataflowGraph(makeGpuDdpJob(0.3e-3, true, 3), {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  DataflowGraph same = ComputeEdit(*graph).apply();
  ASSERT_EQ(same.nodes.size(), graph->nodes.size());
  EXPECT_EQ(same.numGpuNodes, graph->numGpuNodes);
  for (auto [a, b] : llvm::zip(graph->nodes, same.nodes)) {
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.stream, b.stream);
    EXPECT_EQ(a.previous, b.previous);
    EXPECT_EQ(a.dependencies, b.dependencies);
    EXPECT_EQ(a.duration, b.duration);
  }

  // Before rank 0's first backward op: work that runs after the forward
  // kernel and before the backward kernel on stream 7.
  int64_t backward = -1;
  for (int64_t i = 0; i < graph->numComputeNodes && backward < 0; ++i)
    if (graph->nodes[i].backward)
      backward = i;
  ASSERT_GE(backward, 0);
  int64_t computeStream = graph->nodes[graph->firstGpuNode()].stream;
  ComputeEdit edit(*graph);
  Node host, work;
  host.name = "inserted";
  host.duration = 1e-4;
  work.name = "inserted kernel";
  work.stream = computeStream;
  work.duration = 1e-3;
  edit.insertBefore(backward, host, {work});
  DataflowGraph edited = edit.apply();
  ASSERT_EQ(edited.nodes.size(), graph->nodes.size() + 2);
  auto find = [&](llvm::StringRef name) {
    for (auto [index, node] : llvm::enumerate(edited.nodes))
      if (node.name == name && node.rank == 0)
        return (int64_t)index;
    return (int64_t)-1;
  };
  int64_t kernel = find("inserted kernel");
  ASSERT_GE(kernel, edited.firstGpuNode());
  EXPECT_EQ(edited.nodes[kernel].dependencies,
            (llvm::SmallVector<int64_t, 2>{find("inserted")}));
  EXPECT_EQ(edited.nodes[edited.nodes[kernel].previous].name, "sgemm");
  int64_t after = -1;
  for (auto [index, node] : llvm::enumerate(edited.nodes))
    if (node.previous == kernel)
      after = index;
  ASSERT_GE(after, 0);
  EXPECT_EQ(edited.nodes[after].name, "sgemm backward");
  ASSERT_TRUE(isAcyclic(edited));
  // The backward kernel waits behind the inserted 1 ms on the stream.
  ReplayResult result = replay(edited, {0.0, 0.0});
  EXPECT_GE(result.timeline.events[after].start,
            result.timeline.events[kernel].end);
}

TEST(GpuOptimizer, NeedsTheBucketCopies) {
  llvm::Expected<DataflowGraph> graph =
      buildDataflowGraph(makeGpuDdpJob(0.3e-3, /*copies=*/false), {});
  ASSERT_TRUE(!!graph) << llvm::toString(graph.takeError());
  // Other GPU work makes it a GPU job.
  ASSERT_GT(graph->numGpuNodes, 0);
  llvm::Expected<BucketAdvice> advice =
      adviseBucketSize(*graph, alignClocks(*graph).offsets);
  ASSERT_FALSE(!!advice);
  EXPECT_EQ(llvm::toString(advice.takeError()),
            "rank 0: gloo:all_reduce of iteration 0 reduces a bucket that was "
            "not copied from the GPU: only DDP over gloo with CUDA tensors is "
            "modelled");
}

} // namespace
