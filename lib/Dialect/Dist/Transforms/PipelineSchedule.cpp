//===- PipelineSchedule.cpp - dist-dtp's task order and device order ------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <set>

using namespace llvm;
using namespace distir::dist;

std::optional<PipelineSchedule>
distir::dist::symbolizePipelineSchedule(StringRef name) {
  return StringSwitch<std::optional<PipelineSchedule>>(name)
      .Case("gpipe", PipelineSchedule::GPipe)
      .Case("1f1b", PipelineSchedule::OneFOneB)
      .Case("eager-1f1b", PipelineSchedule::EagerOneFOneB)
      .Case("pipedream", PipelineSchedule::PipeDream)
      .Default(std::nullopt);
}

/// PipeDream's 1F1B as the published DistIR implements it: at each time
/// step every stage takes a ready task, alternating between forward and
/// backward whenever both kinds are ready (a forward first), the lowest
/// microbatch of the kind. A task is ready when what it depends on finished
/// in an earlier step. Stage 0 of two runs F0 F1 F2 B0 F3 B1 ... for K = 4.
static std::vector<std::vector<PipelineTask>> getPipeDreamSteps(int64_t pp,
                                                                int64_t k) {
  std::set<PipelineTask> done;
  std::vector<int64_t> remaining(pp, 2 * k);
  std::vector<bool> lastForward(pp, false), updated(pp, false);
  std::vector<std::vector<PipelineTask>> steps;
  auto isDone = [&](int64_t s, int64_t m, PipelinePhase p) {
    return done.count({s, m, p}) > 0;
  };
  int64_t left = pp * (2 * k + 1);
  while (left > 0) {
    std::vector<PipelineTask> step;
    for (int64_t s = 0; s < pp; ++s) {
      if (updated[s])
        continue;
      if (remaining[s] == 0) {
        step.push_back({s, -1, PipelinePhase::Update});
        updated[s] = true;
        continue;
      }
      std::optional<int64_t> fwd, bwd;
      for (int64_t m = 0; m < k && (!fwd || !bwd); ++m) {
        if (!fwd && !isDone(s, m, PipelinePhase::Forward) &&
            (s == 0 || isDone(s - 1, m, PipelinePhase::Forward)))
          fwd = m;
        if (!bwd && !isDone(s, m, PipelinePhase::Backward) &&
            isDone(s, m, PipelinePhase::Forward) &&
            (s + 1 == pp || isDone(s + 1, m, PipelinePhase::Backward)))
          bwd = m;
      }
      bool backward = bwd && (lastForward[s] || !fwd);
      if (!backward && !fwd)
        continue;
      step.push_back(
          {s, backward ? *bwd : *fwd,
           backward ? PipelinePhase::Backward : PipelinePhase::Forward});
      lastForward[s] = !backward;
      --remaining[s];
    }
    // Some stage always has a ready task; a schedule cut short here would
    // silently drop microbatches, so a bug in the rules stops loudly.
    if (step.empty())
      llvm::report_fatal_error("1F1B schedule: no stage has a ready task");
    for (const PipelineTask &t : step)
      done.insert(t);
    left -= static_cast<int64_t>(step.size());
    steps.push_back(std::move(step));
  }
  return steps;
}

/// Per-stage task sequences merged into time steps: at each step, every
/// stage runs its next task if what it depends on finished in an earlier
/// step (forward m on stage s needs forward m on s-1; backward m on s needs
/// backward m on s+1). This reproduces the GPipe and 1F1B orders of the
/// DistIR paper.
std::vector<std::vector<PipelineTask>>
distir::dist::getPipelineSteps(int64_t pp, int64_t k,
                               PipelineSchedule schedule) {
  if (schedule == PipelineSchedule::PipeDream)
    return getPipeDreamSteps(pp, k);
  std::vector<std::vector<PipelineTask>> perStage(pp);
  for (int64_t s = 0; s < pp; ++s) {
    std::vector<PipelineTask> &seq = perStage[s];
    auto fwd = [&](int64_t m) {
      seq.push_back({s, m, PipelinePhase::Forward});
    };
    auto bwd = [&](int64_t m) {
      seq.push_back({s, m, PipelinePhase::Backward});
    };
    int64_t warmup = k;
    // One stage: no pipeline to fill, and gradient accumulation runs each
    // microbatch's forward then its backward (PyTorch DDP, Megatron with
    // pp = 1), so only one microbatch's activations are alive.
    if (pp == 1)
      warmup = 0;
    else if (schedule == PipelineSchedule::OneFOneB)
      warmup = std::min(k, pp - s - 1);
    else if (schedule == PipelineSchedule::EagerOneFOneB)
      warmup = std::min(k, 2 * (pp - s) - 1);
    int64_t f = 0, b = 0;
    for (; f < warmup; ++f)
      fwd(f);
    while (f < k) {
      fwd(f++);
      bwd(b++);
    }
    while (b < k)
      bwd(b++);
    seq.push_back({s, -1, PipelinePhase::Update});
  }
  std::set<PipelineTask> done;
  std::vector<size_t> next(pp, 0);
  std::vector<std::vector<PipelineTask>> steps;
  size_t scheduled = 0;
  auto ready = [&](const PipelineTask &t) {
    if (t.phase == PipelinePhase::Forward && t.stage > 0)
      return done.count({t.stage - 1, t.microbatch, PipelinePhase::Forward}) >
             0;
    if (t.phase == PipelinePhase::Backward && t.stage + 1 < pp)
      return done.count({t.stage + 1, t.microbatch, PipelinePhase::Backward}) >
             0;
    return true;
  };
  while (scheduled < static_cast<size_t>(pp) * (2 * k + 1)) {
    std::vector<PipelineTask> stepTasks;
    for (int64_t s = 0; s < pp; ++s)
      if (next[s] < perStage[s].size() && ready(perStage[s][next[s]]))
        stepTasks.push_back(perStage[s][next[s]++]);
    if (stepTasks.empty())
      llvm::report_fatal_error("pipeline schedule: no stage has a ready task "
                               "(the per-stage orders deadlock)");
    for (const PipelineTask &t : stepTasks)
      done.insert(t);
    scheduled += stepTasks.size();
    steps.push_back(std::move(stepTasks));
  }
  return steps;
}

