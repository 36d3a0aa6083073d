//===- Plan.cpp - Strategies and load balancing of a resharding -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// A strategy turns each unit task into jobs (a job is served by one sender);
// a balancer picks the order of the jobs and the sender of each. Every
// candidate is priced by list-scheduling its transfers over the devices'
// communication streams and the shared links they hold, the rule the
// simulator applies under link contention, so the predicted time of a plan
// is the simulated time of its emitted program's communication.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/Reshard.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <limits>
#include <random>

using namespace mlir;
using namespace distir;
using namespace distir::reshard;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

llvm::StringRef reshard::stringifyStrategy(Strategy strategy) {
  switch (strategy) {
  case Strategy::SendRecv:
    return "send-recv";
  case Strategy::LocalAllGather:
    return "local-allgather";
  case Strategy::GlobalAllGather:
    return "global-allgather";
  case Strategy::Broadcast:
    return "broadcast";
  }
  llvm_unreachable("unknown strategy");
}

std::optional<Strategy> reshard::symbolizeStrategy(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Strategy>>(name)
      .Case("send-recv", Strategy::SendRecv)
      .Case("local-allgather", Strategy::LocalAllGather)
      .Case("global-allgather", Strategy::GlobalAllGather)
      .Case("broadcast", Strategy::Broadcast)
      .Default(std::nullopt);
}

llvm::ArrayRef<Strategy> reshard::getAllStrategies() {
  static const Strategy all[] = {Strategy::SendRecv, Strategy::LocalAllGather,
                                 Strategy::GlobalAllGather,
                                 Strategy::Broadcast};
  return all;
}

llvm::StringRef reshard::stringifyBalancer(Balancer balancer) {
  switch (balancer) {
  case Balancer::None:
    return "none";
  case Balancer::LongestFirst:
    return "lpt";
  case Balancer::Greedy:
    return "greedy";
  case Balancer::DepthFirst:
    return "dfs";
  case Balancer::Random:
    return "random";
  case Balancer::Ensemble:
    return "ensemble";
  }
  llvm_unreachable("unknown balancer");
}

std::optional<Balancer> reshard::symbolizeBalancer(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Balancer>>(name)
      .Case("none", Balancer::None)
      .Case("lpt", Balancer::LongestFirst)
      .Case("greedy", Balancer::Greedy)
      .Case("dfs", Balancer::DepthFirst)
      .Case("random", Balancer::Random)
      .Case("ensemble", Balancer::Ensemble)
      .Default(std::nullopt);
}

//===----------------------------------------------------------------------===//
// Pricing
//===----------------------------------------------------------------------===//

namespace {
/// When each resource is free: device d's communication stream is -1 - d,
/// a shared link its CollectiveCostModel::getHeldLinks id (>= 0).
struct ScheduleState {
  llvm::DenseMap<int64_t, double> free;
  double makespan = 0;
};

/// Prices transfers one after another on top of a state.
class Pricer {
public:
  Pricer(const CollectiveCostModel &model, int64_t elementBytes)
      : model(model), elementBytes(elementBytes) {}

  double getBytes(const Transfer &transfer) const {
    return static_cast<double>(getVolume(transfer.box)) *
           static_cast<double>(elementBytes);
  }

  /// The resources `transfer` holds and its duration, computed once per
  /// (kind, group, bytes): the balancers price the same sends many times.
  struct Cost {
    SmallVector<int64_t> resources;
    double time = 0;
  };
  const Cost &getCost(const Transfer &transfer) const {
    double bytes = getBytes(transfer);
    SmallVector<int64_t, 8> key = {static_cast<int64_t>(transfer.kind),
                                   llvm::bit_cast<int64_t>(bytes)};
    llvm::append_range(key, transfer.group);
    auto [it, inserted] =
        costs.try_emplace(StringRef(reinterpret_cast<const char *>(key.data()),
                                    key.size() * sizeof(int64_t)));
    if (inserted) {
      for (int64_t device : transfer.group)
        it->second.resources.push_back(-1 - device);
      llvm::append_range(it->second.resources,
                         model.getHeldLinks(transfer.kind, transfer.group));
      it->second.time = model.getTime(transfer.kind, transfer.group, bytes);
    }
    return it->second;
  }

