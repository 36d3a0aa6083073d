//===- Dataflow.cpp - Join per-rank traces into one dataflow graph --------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/Dataflow.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

using namespace distir::replay;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static bool isIterationMarker(llvm::StringRef name) {
  return name.starts_with("ProfilerStep#") || name == "ProfilerStep*";
}

/// Collectives as the process groups record them on their worker threads
/// (`gloo:all_reduce`, `nccl:all_reduce`) or NCCL's kernels.
static bool isCollective(llvm::StringRef name) {
  return name.starts_with("gloo:") || name.starts_with("nccl:") ||
         name.contains("ncclKernel_") || name.contains("ncclDevKernel_");
}

/// The call that hands a collective to the process group.
static bool isLaunch(llvm::StringRef name) {
  return name.starts_with("c10d::");
}

static bool isBackward(llvm::StringRef name) {
  return name.starts_with("autograd::engine::evaluate_function");
}

/// GPU and host times come from different clocks that Kineto maps onto one:
/// a microsecond of disagreement is tolerated.
static constexpr double kClockTolerance = 1e-6;

/// CUDA calls that block the host until GPU work is done (a synchronous
/// cudaMemcpy too: a copy to the host waits for the stream).
static bool isGpuWait(llvm::StringRef name) {
  return name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize" ||
         name == "cudaEventSynchronize" || name == "cudaMemcpy" ||
         name == "cuCtxSynchronize" || name == "cuStreamSynchronize" ||
         name == "cuEventSynchronize";
}

/// Ring steps of a collective over `ranks` ranks.
static int64_t ringSteps(llvm::StringRef name, int64_t ranks) {
  bool allReduce = name.contains("all_reduce") || name.contains("allreduce") ||
                   name.contains("AllReduce");
  return (allReduce ? 2 : 1) * (ranks - 1);
}

namespace {
/// A piece of a top-level op of the main thread (split where a collective
/// is launched).
struct Piece {
  std::string name;
  double start, end;
  int64_t iteration;
  bool backward;
  /// The top-level op it is part of (index among the rank's).
  int64_t op;
  /// Allocated bytes at the piece's start over the level at its
  /// iteration's start, and the largest single allocation it made.
  int64_t memoryAtStart = 0, largestAllocation = 0;
};

struct CommEvent {
  const TraceEvent *event;
  int64_t iteration;
  double launch;
  int64_t launchPiece = -1;
  int64_t waiter = -1;
  /// Where the transfers begin: after the worker's wait for the GPU (the
  /// copy of a CUDA bucket to host memory) when it has one, else the start.
  double transferStart = 0;
  /// The GPU copy of its bucket (index in gpuLaunches), launched by its
  /// launch op; -1 for none.
  int64_t copy = -1;
  /// The launch op's end (-1 when launches were not recorded) and thread.
  double launchOpEnd = -1;
  int64_t launchThread = -1;
};

/// GPU activity launched by a compute thread; the piece that ends where the
/// launch call returns.
struct GpuLaunch {
  const GpuEvent *event;
  int64_t iteration;
  double launchStart, launchEnd;
  int64_t thread;
  int64_t launchPiece = -1;
  /// A stream that waits for another (cudaStreamWaitEvent before the
  /// launch): the work it waits for (index in gpuLaunches), else -1.
  int64_t waitsFor = -1;
};

/// A host call that waits for the GPU; its piece spans the call.
struct GpuWait {
  double start;
  int64_t piece = -1;
};

/// One rank's trace cut into what the graph needs (clock-independent).
struct RankPlan {
  int64_t mainThread = 0;
  /// Threads that run the model: the main thread and, in a GPU job, the
  /// autograd engine's device thread that runs the backward pass (the main
  /// thread blocks meanwhile, so their top-level ops form one sequence).
  std::set<int64_t> computeThreads;
  bool isCompute(int64_t thread) const {
    return computeThreads.count(thread) != 0;
  }
  std::vector<GpuLaunch> gpuLaunches;
  std::vector<GpuWait> gpuWaits;
  std::vector<std::pair<double, double>> iterations;
  std::vector<Piece> pieces;
  std::vector<CommEvent> comms;
  /// Per iteration: (elements, piece where the gradient is ready).
  std::vector<std::vector<std::pair<int64_t, int64_t>>> gradients;
  /// Per iteration: the first piece after the backward pass (-1: none).
  std::vector<int64_t> syncPieces;
  /// Per iteration: DDP's copies of the reduced buckets into the gradients,
  /// one piece per gradient (empty unless they match the gradients).
  std::vector<std::vector<int64_t>> copyPieces;
  int64_t peak = -1;
  /// Per iteration: the largest level over the level at its start.
  std::vector<int64_t> iterationPeaks;
};
} // namespace

