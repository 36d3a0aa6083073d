//===- Simulator.h - Predict runtime and memory of dist programs -*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Abstract interpretation of a global `dist` program in program order: each
// device executes its ops one at a time; an op that involves several devices
// starts when all of them are free and occupies all of them (the DistIR
// semantics). Optionally every device has separate compute and
// communication streams, so that communication overlaps compute until a
// consumer needs the data.
//
// Outputs: end-to-end latency, per-device busy time and memory (liveness peak
// and a static-offset plan), per-op events, the critical path, a text/JSON
// report and a Chrome trace.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_SIMULATOR_H
#define DISTIR_ANALYSIS_SIMULATOR_H

#include "DistIR/Analysis/Calibration.h"
#include "DistIR/Analysis/CollectiveCost.h"
#include "DistIR/Cluster/Cluster.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace distir {

/// Which formulas price ops.
enum class CostModelKind {
  /// Roofline compute costs (per-dtype peak flop/s, memory bandwidth, launch
  /// overhead) and topology-aware collectives (CollectiveCostModel).
  Analytic,
  /// The published DistIR simulator's formulas
  /// (docs/design/reference-facts.md), including its
  /// simplifications, so that results can be set beside that system's.
  DistIRCompat,
  /// Linear models fitted to measurements (SimulatorOptions::calibration,
  /// see Calibration.h); op classes and collectives the calibration lacks
  /// fall back to the analytic model.
  Calibrated,
};

std::optional<CostModelKind> symbolizeCostModelKind(llvm::StringRef name);
llvm::StringRef stringifyCostModelKind(CostModelKind kind);

struct SimulatorOptions {
  CostModelKind costModel = CostModelKind::Analytic;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  /// Separate compute and communication streams per device.
  bool overlap = false;
  /// Communication ops that cross a shared link (a NIC behind several
  /// devices: `sharedBy` > 1) wait until earlier ops through it are done
  /// (CollectiveCostModel::getHeldLinks), instead of each getting the whole
  /// link as if alone.
  bool linkContention = false;
  /// Samples per step, to report throughput.
  std::optional<int64_t> batchSize;
  /// Compute the static-offset memory plan (DeviceReport::plannedBytes;
  /// -1 when off). It costs more than the rest of a simulation when many
  /// microbatches are in flight; searches rank by the liveness peak alone.
  bool planMemory = true;
  /// Coefficients of the calibrated model; required when `costModel` is
  /// Calibrated, ignored otherwise.
  std::shared_ptr<const Calibration> calibration;
  /// Record SimulationResult::memoryChanges (for composing task costs).
  bool recordMemoryChanges = false;
  /// Fill SimEvent::name and SimEvent::location (for reports and traces;
  /// searches that only need the totals skip the string formatting).
  bool describeEvents = true;
  /// Fill DeviceReport::memoryTimeline (for traces; searches skip it).
  bool recordMemoryTimeline = true;
  /// The cluster device that runs each device id of the program (empty:
  /// the same id). One program then stands for the programs that differ
  /// from it only in which devices run what (a search's device mappings).
  std::vector<int64_t> deviceMap;
  /// List this many of the largest buffers live at each device's peak
  /// (DeviceReport::peakBuffers); 0: none.
  int64_t peakBuffers = 0;
};

/// One op's execution.
struct SimEvent {
  std::string name;     ///< op name, e.g. "linalg.matmul"
  std::string location; ///< source location of the op
  llvm::SmallVector<int64_t, 4> devices;
  bool isCommunication = false;
  double start = 0, end = 0;
  /// The priced duration (end - start up to rounding).
  double duration = 0;
  double flops = 0, bytes = 0;
  /// The event whose end determined this one's start (-1 if it started at
  /// time zero).
  int64_t predecessor = -1;
  /// The op (valid while the simulated program lives).
  mlir::Operation *op = nullptr;
};