  /// Places `transfer` on `state`; returns its end.
  double place(ScheduleState &state, Transfer &transfer) const {
    const Cost &cost = getCost(transfer);
    double start = 0;
    for (int64_t resource : cost.resources)
      start = std::max(start, state.free.lookup(resource));
    transfer.start = start;
    transfer.end = start + cost.time;
    for (int64_t resource : cost.resources)
      state.free[resource] = transfer.end;
    state.makespan = std::max(state.makespan, transfer.end);
    return transfer.end;
  }

  /// The end of the last of `transfers` if placed on `state`, which is left
  /// unchanged.
  double tryPlace(const ScheduleState &state,
                  ArrayRef<Transfer> transfers) const {
    llvm::SmallDenseMap<int64_t, double, 16> overlay;
    double end = 0;
    for (const Transfer &transfer : transfers) {
      const Cost &cost = getCost(transfer);
      double start = 0;
      for (int64_t resource : cost.resources) {
        auto it = overlay.find(resource);
        start =
            std::max(start, it != overlay.end() ? it->second
                                                : state.free.lookup(resource));
      }
      end = start + cost.time;
      for (int64_t resource : cost.resources)
        overlay[resource] = end;
    }
    return end;
  }

private:
  const CollectiveCostModel &model;
  int64_t elementBytes;
  mutable llvm::StringMap<Cost> costs;
};
} // namespace

struct SendRecvEstimator::Send {
  /// Time fixed + perByte x bytes (the cost model's time of one group is
  /// affine in the bytes).
  double fixed = 0, perByte = 0;
  /// The send's slots in `load`, Cache::slots[firstSlot, + numSlots):
  /// resource r (a stream -1 - d or a link id >= 0) is slot 2(-1 - r) or
  /// 2r + 1. One flat pool, so that comparing candidates reads no heap
  /// blocks of their own (the cost graph adds ~10^8 pieces).
  uint32_t firstSlot = 0, numSlots = 0;

  /// When the send would end if it started once all its resources are free.
  double endOn(const int64_t *slots, const double *load, double bytes) const {
    double end = 0;
    for (const int64_t *slot = slots + firstSlot, *last = slot + numSlots;
         slot != last; ++slot)
      end = std::max(end, load[*slot]);
    return end + (fixed + perByte * bytes);
  }
};

struct SendRecvEstimator::Cache {
  std::vector<Send> sends;
  std::vector<int64_t> slots;
  /// Index in `sends` (+1; 0: not priced yet) of each device pair: a flat
  /// table (sender * devices + receiver) up to kFlatDevices devices, a map
  /// beyond.
  static constexpr int64_t kFlatDevices = 2048;
  std::vector<uint32_t> flat;
  llvm::DenseMap<uint64_t, uint32_t> sparse;
  int64_t devices = 0;
  uint32_t &slotOf(int64_t sender, int64_t receiver) {
    if (devices > kFlatDevices)
      return sparse[(uint64_t(sender) << 32) | uint64_t(receiver)];
    if (flat.empty())
      flat.assign(devices * devices, 0);
    return flat[sender * devices + receiver];
  }
  /// Busy time of each slot in the current estimate, and the slots used.
  std::vector<double> load;
  SmallVector<int64_t> touched;
};

SendRecvEstimator::SendRecvEstimator(const CollectiveCostModel &model)
    : model(model), cache(std::make_unique<Cache>()) {
  cache->devices = model.getCluster().getNumDevices();
}
SendRecvEstimator::~SendRecvEstimator() = default;

