//===- Trace.h - Profiler traces of a data-parallel job ----------*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Reads the Chrome-trace JSON that torch.profiler writes for each rank of a
// distributed job (`.json` or `.json.gz`): the Kineto layout (an object with
// "traceEvents", "distributedInfo", `cpu_op` events with "Input Dims",
// `[memory]` instant events) and the legacy layout of PyTorch builds without
// Kineto (a bare array of complete events). Only complete ("X") events and
// memory instants are kept; times become seconds on the rank's own clock.
// See docs/design/replay.md.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_TRACE_H
#define DISTIR_REPLAY_TRACE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace distir::replay {

/// One complete event ("ph": "X") of a rank's trace.
struct TraceEvent {
  std::string name;
  int64_t thread = 0;
  /// Seconds on the rank's clock.
  double start = 0, duration = 0;
  double end() const { return start + duration; }
  /// Elements of each input ("Input Dims"; empty when not recorded).
  std::vector<int64_t> inputElements;
  /// CUDA runtime and driver calls (Kineto's cuda_runtime and cuda_driver
  /// categories): the id that links a launch to the GPU activity it
  /// enqueued, -1 for other events.
  int64_t correlation = -1;
  bool runtimeCall = false;
};

/// A kernel, copy or memset on a CUDA stream (Kineto's kernel, gpu_memcpy
/// and gpu_memset events), on the GPU's clock, which Kineto maps onto the
/// host's.
struct GpuEvent {
  std::string name;
  int64_t stream = 0;
  double start = 0, duration = 0;
  double end() const { return start + duration; }
  /// The correlation id of the runtime call that launched it.
  int64_t correlation = -1;
};

/// A `[memory]` instant: an allocation (positive) or a release.
struct MemoryEvent {
  double time = 0;
  int64_t bytes = 0;
};

/// One rank's trace.
struct RankTrace {
  std::string path;
  /// From "distributedInfo"; else the position of the file on the command
  /// line.
  int64_t rank = 0;
  std::optional<int64_t> worldSize;
  std::string backend;
  /// Complete events sorted by start, enclosing events first.
  std::vector<TraceEvent> events;
  /// GPU activity sorted by start (empty for a CPU job).
  std::vector<GpuEvent> gpu;
  /// Sorted by time: the GPU's allocations when the trace has any
  /// (`"Device Type": 1`), else the host's.
  std::vector<MemoryEvent> memory;
};

/// Reads one rank's trace. `position` is the rank when the trace does not
/// say. Errors name the file (and the line and column of a JSON error).
llvm::Expected<RankTrace> readRankTrace(llvm::StringRef path, int64_t position);

/// Reads the traces of every rank of one job, sorted by rank. Refuses a
/// single trace, duplicate or missing ranks and traces whose
/// "distributedInfo" disagree (traces of different jobs).
llvm::Expected<std::vector<RankTrace>>
readJobTraces(llvm::ArrayRef<std::string> paths);

} // namespace distir::replay

#endif // DISTIR_REPLAY_TRACE_H
