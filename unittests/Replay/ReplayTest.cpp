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

#include "DistIR/Replay/Optimizer.h"

#include "gtest/gtest.h"

#include <functional>
#include <random>

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

} // namespace