/// The iteration markers of the rank's main thread (the thread that
/// records them).
static llvm::Error findIterations(const RankTrace &trace, RankPlan &plan) {
  for (const TraceEvent &event : trace.events)
    if (isIterationMarker(event.name) &&
        (plan.iterations.empty() || event.thread == plan.mainThread)) {
      plan.mainThread = event.thread;
      plan.iterations.push_back({event.start, event.end()});
    }
  if (plan.iterations.empty())
    return fail(trace.path + ": no iteration markers (ProfilerStep#N); "
                             "profile with torch.profiler.schedule and call "
                             "step() after each iteration");
  plan.computeThreads.insert(plan.mainThread);
  for (const TraceEvent &event : trace.events)
    if (isBackward(event.name))
      plan.computeThreads.insert(event.thread);
  return llvm::Error::success();
}

/// Collectives launched and recorded in iteration `span`. A worker thread
/// may record a collective after the profiler stopped collecting (the last
/// iteration then lacks it), so iterations where the two differ cannot be
/// replayed.
static std::pair<int64_t, int64_t>
countCollectives(const RankTrace &trace, const RankPlan &plan,
                 std::pair<double, double> span) {
  int64_t launched = 0, recorded = 0;
  for (const TraceEvent &event : trace.events) {
    if (event.start < span.first || event.start > span.second)
      continue;
    if (plan.isCompute(event.thread) && isLaunch(event.name))
      ++launched;
    else if (!plan.isCompute(event.thread) && isCollective(event.name))
      ++recorded;
  }
  return {launched, recorded};
}

/// Keeps the last `requested` iterations (all when unset) among those every
/// rank recorded completely; incomplete iterations may only be at the ends.
static llvm::Error selectIterations(llvm::ArrayRef<RankTrace> traces,
                                    std::optional<int64_t> requested,
                                    std::vector<RankPlan> &plans,
                                    std::vector<std::string> &dropped) {
  size_t count = plans.front().iterations.size();
  for (size_t r = 1; r < plans.size(); ++r)
    if (plans[r].iterations.size() != count)
      return fail(llvm::formatv(
          "{0} has {1} profiled iterations, {2} has {3}: traces of different "
          "jobs or profiler schedules",
          traces[r].path, plans[r].iterations.size(), traces[0].path, count));
  std::vector<std::string> incomplete(count);
  for (size_t i = 0; i < count; ++i)
    for (size_t r = 0; r < plans.size() && incomplete[i].empty(); ++r) {
      auto [launched, recorded] =
          countCollectives(traces[r], plans[r], plans[r].iterations[i]);
      if (launched != recorded && launched != 0)
        incomplete[i] = llvm::formatv("iteration {0}: {1} launched {2} "
                                      "collectives and recorded {3}",
                                      i, traces[r].path, launched, recorded);
    }
  size_t first = 0, last = count;
  while (first < last && !incomplete[first].empty())
    dropped.push_back(incomplete[first++]);
  while (last > first && !incomplete[last - 1].empty())
    dropped.push_back(incomplete[--last]);
  for (size_t i = first; i < last; ++i)
    if (!incomplete[i].empty())
      return fail(incomplete[i] + ", between complete iterations");
  if (first == last)
    return fail("no iteration was recorded completely (" + dropped.front() +
                ")");
  if (requested && *requested > (int64_t)(last - first))
    return fail(llvm::formatv("{0} iterations requested, the traces have {1} "
                              "complete ones",
                              *requested, last - first));
  if (requested)
    first = last - *requested;
  for (RankPlan &plan : plans)
    plan.iterations = std::vector<std::pair<double, double>>(
        plan.iterations.begin() + first, plan.iterations.begin() + last);
  return llvm::Error::success();
}

static int64_t iterationOf(const RankPlan &plan, double time) {
  for (auto [index, span] : llvm::enumerate(plan.iterations))
    if (time >= span.first && time <= span.second)
      return index;
  return -1;
}

/// The last piece that starts at or before `time`.
static int64_t pieceAt(const RankPlan &plan, double time) {
  int64_t found = -1;
  for (auto [index, piece] : llvm::enumerate(plan.pieces))
    if (piece.start <= time)
      found = index;
  return found;
}