/// A change of a device's live bytes, in program order: an allocation
/// (positive) by `op`, or a release (negative) when `op` retires.
/// What a buffer holds, for the memory breakdown at the peak.
enum class MemoryKind : int {
  /// Resident arguments: weights (everything but optimizer state).
  Weights = 0,
  /// Step-long gradient buffers (`dist.gradient_buffer`, from dist-dtp).
  Gradients,
  /// Everything else a compute op writes: activations and temporaries.
  Activations,
  /// The batch inputs streamed from the host (`dist.batch_dim` arguments).
  Inputs,
  /// Results of communication ops (received and gathered values).
  Communication,
  /// Resident optimizer state (`dist.optimizer_state` arguments: momenta,
  /// Adam moments, the step count).
  OptimizerState,
};
constexpr int kNumMemoryKinds = 6;
llvm::StringRef stringifyMemoryKind(MemoryKind kind);
using MemoryBreakdown = std::array<int64_t, kNumMemoryKinds>;

struct MemoryChange {
  mlir::Operation *op;
  int64_t device;
  int64_t bytes;
  MemoryKind kind = MemoryKind::Activations;
};

/// A buffer live at a device's memory peak: what holds the memory.
struct PeakBuffer {
  int64_t bytes = 0;
  MemoryKind kind = MemoryKind::Activations;
  /// The op that allocated it, or the argument's `dist.name` (`@N` when
  /// unnamed) for a function argument.
  std::string definer;
  std::string location;
};

/// Per-device outcome.
struct DeviceReport {
  double computeBusy = 0;
  double communicationBusy = 0;
  /// Time the device finished its last op.
  double finish = 0;
  /// Bytes resident for the whole run (function arguments).
  int64_t residentBytes = 0;
  /// Peak of live bytes (a value lives from its definition to its last use).
  int64_t peakBytes = 0;
  /// The live bytes of each MemoryKind at the (first) peak.
  MemoryBreakdown peakBreakdown{};
  /// The largest buffers live at the peak, largest first
  /// (SimulatorOptions::peakBuffers of them).
  std::vector<PeakBuffer> peakBuffers;
  /// Arena size of a static-offset plan of every buffer (no fragmentation
  /// at run time because offsets are fixed ahead of time); -1 when the plan
  /// was not requested (SimulatorOptions::planMemory).
  int64_t plannedBytes = 0;
  /// Live bytes after each change, as (time, bytes) in time order.
  std::vector<std::pair<double, int64_t>> memoryTimeline;
  bool exceedsCapacity = false;
};

/// The communication time of one kind of op: summed over its events, and
/// the exposed part: the time of its events on the critical path minus what
/// the device where the path goes on spent computing meanwhile (an upper
/// bound on what free communication would save; on ties the critical path
/// follows the stream's previous event).
struct CommunicationTime {
  std::string op;
  int64_t events = 0;
  double total = 0, exposed = 0;
};

struct SimulationResult {
  std::string functionName;
  std::string clusterName;
  int64_t deviceCapacity = 0;
  SimulatorOptions options;
  double latency = 0;
  std::map<int64_t, DeviceReport> devices;
  std::vector<SimEvent> events;
  /// Indices into `events`, first to last.
  std::vector<int64_t> criticalPath;
  /// Every allocation and release of a non-resident buffer, in program
  /// order; only with SimulatorOptions::recordMemoryChanges.
  std::vector<MemoryChange> memoryChanges;

  std::optional<double> getThroughput() const;
  /// Per communication op name, in name order.
  std::vector<CommunicationTime> getCommunicationTimes() const;
  void printText(llvm::raw_ostream &os) const;
  llvm::json::Value toJSON() const;
  /// Chrome trace event format (opens in Perfetto): one process per device,
  /// one thread per stream.
  llvm::json::Value toChromeTrace() const;
};

/// Simulates `entry` on `cluster`. The function's tensor arguments are the
/// program's inputs (resident on their devices from time zero). Fails with
/// a diagnostic on ops it cannot price or programs it cannot interpret.
mlir::FailureOr<SimulationResult> simulate(mlir::func::FuncOp entry,
                                           const Cluster &cluster,
                                           const SimulatorOptions &options);

} // namespace distir

#endif // DISTIR_ANALYSIS_SIMULATOR_H