void SendRecvEstimator::reset() {
  for (int64_t slot : cache->touched)
    cache->load[slot] = 0;
  cache->touched.clear();
  busiest = 0;
}

uint32_t SendRecvEstimator::getSendId(int64_t sender, int64_t receiver) {
  uint32_t &id = cache->slotOf(sender, receiver);
  if (id)
    return id - 1;
  id = static_cast<uint32_t>(cache->sends.size()) + 1;
  Send send;
  SmallVector<int64_t> group = {sender, receiver};
  send.firstSlot = static_cast<uint32_t>(cache->slots.size());
  cache->slots.push_back(2 * sender);
  cache->slots.push_back(2 * receiver);
  for (int64_t link : model.getHeldLinks(CollectiveKind::SendRecv, group))
    cache->slots.push_back(2 * link + 1);
  send.numSlots = static_cast<uint32_t>(cache->slots.size()) - send.firstSlot;
  for (int64_t slot : ArrayRef(cache->slots).drop_front(send.firstSlot))
    if (slot >= static_cast<int64_t>(cache->load.size()))
      cache->load.resize(slot + 1, 0.0);
  constexpr double kProbe = 1 << 30;
  send.fixed = model.getTime(CollectiveKind::SendRecv, group, 0);
  send.perByte =
      (model.getTime(CollectiveKind::SendRecv, group, kProbe) - send.fixed) /
      kProbe;
  cache->sends.push_back(send);
  return id - 1;
}

void SendRecvEstimator::charge(uint32_t id, double bytes) {
  const Send &send = cache->sends[id];
  double time = send.fixed + send.perByte * bytes;
  const int64_t *slot = cache->slots.data() + send.firstSlot;
  const int64_t *last = slot + send.numSlots;
  // Locals, so that the loop does not store through `this` each time.
  double *load = cache->load.data(), top = busiest;
  for (; slot != last; ++slot) {
    double &busy = load[*slot];
    if (busy == 0)
      cache->touched.push_back(*slot);
    busy += time;
    top = std::max(top, busy);
  }
  busiest = top;
}

void SendRecvEstimator::add(ArrayRef<int64_t> senders, int64_t receiver,
                            double bytes) {
  if (senders.empty())
    return;
  if (senders.size() == 1) {
    charge(getSendId(senders.front(), receiver), bytes);
    return;
  }
  if (senders.size() == 2) {
    // Looked up before either is read: creating one may move the others.
    uint32_t first = getSendId(senders[0], receiver);
    addEither(first, getSendId(senders[1], receiver), bytes);
    return;
  }
  // Sends are looked up (and created) before any is compared: creating
  // one may move the others in the cache.
  SmallVector<uint32_t, 4> ids;
  for (int64_t sender : senders)
    ids.push_back(getSendId(sender, receiver));
  uint32_t best = ids.front();
  double bestEnd = std::numeric_limits<double>::infinity();
  for (uint32_t id : ids) {
    double end =
        cache->sends[id].endOn(cache->slots.data(), cache->load.data(), bytes);
    if (end < bestEnd) {
      best = id;
      bestEnd = end;
    }
  }
  charge(best, bytes);
}

void SendRecvEstimator::addEither(uint32_t first, uint32_t second,
                                  double bytes) {
  addEach(Choice{first, second, bytes});
}

void SendRecvEstimator::addEach(ArrayRef<Choice> choices) {
  const int64_t *slots = cache->slots.data();
  for (const Choice &choice : choices) {
    if (choice.first == choice.second) {
      charge(choice.first, choice.bytes);
      continue;
    }
    const double *load = cache->load.data();
    charge(cache->sends[choice.second].endOn(slots, load, choice.bytes) <
                   cache->sends[choice.first].endOn(slots, load, choice.bytes)
               ? choice.second
               : choice.first,
           choice.bytes);
  }
}