/// Gradients in the order they became ready (AccumulateGrad with its
/// recorded shape) and where each iteration's backward pass ends.
static void findGradients(const RankTrace &trace, RankPlan &plan) {
  size_t iterations = plan.iterations.size();
  plan.gradients.resize(iterations);
  plan.syncPieces.assign(iterations, -1);
  plan.copyPieces.resize(iterations);
  // DDP copies each reduced bucket out gradient by gradient, in the order
  // they became ready, right after waiting for it.
  std::vector<std::vector<int64_t>> copied(iterations);
  for (const TraceEvent &event : trace.events) {
    int64_t iteration = iterationOf(plan, event.start);
    if (iteration < 0 || !plan.isCompute(event.thread) ||
        event.inputElements.empty())
      continue;
    if (event.name == "torch::autograd::AccumulateGrad") {
      plan.gradients[iteration].push_back(
          {event.inputElements.front(), pieceAt(plan, event.end())});
    } else if (event.name ==
               "torch.distributed.ddp.reducer::copy_bucket_to_grad") {
      int64_t piece = pieceAt(plan, event.start);
      if (piece >= 0 && plan.pieces[piece].start == event.start) {
        plan.copyPieces[iteration].push_back(piece);
        copied[iteration].push_back(event.inputElements.front());
      }
    }
  }
  for (size_t it = 0; it < iterations; ++it) {
    int64_t lastBackward = -1;
    for (auto [index, piece] : llvm::enumerate(plan.pieces))
      if (piece.iteration == (int64_t)it && piece.backward)
        lastBackward = index;
    if (lastBackward >= 0 && lastBackward + 1 < (int64_t)plan.pieces.size() &&
        plan.pieces[lastBackward + 1].iteration == (int64_t)it)
      plan.syncPieces[it] = lastBackward + 1;
    std::vector<int64_t> ready;
    for (auto [elements, piece] : plan.gradients[it])
      ready.push_back(elements);
    if (copied[it] != ready)
      plan.copyPieces[it].clear();
  }
}

/// GPU work launched by the compute threads, in launch order (each stream
/// runs its work in that order); what worker threads launch (a gloo
/// collective's copies) belongs to the collective. Links cross-stream waits
/// and each collective's bucket copy.
static llvm::Error
linkGpuWork(const RankTrace &trace,
            const std::map<int64_t, const TraceEvent *> &runtimeCalls,
            llvm::ArrayRef<std::pair<int64_t, double>> streamWaits,
            RankPlan &plan) {
  for (const GpuEvent &gpu : trace.gpu) {
    auto call = runtimeCalls.find(gpu.correlation);
    if (call == runtimeCalls.end()) {
      // Work launched before the profiler started may run into the first
      // iteration; inside the iterations every launch is recorded.
      if (iterationOf(plan, gpu.start) > 0)
        return fail(llvm::formatv("{0}: GPU activity '{1}' at {2:f6} s has "
                                  "no launch (correlation {3}) in the trace",
                                  trace.path, gpu.name, gpu.start,
                                  gpu.correlation));
      continue;
    }
    const TraceEvent &launch = *call->second;
    int64_t iteration = iterationOf(plan, launch.start);
    if (iteration >= 0 && plan.isCompute(launch.thread))
      plan.gpuLaunches.push_back(
          {&gpu, iteration, launch.start, launch.end(), launch.thread});
  }
  llvm::sort(plan.gpuLaunches, [](const GpuLaunch &a, const GpuLaunch &b) {
    return std::tie(a.launchStart, a.event->start, a.event->stream) <
           std::tie(b.launchStart, b.event->start, b.event->stream);
  });
  auto launchedBefore = [&](double time) {
    return llvm::partition_point(plan.gpuLaunches,
                                 [&](const GpuLaunch &launch) {
                                   return launch.launchStart < time;
                                 }) -
           plan.gpuLaunches.begin();
  };
  // Cross-stream waits: the first work a thread launches after its
  // cudaStreamWaitEvent waits for the work last launched (in the same
  // iteration) onto another stream before that call (Kineto records neither
  // the event nor the streams): DDP's copy of a bucket waits so for the
  // kernels that computed its gradients. An edge the recorded times
  // contradict (that work ended after the waiting work started) is not one:
  // the event was another's.
  for (auto [thread, waitStart] : streamWaits) {
    int64_t before = launchedBefore(waitStart);
    auto next = llvm::find_if(llvm::drop_begin(plan.gpuLaunches, before),
                              [&, thread = thread](const GpuLaunch &launch) {
                                return launch.thread == thread;
                              });
    if (next == plan.gpuLaunches.end())
      continue;
    GpuLaunch &waiting = *next;
    for (int64_t other = before - 1; other >= 0; --other) {
      const GpuLaunch &candidate = plan.gpuLaunches[other];
      if (candidate.iteration != waiting.iteration)
        break;
      if (candidate.event->stream == waiting.event->stream)
        continue;
      if (candidate.event->end() <= waiting.event->start + kClockTolerance)
        waiting.waitsFor = other;
      break;
    }
  }
  // A collective's bucket copy: the GPU work its launch op launched (on its
  // thread) that ended last.
  for (CommEvent &comm : plan.comms) {
    if (comm.launchOpEnd < 0)
      continue;
    for (int64_t index = launchedBefore(comm.launch);
         index < (int64_t)plan.gpuLaunches.size() &&
         plan.gpuLaunches[index].launchStart <= comm.launchOpEnd;
         ++index) {
      const GpuLaunch &launch = plan.gpuLaunches[index];
      if (launch.thread == comm.launchThread &&
          (comm.copy < 0 ||
           launch.event->end() > plan.gpuLaunches[comm.copy].event->end()))
        comm.copy = index;
    }
  }
  return llvm::Error::success();
}