std::vector<PipelineTask>
distir::dist::getPipelineOrder(int64_t pp, int64_t k,
                               PipelineSchedule schedule) {
  std::vector<PipelineTask> order;
  for (std::vector<PipelineTask> &step : getPipelineSteps(pp, k, schedule))
    llvm::append_range(order, step);
  return order;
}

std::string distir::dist::stringifyPipelineTask(const PipelineTask &task) {
  const char *phase = task.phase == PipelinePhase::Forward    ? " forward"
                      : task.phase == PipelinePhase::Backward ? " backward"
                                                              : " update";
  return "stage " + std::to_string(task.stage) + phase +
         (task.microbatch >= 0 ? " " + std::to_string(task.microbatch) : "");
}

std::optional<PipelineTask> distir::dist::parsePipelineTask(StringRef text) {
  SmallVector<StringRef, 4> words;
  text.split(words, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  PipelineTask task{0, -1, PipelinePhase::Update};
  if (words.size() < 3 || words[0] != "stage" ||
      words[1].getAsInteger(10, task.stage))
    return std::nullopt;
  std::optional<PipelinePhase> phase =
      StringSwitch<std::optional<PipelinePhase>>(words[2])
          .Case("forward", PipelinePhase::Forward)
          .Case("backward", PipelinePhase::Backward)
          .Case("update", PipelinePhase::Update)
          .Default(std::nullopt);
  if (!phase)
    return std::nullopt;
  task.phase = *phase;
  bool isUpdate = *phase == PipelinePhase::Update;
  if (words.size() != (isUpdate ? 3u : 4u))
    return std::nullopt;
  if (!isUpdate && words[3].getAsInteger(10, task.microbatch))
    return std::nullopt;
  return task;
}

std::optional<DeviceOrder>
distir::dist::parseDeviceOrder(StringRef mapping, int64_t dp, int64_t tp,
                               int64_t pp, std::string &error) {
  DeviceOrder order;
  if (mapping == "tp-inner" || mapping == "dp-inner") {
    bool tpInner = mapping == "tp-inner";
    order = {{tpInner ? GridAxis::TP : GridAxis::DP, tpInner ? tp : dp},
             {tpInner ? GridAxis::DP : GridAxis::TP, tpInner ? dp : tp},
             {GridAxis::PP, pp}};
    return order;
  }
  // AXIS:FACTOR,... least significant first, e.g. tp:4,dp:2,pp:2,dp:2.
  int64_t product[3] = {1, 1, 1};
  SmallVector<StringRef> digits;
  mapping.split(digits, ',');
  for (StringRef digit : digits) {
    auto [name, factorText] = digit.trim().split(':');
    std::optional<GridAxis> axis =
        StringSwitch<std::optional<GridAxis>>(name.trim())
            .Case("dp", GridAxis::DP)
            .Case("tp", GridAxis::TP)
            .Case("pp", GridAxis::PP)
            .Default(std::nullopt);
    int64_t factor = 0;
    if (!axis || factorText.trim().getAsInteger(10, factor) || factor < 1) {
      error = ("bad mapping '" + mapping +
               "' (expected tp-inner, dp-inner or AXIS:FACTOR,... with "
               "AXIS in dp, tp, pp, least significant first)")
                  .str();
      return std::nullopt;
    }
    order.push_back({*axis, factor});
    product[static_cast<int>(*axis)] *= factor;
  }
  if (product[0] != dp || product[1] != tp || product[2] != pp) {
    error =
        ("mapping '" + mapping + "' has dp, tp, pp = " + Twine(product[0]) +
         ", " + Twine(product[1]) + ", " + Twine(product[2]) +
         "; the degrees are " + Twine(dp) + ", " + Twine(tp) + ", " + Twine(pp))
            .str();
    return std::nullopt;
  }
  return order;
}

int64_t distir::dist::getDeviceId(const DeviceOrder &order, int64_t d,
                                  int64_t t, int64_t s) {
  int64_t coord[3] = {d, t, s};
  int64_t id = 0, stride = 1;
  for (auto [axis, factor] : order) {
    int64_t &x = coord[static_cast<int>(axis)];
    id += (x % factor) * stride;
    x /= factor;
    stride *= factor;
  }
  return id;
}

int64_t distir::dist::getStageMeshDeviceId(ArrayRef<int64_t> stageTp,
                                           int64_t dp, bool tpInner, int64_t d,
                                           int64_t t, int64_t s) {
  int64_t first = 0;
  for (int64_t before = 0; before < s; ++before)
    first += dp * stageTp[before];
  return first + (tpInner ? d * stageTp[s] + t : t * dp + d);
}