double SendRecvEstimator::estimate(const Problem &problem) {
  reset();
  for (const UnitTask &task : problem.tasks)
    for (int64_t receiver : task.receivers)
      add(task.senders, receiver, task.bytes);
  return busiest;
}

double reshard::schedulePlan(MutableArrayRef<Transfer> transfers,
                             const CollectiveCostModel &model,
                             int64_t elementBytes) {
  Pricer pricer(model, elementBytes);
  ScheduleState state;
  for (Transfer &transfer : transfers)
    pricer.place(state, transfer);
  return state.makespan;
}

//===----------------------------------------------------------------------===//
// Strategies: tasks to jobs, jobs to transfers
//===----------------------------------------------------------------------===//

namespace {
/// Transfers served by one sender chosen among the task's holders.
struct Job {
  int64_t task;
  SmallVector<int64_t> receivers;
  double bytes;
};
} // namespace

/// The host (outermost-level unit) of a device.
static int64_t getHost(const Cluster &cluster, int64_t device) {
  int64_t below = 1;
  for (size_t l = 1; l < cluster.levels.size(); ++l)
    below *= cluster.levels[l].size;
  return device / below;
}

static SmallVector<Job> getJobs(const Problem &problem, Strategy strategy,
                                const Cluster &cluster) {
  SmallVector<Job> jobs;
  for (int64_t t = 0, e = problem.tasks.size(); t < e; ++t) {
    const UnitTask &task = problem.tasks[t];
    if (task.receivers.empty())
      continue;
    auto add = [&](ArrayRef<int64_t> receivers) {
      jobs.push_back({t, SmallVector<int64_t>(receivers), task.bytes});
    };
    switch (strategy) {
    case Strategy::SendRecv:
      for (int64_t receiver : task.receivers)
        add(receiver);
      break;
    case Strategy::Broadcast:
    case Strategy::GlobalAllGather:
      add(task.receivers);
      break;
    case Strategy::LocalAllGather: {
      // Receivers grouped by host, hosts in order of first receiver.
      SmallVector<int64_t> hosts;
      for (int64_t receiver : task.receivers)
        if (!llvm::is_contained(hosts, getHost(cluster, receiver)))
          hosts.push_back(getHost(cluster, receiver));
      for (int64_t host : hosts) {
        SmallVector<int64_t> group;
        for (int64_t receiver : task.receivers)
          if (getHost(cluster, receiver) == host)
            group.push_back(receiver);
        add(group);
      }
      break;
    }
    }
  }
  return jobs;
}

/// The dimension an all-gather of `box` over `parts` members concatenates
/// along: the longest one that divides evenly (the first on ties).
static std::optional<int64_t> getGatherDim(const Box &box, int64_t parts) {
  std::optional<int64_t> best;
  for (auto [d, range] : llvm::enumerate(box)) {
    int64_t extent = range.second - range.first;
    if (extent % parts == 0 &&
        (!best || extent > box[*best].second - box[*best].first))
      best = static_cast<int64_t>(d);
  }
  return best;
}

static bool usesAllGather(Strategy strategy) {
  return strategy == Strategy::LocalAllGather ||
         strategy == Strategy::GlobalAllGather;
}