/// Top-level ops of the compute threads in each iteration, split at
/// launches (of collectives and of GPU work) and around waits for the GPU;
/// the collectives with their launches and waits.
static llvm::Error cutPieces(const RankTrace &trace, RankPlan &plan) {
  const double eps = 1e-9;
  // Per iteration: the collective launch ops (start, end, thread).
  std::vector<std::vector<std::tuple<double, double, int64_t>>> launches(
      plan.iterations.size());
  // cudaStreamWaitEvent calls of the compute threads: (thread, start).
  std::vector<std::pair<int64_t, double>> streamWaits;
  // Per worker thread: its calls that wait for the GPU, by start.
  std::map<int64_t, std::vector<std::pair<double, double>>> workerWaits;
  std::vector<const TraceEvent *> topLevel;
  std::vector<int64_t> topIteration;
  std::vector<double> splits;
  // Every runtime call by correlation id: a launch of GPU work.
  std::map<int64_t, const TraceEvent *> runtimeCalls;
  double coveredUntil = -1e300;
  for (const TraceEvent &event : trace.events) {
    if (event.runtimeCall)
      runtimeCalls[event.correlation] = &event;
    int64_t iteration = iterationOf(plan, event.start);
    if (iteration < 0)
      continue;
    if (!plan.isCompute(event.thread)) {
      if (isCollective(event.name))
        plan.comms.push_back({&event, iteration, event.start});
      else if (event.runtimeCall && isGpuWait(event.name))
        workerWaits[event.thread].push_back({event.start, event.end()});
      continue;
    }
    if (event.runtimeCall && (event.name == "cudaStreamWaitEvent" ||
                              event.name == "cuStreamWaitEvent"))
      streamWaits.push_back({event.thread, event.start});
    if (event.runtimeCall && isGpuWait(event.name)) {
      plan.gpuWaits.push_back({event.start});
      splits.push_back(event.start);
      splits.push_back(event.end());
    }
    if (isIterationMarker(event.name))
      continue;
    if (isLaunch(event.name))
      launches[iteration].push_back({event.start, event.end(), event.thread});
    if (event.start >= coveredUntil - eps &&
        event.end() <= plan.iterations[iteration].second + eps) {
      topLevel.push_back(&event);
      topIteration.push_back(iteration);
      coveredUntil = event.end();
    }
  }
  // The k-th launch of an iteration hands over its k-th collective; without
  // recorded launches a collective is launched where it starts.
  for (int64_t it = 0; it < (int64_t)plan.iterations.size(); ++it) {
    int64_t k = 0;
    int64_t count = llvm::count_if(
        plan.comms, [&](const CommEvent &c) { return c.iteration == it; });
    for (CommEvent &comm : plan.comms)
      if (comm.iteration == it && count == (int64_t)launches[it].size()) {
        std::tie(comm.launch, comm.launchOpEnd, comm.launchThread) =
            launches[it][k++];
      }
  }
  // A worker that copies a CUDA bucket to host memory first waits for the
  // copy (gloo): its transfers begin when that wait returns.
  for (CommEvent &comm : plan.comms) {
    comm.transferStart = comm.event->start;
    for (auto [start, end] : workerWaits[comm.event->thread])
      if (start >= comm.event->start && start <= comm.event->end()) {
        comm.transferStart = end;
        break;
      }
  }
  if (llvm::Error err = linkGpuWork(trace, runtimeCalls, streamWaits, plan))
    return err;
  for (const GpuLaunch &launch : plan.gpuLaunches)
    splits.push_back(launch.launchEnd);
  for (const CommEvent &comm : plan.comms)
    splits.push_back(comm.launch);
  llvm::sort(splits);
  splits.erase(std::unique(splits.begin(), splits.end()), splits.end());
  for (auto [op, event, iteration] : llvm::enumerate(topLevel, topIteration)) {
    double start = event->start;
    for (auto split = llvm::upper_bound(splits, start);
         split != splits.end() && *split < event->end(); ++split) {
      plan.pieces.push_back({event->name, start, *split, iteration,
                             isBackward(event->name), (int64_t)op});
      start = *split;
    }
    plan.pieces.push_back({event->name, start, event->end(), iteration,
                           isBackward(event->name), (int64_t)op});
  }
  // Pieces are sorted by start: a launch belongs to the piece that ends
  // where it returns (the last one starting before), a wait to the piece
  // that starts with it. Split points are the calls' own times, so these
  // compare exactly (a tolerance would vanish on absolute timestamps of a
  // host that has been up for months).
  auto lastStartingBefore = [&](double time) {
    auto it = llvm::partition_point(
        plan.pieces, [&](const Piece &piece) { return piece.start < time; });
    return (int64_t)(it - plan.pieces.begin()) - 1;
  };
  auto startingAt = [&](double time) -> int64_t {
    auto it = llvm::partition_point(
        plan.pieces, [&](const Piece &piece) { return piece.start < time; });
    return it != plan.pieces.end() && it->start == time
               ? it - plan.pieces.begin()
               : -1;
  };
  for (GpuLaunch &launch : plan.gpuLaunches)
    launch.launchPiece = lastStartingBefore(launch.launchEnd);
  for (GpuWait &wait : plan.gpuWaits)
    wait.piece = startingAt(wait.start);
  // A collective depends on the piece that ends where it is launched (or the
  // last one before it); the main thread waits for it in the first piece
  // that starts after it ended and after the backward pass.
  for (CommEvent &comm : plan.comms) {
    for (auto [index, piece] : llvm::enumerate(plan.pieces))
      if (piece.start < comm.launch)
        comm.launchPiece = index;
    double backwardEnd = comm.launch;
    for (const Piece &piece : plan.pieces)
      if (piece.iteration == comm.iteration && piece.backward)
        backwardEnd = std::max(backwardEnd, piece.end);
    double ready = std::max(comm.event->end(), backwardEnd);
    for (auto [index, piece] : llvm::enumerate(plan.pieces))
      if ((int64_t)index > comm.launchPiece && piece.start >= ready - eps) {
        comm.waiter = index;
        break;
      }
    // A worker thread may close its record a while after the main thread's
    // wait returned, but the optimizer step always needs the gradients: the
    // wait is no later than the iteration's step (or its last op).
    int64_t bound = -1;
    for (auto [index, piece] : llvm::enumerate(plan.pieces)) {
      if (piece.iteration != comm.iteration || piece.start < backwardEnd)
        continue;
      bound = index;
      if (llvm::StringRef(piece.name).starts_with("Optimizer.step"))
        break;
    }
    if (bound >= 0 && (comm.waiter < 0 || comm.waiter > bound))
      comm.waiter = bound;
  }
  return llvm::Error::success();
}

