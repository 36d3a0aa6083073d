//===- PipelineSchedule.h - dist-dtp's task order and device order -*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The two decisions of dist-dtp that other components reproduce without
// running it: the order of pipeline tasks (which is the program order of
// the step function) and the device of each (replica, tensor rank, stage).
// The search's fast estimation composes per-task costs in this order.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_TRANSFORMS_PIPELINESCHEDULE_H
#define DISTIR_DIALECT_DIST_TRANSFORMS_PIPELINESCHEDULE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace distir::dist {

enum class PipelinePhase { Forward = 0, Backward = 1, Update = 2 };
enum class PipelineSchedule { GPipe, OneFOneB, EagerOneFOneB, PipeDream };

/// A unit of the schedule: one stage's forward or backward of one
/// microbatch, or its update (microbatch -1).
struct PipelineTask {
  int64_t stage, microbatch;
  PipelinePhase phase;
  bool operator<(const PipelineTask &o) const {
    return std::tie(stage, microbatch, phase) <
           std::tie(o.stage, o.microbatch, o.phase);
  }
  bool operator==(const PipelineTask &o) const {
    return stage == o.stage && microbatch == o.microbatch && phase == o.phase;
  }
};

std::optional<PipelineSchedule> symbolizePipelineSchedule(llvm::StringRef name);

/// The time steps of `pp` stages and `k` microbatches: at most one task per
/// stage in each, a task after the tasks it depends on. GPipe, 1F1B and
/// eager 1F1B merge per-stage sequences (warm-up forwards, then alternating,
/// then the remaining backwards, then the update); PipeDream alternates
/// greedily between the ready forwards and backwards.
std::vector<std::vector<PipelineTask>>
getPipelineSteps(int64_t pp, int64_t k, PipelineSchedule schedule);

/// The program order of the tasks: the time steps, concatenated.
std::vector<PipelineTask> getPipelineOrder(int64_t pp, int64_t k,
                                           PipelineSchedule schedule);

/// The `dist.task` annotation of dist-dtp{annotate-schedule=true}, e.g.
/// "stage 1 backward 3" or "stage 0 update", and its parser.
std::string stringifyPipelineTask(const PipelineTask &task);
std::optional<PipelineTask> parsePipelineTask(llvm::StringRef text);

/// Axes of the device order.
enum class GridAxis { DP = 0, TP = 1, PP = 2 };

/// Device ids as a mixed-radix number: (axis, factor) digits, least
/// significant first. An axis may appear several times (its coordinate is
/// split into factors, first appearance least significant), which expresses
/// any parallelism matrix over a device hierarchy.
using DeviceOrder = llvm::SmallVector<std::pair<GridAxis, int64_t>, 6>;

/// Parses dist-dtp's `mapping` option ("tp-inner", "dp-inner" or
/// AXIS:FACTOR,...) for the given degrees; on failure sets `error`.
std::optional<DeviceOrder> parseDeviceOrder(llvm::StringRef mapping, int64_t dp,
                                            int64_t tp, int64_t pp,
                                            std::string &error);

/// Device of replica `d`, tensor rank `t` and stage `s`.
int64_t getDeviceId(const DeviceOrder &order, int64_t d, int64_t t, int64_t s);

/// The same with per-stage tensor-parallel degrees (dist-dtp's stage-tp):
/// stage s's mesh of dp x stageTp[s] devices follows the earlier stages'
/// meshes; inside it tensor ranks are fastest when `tpInner`.
int64_t getStageMeshDeviceId(llvm::ArrayRef<int64_t> stageTp, int64_t dp,
                             bool tpInner, int64_t d, int64_t t, int64_t s);

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_TRANSFORMS_PIPELINESCHEDULE_H