static SmallVector<Transfer> getTransfers(const Problem &problem,
                                          Strategy strategy, const Job &job,
                                          int64_t sender) {
  const Box &box = problem.tasks[job.task].box;
  SmallVector<Transfer> transfers;
  auto send = [&](int64_t to, Box part) {
    Transfer transfer;
    transfer.kind = CollectiveKind::SendRecv;
    transfer.group = {sender, to};
    transfer.box = std::move(part);
    transfer.task = job.task;
    transfers.push_back(std::move(transfer));
  };
  int64_t k = static_cast<int64_t>(job.receivers.size());
  if (k == 1) {
    send(job.receivers.front(), box);
    return transfers;
  }
  if (strategy == Strategy::Broadcast) {
    Transfer transfer;
    transfer.kind = CollectiveKind::Broadcast;
    transfer.group.push_back(sender);
    llvm::append_range(transfer.group, job.receivers);
    transfer.box = box;
    transfer.task = job.task;
    transfers.push_back(std::move(transfer));
    return transfers;
  }
  assert(usesAllGather(strategy) && "send-recv jobs have one receiver");
  int64_t dim = *getGatherDim(box, k);
  int64_t lo = box[dim].first, step = (box[dim].second - lo) / k;
  // Parts come from the holders in turn, starting at the chosen sender, so
  // that replicated sources send in parallel (Megatron's scatter-gather of
  // activations between stages).
  ArrayRef<int64_t> holders = problem.tasks[job.task].senders;
  size_t first = llvm::find(holders, sender) - holders.begin();
  for (auto [j, receiver] : llvm::enumerate(job.receivers)) {
    Box part = box;
    part[dim] = {lo + static_cast<int64_t>(j) * step,
                 lo + static_cast<int64_t>(j + 1) * step};
    int64_t from = holders[(first + j) % holders.size()];
    Transfer transfer;
    transfer.kind = CollectiveKind::SendRecv;
    transfer.group = {from, receiver};
    transfer.box = std::move(part);
    transfer.task = job.task;
    transfers.push_back(std::move(transfer));
  }
  Transfer gather;
  gather.kind = CollectiveKind::AllGather;
  gather.group = job.receivers;
  gather.box = box;
  gather.dim = dim;
  gather.task = job.task;
  transfers.push_back(std::move(gather));
  return transfers;
}