/// Allocated bytes over the level at the start of the replayed iterations:
/// the peak, each iteration's own peak, and per piece the level at its start
/// (over its iteration's start) and its largest allocation.
static void measureMemory(const RankTrace &trace, RankPlan &plan) {
  if (trace.memory.empty())
    return;
  int64_t live = 0;
  plan.peak = 0;
  plan.iterationPeaks.assign(plan.iterations.size(), 0);
  std::vector<int64_t> startLevel(plan.iterations.size(), 0);
  std::vector<bool> started(plan.iterations.size(), false);
  auto startIterationsBefore = [&](double time) {
    for (auto [it, span] : llvm::enumerate(plan.iterations))
      if (!started[it] && span.first <= time) {
        started[it] = true;
        startLevel[it] = live;
      }
  };
  size_t piece = 0;
  // Pieces are sorted by start; a memory event belongs to the piece whose
  // span holds it.
  for (const MemoryEvent &change : trace.memory) {
    if (change.time < plan.iterations.front().first ||
        change.time > plan.iterations.back().second)
      continue;
    startIterationsBefore(change.time);
    for (;
         piece < plan.pieces.size() && plan.pieces[piece].start <= change.time;
         ++piece) {
      Piece &p = plan.pieces[piece];
      p.memoryAtStart = live - startLevel[p.iteration];
    }
    live += change.bytes;
    plan.peak = std::max(plan.peak, live);
    int64_t it = iterationOf(plan, change.time);
    if (it >= 0)
      plan.iterationPeaks[it] =
          std::max(plan.iterationPeaks[it], live - startLevel[it]);
    if (piece > 0 && change.time <= plan.pieces[piece - 1].end)
      plan.pieces[piece - 1].largestAllocation =
          std::max(plan.pieces[piece - 1].largestAllocation, change.bytes);
  }
  startIterationsBefore(plan.iterations.back().second);
  for (; piece < plan.pieces.size(); ++piece)
    plan.pieces[piece].memoryAtStart =
        live - startLevel[plan.pieces[piece].iteration];
}