std::optional<std::string> reshard::whyNotApplicable(const Problem &problem,
                                                     Strategy strategy,
                                                     const Cluster &cluster) {
  if (!usesAllGather(strategy))
    return std::nullopt;
  for (const Job &job : getJobs(problem, strategy, cluster)) {
    int64_t k = static_cast<int64_t>(job.receivers.size());
    if (k > 1 && !getGatherDim(problem.tasks[job.task].box, k)) {
      std::string shape;
      llvm::raw_string_ostream os(shape);
      llvm::interleave(
          problem.tasks[job.task].box, os,
          [&](auto range) { os << range.second - range.first; }, "x");
      return "no dimension of the " + shape + " piece divides into " +
             std::to_string(k) + " equal parts";
    }
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Balancers
//===----------------------------------------------------------------------===//

namespace {
/// An order of the jobs and a sender for each.
using Choice = SmallVector<std::pair<int64_t, int64_t>>;

class Balancing {
public:
  Balancing(const Problem &problem, Strategy strategy,
            const CollectiveCostModel &model, const PlanOptions &options)
      : problem(problem), strategy(strategy),
        pricer(model, problem.elementBytes), options(options),
        jobs(getJobs(problem, strategy, model.getCluster())) {
    // Largest first, then decomposition order: the longest-processing-time
    // order the greedy and the search start from.
    for (int64_t j = 0, e = jobs.size(); j < e; ++j)
      bySize.push_back(j);
    llvm::sort(bySize, [&](int64_t a, int64_t b) {
      if (jobs[a].bytes != jobs[b].bytes)
        return jobs[a].bytes > jobs[b].bytes;
      return a < b;
    });
  }

  double price(const Choice &choice) const {
    ScheduleState state;
    for (auto [job, sender] : choice)
      for (Transfer &transfer : transfersOf(job, sender))
        pricer.place(state, transfer);
    return state.makespan;
  }

  SmallVector<Transfer> transfersOf(int64_t job, int64_t sender) const {
    return getTransfers(problem, strategy, jobs[job], sender);
  }

  Choice none() const {
    Choice choice;
    for (int64_t j = 0, e = jobs.size(); j < e; ++j)
      choice.push_back({j, problem.tasks[jobs[j].task].senders.front()});
    return choice;
  }

  /// The sender of `job` that finishes first on `state`, and when.
  std::pair<int64_t, double> bestSender(const ScheduleState &state,
                                        int64_t job) const {
    int64_t best = -1;
    double bestEnd = std::numeric_limits<double>::infinity();
    for (int64_t sender : problem.tasks[jobs[job].task].senders) {
      double end = pricer.tryPlace(state, transfersOf(job, sender));
      if (end < bestEnd) {
        best = sender;
        bestEnd = end;
      }
    }
    return {best, bestEnd};
  }

  /// Jobs the greedy compares at each step (the first in size order):
  /// bounds its work at jobs x window x senders.
  static constexpr size_t kWindow = 256;

  /// The greedy's plan, computed once (the ensemble and the depth-first
  /// search, which starts from it, both need it).
  const Choice &greedy() {
    if (!greedyChoice) {
      ScheduleState state;
      SmallVector<int64_t> remaining(bySize);
      greedyChoice.emplace();
      finishGreedily(state, remaining, *greedyChoice);
    }
    return *greedyChoice;
  }

  /// Appends the rest of `remaining` to `choice` by the greedy's rule.
  void finishGreedily(ScheduleState &state, SmallVector<int64_t> &remaining,
                      Choice &choice) const {
    while (!remaining.empty()) {
      size_t bestIndex = 0;
      std::pair<int64_t, double> best = {-1, 0};
      for (size_t i = 0, e = std::min(remaining.size(), kWindow); i < e; ++i) {
        std::pair<int64_t, double> candidate = bestSender(state, remaining[i]);
        if (best.first < 0 || candidate.second < best.second) {
          best = candidate;
          bestIndex = i;
        }
      }
      int64_t job = remaining[bestIndex];
      remaining.erase(remaining.begin() + bestIndex);
      choice.push_back({job, best.first});
      for (Transfer &transfer : transfersOf(job, best.first))
        pricer.place(state, transfer);
    }
  }

  /// Longest processing time first: jobs by size, each from the sender
  /// that finishes it first on the schedule so far.
  Choice longestFirst() const {
    ScheduleState state;
    Choice choice;
    for (int64_t job : bySize) {
      int64_t sender = bestSender(state, job).first;
      choice.push_back({job, sender});
      for (Transfer &transfer : transfersOf(job, sender))
        pricer.place(state, transfer);
    }
    return choice;
  }

  Choice random() const {
    std::mt19937_64 rng(options.seed);
    Choice best;
    double bestTime = std::numeric_limits<double>::infinity();
    for (int64_t round = 0; round < options.randomRounds; ++round) {
      SmallVector<int64_t> order(bySize);
      std::shuffle(order.begin(), order.end(), rng);
      ScheduleState state;
      Choice choice;
      for (int64_t job : order) {
        int64_t sender = bestSender(state, job).first;
        choice.push_back({job, sender});
        for (Transfer &transfer : transfersOf(job, sender))
          pricer.place(state, transfer);
      }
      if (state.makespan < bestTime) {
        bestTime = state.makespan;
        best = std::move(choice);
      }
    }
    return best;
  }

  /// Branches per search node: the (job, sender) pairs that finish first.
  static constexpr size_t kBranching = 3;
  /// The search runs on problems of at most this many jobs (its recursion
  /// is one level per job); larger ones keep the greedy's plan.
  static constexpr size_t kMaxDepth = 256;

  Choice depthFirst() {
    best = greedy();
    bestTime = price(best);
    if (jobs.size() > kMaxDepth)
      return best;
    visited = 0;
    SmallVector<int64_t> remaining(bySize);
    Choice prefix;
    search(ScheduleState(), remaining, prefix);
    return best;
  }

private:
  void search(const ScheduleState &state, SmallVector<int64_t> &remaining,
              Choice &prefix) {
    if (state.makespan >= bestTime)
      return;
    if (remaining.empty()) {
      best = prefix;
      bestTime = state.makespan;
      return;
    }
    // Candidates: each remaining job (in the greedy's window) with its best
    // sender, earliest end first.
    SmallVector<std::tuple<double, size_t, int64_t>> candidates;
    for (size_t i = 0, e = std::min(remaining.size(), kWindow); i < e; ++i) {
      auto [sender, end] = bestSender(state, remaining[i]);
      candidates.push_back({end, i, sender});
    }
    llvm::sort(candidates);
    for (size_t c = 0; c < std::min(candidates.size(), kBranching); ++c) {
      if (++visited > options.searchBudget)
        return;
      auto [end, i, sender] = candidates[c];
      int64_t job = remaining[i];
      ScheduleState next = state;
      for (Transfer &transfer : transfersOf(job, sender))
        pricer.place(next, transfer);
      remaining.erase(remaining.begin() + i);
      prefix.push_back({job, sender});
      search(next, remaining, prefix);
      prefix.pop_back();
      remaining.insert(remaining.begin() + i, job);
    }
  }

  const Problem &problem;
  Strategy strategy;
  Pricer pricer;
  const PlanOptions &options;
  SmallVector<Job> jobs;
  SmallVector<int64_t> bySize;
  std::optional<Choice> greedyChoice;
  Choice best;
  double bestTime = 0;
  int64_t visited = 0;
};
} // namespace

std::optional<Plan> reshard::planFastest(const Problem &problem,
                                         Balancer balancer,
                                         const CollectiveCostModel &model,
                                         std::optional<Strategy> only,
                                         std::string *whyNot) {
  std::optional<Plan> best;
  for (Strategy strategy : getAllStrategies()) {
    if (only && strategy != *only)
      continue;
    if (std::optional<std::string> why =
            whyNotApplicable(problem, strategy, model.getCluster())) {
      if (only && whyNot)
        *whyNot = *why;
      continue;
    }
    Plan plan = planResharding(problem, strategy, balancer, model);
    if (!best || plan.time < best->time)
      best = std::move(plan);
  }
  return best;
}

Plan reshard::planResharding(const Problem &problem, Strategy strategy,
                             Balancer balancer,
                             const CollectiveCostModel &model,
                             const PlanOptions &options) {
  Balancing balancing(problem, strategy, model, options);
  auto run = [&](Balancer which) -> Choice {
    switch (which) {
    case Balancer::None:
      return balancing.none();
    case Balancer::LongestFirst:
      return balancing.longestFirst();
    case Balancer::Greedy:
      return balancing.greedy();
    case Balancer::DepthFirst:
      return balancing.depthFirst();
    case Balancer::Random:
      return balancing.random();
    case Balancer::Ensemble:
      break;
    }
    llvm_unreachable("the ensemble is not one balancer");
  };
  Plan plan;
  plan.strategy = strategy;
  plan.balancer = balancer;
  Choice choice;
  if (balancer == Balancer::Ensemble) {
    double bestTime = std::numeric_limits<double>::infinity();
    for (Balancer which :
         {Balancer::None, Balancer::LongestFirst, Balancer::Greedy,
          Balancer::DepthFirst, Balancer::Random}) {
      Choice candidate = run(which);
      double time = balancing.price(candidate);
      if (time < bestTime) {
        bestTime = time;
        choice = std::move(candidate);
        plan.chosen = which;
      }
    }
  } else {
    choice = run(balancer);
    plan.chosen = balancer;
  }
  for (auto [job, sender] : choice)
    llvm::append_range(plan.transfers, balancing.transfersOf(job, sender));
  plan.time = schedulePlan(plan.transfers, model, problem.elementBytes);
  Pricer pricer(model, problem.elementBytes);
  for (const Transfer &transfer : plan.transfers)
    if (!model.getHeldLinks(transfer.kind, transfer.group).empty())
      plan.sharedLinkBytes += pricer.getBytes(transfer);
  return plan;
}