/// Ranks of one job run the same iterations and the same collectives in the
/// same order.
static llvm::Error checkSameJob(llvm::ArrayRef<RankTrace> traces,
                                llvm::ArrayRef<RankPlan> plans) {
  const RankPlan &first = plans.front();
  for (size_t r = 1; r < plans.size(); ++r) {
    const RankPlan &plan = plans[r];
    if (plan.comms.size() != first.comms.size())
      return fail(llvm::formatv("{0} runs {1} collectives, {2} runs {3}: "
                                "traces of different jobs",
                                traces[r].path, plan.comms.size(),
                                traces[0].path, first.comms.size()));
    for (auto [mine, theirs] : llvm::zip(plan.comms, first.comms)) {
      const TraceEvent &a = *mine.event, &b = *theirs.event;
      if (mine.iteration != theirs.iteration || a.name != b.name ||
          a.inputElements != b.inputElements)
        return fail(llvm::formatv(
            "{0}: collective {1} at {2:f6} s differs from {3}'s ({4} at "
            "{5:f6} s): traces of different jobs",
            traces[r].path, a.name, a.start, traces[0].path, b.name, b.start));
    }
  }
  return llvm::Error::success();
}

llvm::Expected<DataflowGraph>
distir::replay::buildDataflowGraph(llvm::ArrayRef<RankTrace> traces,
                                   std::optional<int64_t> iterations) {
  if (iterations && *iterations < 1)
    return fail("the number of iterations must be positive");
  std::vector<RankPlan> plans(traces.size());
  for (auto [trace, plan] : llvm::zip(traces, plans))
    if (llvm::Error err = findIterations(trace, plan))
      return std::move(err);
  DataflowGraph graph;
  if (llvm::Error err =
          selectIterations(traces, iterations, plans, graph.droppedIterations))
    return std::move(err);
  for (auto [trace, plan] : llvm::zip(traces, plans)) {
    if (llvm::Error err = cutPieces(trace, plan))
      return std::move(err);
    findGradients(trace, plan);
    measureMemory(trace, plan);
  }
  if (llvm::Error err = checkSameJob(traces, plans))
    return std::move(err);

  int64_t ranks = traces.size();
  graph.numRanks = ranks;
  graph.numIterations = plans.front().iterations.size();
  std::map<std::tuple<int64_t, int64_t, bool>, int64_t> streamIds;
  auto streamOf = [&](int64_t rank, int64_t thread, bool communication,
                      bool gpu = false) {
    auto [it, inserted] = streamIds.try_emplace({rank, thread, gpu},
                                                (int64_t)graph.streams.size());
    if (inserted)
      graph.streams.push_back({rank, thread, communication, gpu});
    return it->second;
  };
  std::vector<int64_t> lastOfStream;
  auto append = [&](Node node) {
    if (node.stream >= (int64_t)lastOfStream.size())
      lastOfStream.resize(node.stream + 1, -1);
    node.previous = lastOfStream[node.stream];
    lastOfStream[node.stream] = graph.nodes.size();
    graph.nodes.push_back(std::move(node));
    return (int64_t)graph.nodes.size() - 1;
  };

  // Collectives and their transfer nodes first, so that compute nodes can
  // name them.
  for (size_t k = 0; k < plans.front().comms.size(); ++k) {
    const TraceEvent &event = *plans.front().comms[k].event;
    Collective collective;
    collective.name = event.name;
    collective.iteration = plans.front().comms[k].iteration;
    if (!event.inputElements.empty()) {
      collective.elements = 0;
      for (int64_t n : event.inputElements)
        collective.elements += n;
    }
    collective.steps = ringSteps(event.name, ranks);
    graph.collectives.push_back(std::move(collective));
  }
  std::vector<int64_t> firstPiece(ranks);
  for (int64_t r = 0; r < ranks; ++r) {
    int64_t mainStream = streamOf(r, plans[r].mainThread, false);
    firstPiece[r] = graph.nodes.size();
    for (const Piece &piece : plans[r].pieces) {
      Node node;
      node.name = piece.name;
      node.stream = mainStream;
      node.rank = r;
      node.iteration = piece.iteration;
      node.duration = piece.end - piece.start;
      node.measuredStart = piece.start;
      node.backward = piece.backward;
      node.op = piece.op;
      node.memoryAtStart = piece.memoryAtStart;
      node.largestAllocation = piece.largestAllocation;
      append(std::move(node));
    }
  }
  graph.numComputeNodes = graph.nodes.size();
  for (int64_t r = 0; r < ranks; ++r) {
    for (auto [k, comm] : llvm::enumerate(plans[r].comms)) {
      Collective &collective = graph.collectives[k];
      collective.start.push_back(comm.transferStart);
      collective.end.push_back(comm.event->end());
      collective.firstTransfer.push_back(graph.nodes.size());
      int64_t stream = streamOf(r, comm.event->thread, true);
      for (int64_t step = 0; step < collective.steps; ++step) {
        Node node;
        node.name = collective.name;
        node.stream = stream;
        node.rank = r;
        node.iteration = collective.iteration;
        node.communication = true;
        node.collective = k;
        node.step = step;
        node.receiver = (r + 1) % ranks;
        node.duration = -1;
        append(std::move(node));
      }
    }
  }
  // Dependencies and gaps, measured on each rank's own clock.
  for (int64_t r = 0; r < ranks; ++r) {
    const RankPlan &plan = plans[r];
    std::vector<double> waitedUntil(plan.pieces.size(), -1e300);
    for (auto [k, comm] : llvm::enumerate(plan.comms)) {
      const Collective &collective = graph.collectives[k];
      int64_t first = collective.firstTransfer[r];
      Node &step0 = graph.nodes[first];
      double ready = comm.launch;
      if (comm.launchPiece >= 0)
        step0.dependencies.push_back(firstPiece[r] + comm.launchPiece);
      if (step0.previous >= 0) {
        const Node &before = graph.nodes[step0.previous];
        ready = std::max(ready, graph.collectives[before.collective].end[r]);
      }
      // The bucket's copy to host memory (an edge once GPU nodes exist).
      if (comm.copy >= 0)
        ready = std::max(ready, plans[r].gpuLaunches[comm.copy].event->end());
      step0.gap = std::max(0.0, comm.transferStart - ready);
      // -1: the previous rank's transfer, patched below once every rank's
      // transfers exist.
      for (int64_t step = 1; step < collective.steps; ++step)
        graph.nodes[first + step].dependencies.push_back(-1);
      if (comm.waiter >= 0) {
        Node &waiter = graph.nodes[firstPiece[r] + comm.waiter];
        waiter.dependencies.push_back(first + collective.steps - 1);
        waiter.dependencies.push_back(-1 - (int64_t)k); // patched below
        waitedUntil[comm.waiter] =
            std::max(waitedUntil[comm.waiter], comm.event->end());
      }
    }
    // The replay starts where the first iteration starts and ends where the
    // last one ends.
    for (auto [index, piece] : llvm::enumerate(plan.pieces)) {
      double previousEnd =
          index ? plan.pieces[index - 1].end : plan.iterations.front().first;
      double ready = std::max(previousEnd, waitedUntil[index]);
      graph.nodes[firstPiece[r] + index].gap =
          std::max(0.0, piece.start - ready);
    }
  }
  // GPU activity: each CUDA stream of a rank runs its work in launch order,
  // each piece of work after the host call that launched it; a host call
  // that waited for the GPU waits for the work that ended last before it
  // returned, and lasts what it took beyond that.
  int64_t firstGpuNode = graph.nodes.size();
  for (int64_t r = 0; r < ranks; ++r) {
    const RankPlan &plan = plans[r];
    std::map<int64_t, double> streamEnd;
    // (end, node, launching piece)
    std::vector<std::tuple<double, int64_t, int64_t>> finished;
    int64_t firstOfRank = graph.nodes.size();
    for (const GpuLaunch &launch : plan.gpuLaunches) {
      const GpuEvent &gpu = *launch.event;
      Node node;
      node.name = gpu.name;
      node.stream = streamOf(r, gpu.stream, false, /*gpu=*/true);
      node.rank = r;
      node.iteration = launch.iteration;
      node.duration = gpu.duration;
      node.measuredStart = gpu.start;
      if (launch.launchPiece >= 0)
        node.dependencies.push_back(firstPiece[r] + launch.launchPiece);
      auto previous = streamEnd.find(gpu.stream);
      double ready =
          std::max(launch.launchEnd,
                   previous == streamEnd.end() ? -1e300 : previous->second);
      node.gap = std::max(0.0, gpu.start - ready);
      // Waiting for another stream is not a gap.
      if (launch.waitsFor >= 0)
        node.gap = std::max(
            0.0, std::min(node.gap,
                          gpu.start -
                              plan.gpuLaunches[launch.waitsFor].event->end()));
      streamEnd[gpu.stream] = gpu.end();
      finished.push_back(
          {gpu.end(), append(std::move(node)), launch.launchPiece});
    }
    // GPU nodes follow gpuLaunches' order: edges between them and from
    // collectives to their buckets' copies.
    for (auto [index, launch] : llvm::enumerate(plan.gpuLaunches))
      if (launch.waitsFor >= 0)
        graph.nodes[firstOfRank + index].dependencies.push_back(
            firstOfRank + launch.waitsFor);
    for (auto [k, comm] : llvm::enumerate(plan.comms))
      if (comm.copy >= 0)
        graph.nodes[graph.collectives[k].firstTransfer[r]]
            .dependencies.push_back(firstOfRank + comm.copy);
    llvm::sort(finished);
    for (const GpuWait &wait : plan.gpuWaits) {
      if (wait.piece < 0)
        continue;
      const Piece &piece = plan.pieces[wait.piece];
      auto it = llvm::partition_point(finished, [&](const auto &entry) {
        return std::get<0>(entry) <= piece.end + kClockTolerance;
      });
      // Only work launched before the wait began: a synchronous cudaMemcpy
      // launches the copy it waits for, and that copy depends on the call.
      while (it != finished.begin() &&
             std::get<2>(*std::prev(it)) >= wait.piece)
        --it;
      if (it == finished.begin())
        continue;
      auto [gpuEnd, gpuNode, launchPiece] = *std::prev(it);
      Node &waiter = graph.nodes[firstPiece[r] + wait.piece];
      waiter.dependencies.push_back(gpuNode);
      // The piece may end before the call (another split inside it); its
      // gap is the time before it beyond waiting (as for collectives).
      waiter.duration =
          std::max(0.0, piece.end - std::max(piece.start, gpuEnd));
      waiter.gap = std::max(0.0, std::min(waiter.gap, piece.start - gpuEnd));
    }
  }
  graph.numGpuNodes = graph.nodes.size() - firstGpuNode;

  // Ring data dependencies: step j of rank r sends what it received from
  // rank r - 1 at step j - 1; a rank's collective ends with the last
  // transfer it receives.
  for (Node &node : graph.nodes)
    for (int64_t &dependency : node.dependencies) {
      if (dependency >= 0)
        continue;
      if (node.communication) {
        const Collective &collective = graph.collectives[node.collective];
        int64_t sender = (node.rank + ranks - 1) % ranks;
        dependency = collective.firstTransfer[sender] + node.step - 1;
      } else {
        const Collective &collective = graph.collectives[-1 - dependency];
        int64_t sender = (node.rank + ranks - 1) % ranks;
        dependency = collective.firstTransfer[sender] + collective.steps - 1;
      }
    }

  graph.peakAllocatedBytes.resize(ranks);
  graph.iterations.resize(ranks);
  for (int64_t r = 0; r < ranks; ++r) {
    graph.iterations[r] = plans[r].iterations;
    graph.peakAllocatedBytes[r] = plans[r].peak;
    graph.iterationPeakBytes.push_back(plans[r].iterationPeaks);
    graph.gradients.emplace_back();
    for (const auto &iteration : plans[r].gradients) {
      graph.gradients.back().emplace_back();
      for (auto [elements, piece] : iteration)
        graph.gradients.back().back().push_back(
            {elements, firstPiece[r] + piece});
    }
    graph.copyNodes.emplace_back();
    for (const auto &iteration : plans[r].copyPieces) {
      graph.copyNodes.back().emplace_back();
      for (int64_t piece : iteration)
        graph.copyNodes.back().back().push_back(firstPiece[r] + piece);
    }
    graph.syncNodes.emplace_back();
    for (int64_t piece : plans[r].syncPieces)
      graph.syncNodes.back().push_back(piece < 0 ? -1 : firstPiece[r] + piece);
    graph.tails.push_back(
        plans[r].pieces.empty()
            ? 0.0
            : std::max(0.0, plans[r].iterations.back().second -
                                plans[r].pieces.back().end));
    double span =
        plans[r].iterations.back().second - plans[r].iterations.front().first;
    graph.measuredIteration =
        std::max(graph.measuredIteration, span / graph.numIterations);
  }
  return graph;
}
