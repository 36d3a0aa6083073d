//===- Search.h - Search over data/tensor/pipeline strategies ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The search driver behind `distir-search` (docs/design/search.md): it
// enumerates D/T/P/K configurations (data, tensor and pipeline degrees,
// microbatches, pipeline schedule and device mapping), applies `dist-dtp` to
// a copy of a sequential program for each, simulates the per-device step
// function on a cluster and ranks the configurations that fit in memory by
// throughput.
//
// Configurations run in parallel, each worker thread with its own
// MLIRContext that parses the serialized program once; results are stored
// by configuration index, so that outputs do not depend on the number of
// workers.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_SEARCH_SEARCH_H
#define DISTIR_SEARCH_SEARCH_H

#include "DistIR/Analysis/Simulator.h"
#include "DistIR/Cluster/Cluster.h"
#include "DistIR/Target/ONNX/MLPBuilder.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace distir {
namespace search {

/// One point of the search space.
/// Which layers recompute their forward activations in the backward pass.
enum class Recompute {
  None,
  /// The first half (rounded down) of each pipeline stage's layers, as
  /// Megatron's block method with `--recompute-num-layers` half a stage:
  /// the stage keeps the activations of its later layers, which its
  /// backward pass needs first.
  Half,
  /// Every layer.
  All,
};
llvm::StringRef stringifyRecompute(Recompute recompute);

struct SearchConfig {
  /// Samples per step of the program this configuration transforms.
  int64_t batch = 1;
  int64_t dp = 1, tp = 1, pp = 1, microbatches = 1;
  /// Per-stage tensor-parallel degrees (dist-dtp's stage-tp: stage s on its
  /// own mesh of dp x stageTp[s] devices); empty: `tp` on every stage. When
  /// set, `tp` is the largest of them.
  std::vector<int64_t> stageTp;
  /// Pipeline schedule ("gpipe", "1f1b", "eager-1f1b"); empty when pp == 1.
  std::string schedule;
  /// dist-dtp's device mapping: "tp-inner", "dp-inner", or an explicit
  /// mixed-radix order such as "tp:4,pp:2,dp:2".
  std::string mapping = "tp-inner";
  /// ZeRO stage applied after dist-dtp (`dist-zero`; 0 = none; dp > 1).
  int64_t zero = 0;
  /// Layers whose forward activations are recomputed in the backward pass
  /// (`dist-recompute` before dist-dtp).
  Recompute recompute = Recompute::None;

  /// The published DistIR's own program (--distir-programs), not dist-dtp's.
  bool distirProgram = false;

  int64_t getNumDevices() const;
  /// The tensor-parallel degree as printed: "4", or the stages' "4,2".
  std::string getTPText() const;
  /// The `dist-dtp` option string, e.g. `dp=2 tp=4 pp=1 microbatches=1
  /// mapping=tp-inner` (plus `schedule=...` when pp > 1); for DistIR's own
  /// program, its builder's option (`distir-dhp=2,4,1,1`).
  std::string getPassOptions() const;
};

/// What to enumerate.
struct SearchSpace {
  /// Devices to use (a power of two).
  int64_t devices = 1;
  /// Also configurations on fewer devices (dp * tp * pp < devices).
  bool allowFewerDevices = false;
  /// Largest microbatch count (a power of two).
  int64_t maxMicrobatches = 1;
  /// Largest degrees per axis (0 = no limit).
  int64_t maxDP = 0, maxTP = 0, maxPP = 0;
  /// Training only: also try ZeRO stages 1...maxZero (with dp > 1) and
  /// recomputing every layer.
  int64_t maxZero = 0;
  bool tryRecompute = false;
  /// Also give pipeline stages their own tensor-parallel degrees (powers of
  /// two, not all equal, pp <= 4): every tuple whose meshes use the devices.
  bool stageMeshes = false;
  /// Whether the program has a backward pass (only then do pipeline
  /// schedules differ).
  bool training = false;
  /// Sizes of the cluster's levels, outermost first. When set, the device
  /// mappings of a (dp, tp, pp) are its parallelism matrices over the levels
  /// the devices occupy (innermost levels first), each once; otherwise
  /// tp-inner and dp-inner.
  std::vector<int64_t> levels;
  /// Most device mappings tried per (dp, tp, pp): deep hierarchies have
  /// combinatorially many (enumerateMappings).
  size_t maxMappings = 256;
  /// Configurations of the published DistIR's own MLP program
  /// (SearchOptions::distirMLP): its PipeDream schedule and device order
  /// (pipeline innermost, then tensor, then data: "pp:P,tp:T,dp:D") only, no
  /// ZeRO or recomputation.
  bool distirPrograms = false;
};

/// The dist-dtp mappings of (dp, tp, pp) over `levels` (outermost first):
/// one per parallelism matrix, named "tp-inner" or "dp-inner" when it is
/// those mappings' matrix, else an explicit order (at each level from the
/// innermost, tp then dp then pp factors). Empty when the devices do not
/// fit the levels. When there are more than `limit` matrices, only the
/// familiar mappings are returned and `*truncated` is set.
std::vector<std::string> enumerateMappings(llvm::ArrayRef<int64_t> levels,
                                           int64_t dp, int64_t tp, int64_t pp,
                                           size_t limit = SIZE_MAX,
                                           bool *truncated = nullptr);

/// Every configuration of `space` for a program of `batch` samples, in a
/// deterministic order (dp, tp, pp, microbatches, schedule, mapping).
/// Without levels, configurations where the mapping cannot matter (dp == 1
/// or tp == 1) use "tp-inner" only; schedules are enumerated only when pp > 1,
/// there are several microbatches and the program trains. `truncated`
/// counts the (dp, tp, pp) whose mappings were cut to the familiar ones.
std::vector<SearchConfig> enumerateConfigs(const SearchSpace &space,
                                           int64_t batch,
                                           int64_t *truncated = nullptr);

enum class ConfigStatus {
  /// Transformed, simulated and fits in device memory.
  Ok,
  /// Simulated, but some device's peak memory exceeds its capacity.
  OutOfMemory,
  /// `dist-dtp` (or a cleanup pass) rejected the configuration.
  Skipped,
  /// The transformed program could not be simulated.
  Failed,
};

llvm::StringRef stringifyConfigStatus(ConfigStatus status);

/// The outcome of one configuration.
struct ConfigResult {
  SearchConfig config;
  ConfigStatus status = ConfigStatus::Skipped;
  /// Why a configuration is not Ok (one line).
  std::string reason;
  double latency = 0;
  /// Samples per second (batch / latency).
  double throughput = 0;
  /// Largest per-device peak of live bytes, and the device it occurs on.
  int64_t peakBytes = 0;
  int64_t peakDevice = -1;
  /// Largest per-device resident bytes (arguments: weights, inputs).
  int64_t residentBytes = 0;
  /// What the peak device holds at its peak (weights, gradients,
  /// activations, inputs, communication buffers).
  MemoryBreakdown peakBreakdown{};
  /// Whether the figures above come from a simulation: an OutOfMemory
  /// configuration may also be dropped before, by its resident bytes.
  bool simulated = false;
  /// Wall-clock seconds spent on this configuration (transform, simulate).
  /// Not part of the reports (they must not depend on timing).
  double transformSeconds = 0, simulateSeconds = 0;
  /// With --fast: why this configuration was simulated in full instead of
  /// replayed from a template (empty when it was replayed or not --fast).
  std::string fullSimulationReason;
  /// The model's work per step (ModelWork of the sequential program) and
  /// the devices' peak flop/s for its dtype: the reports derive achieved
  /// model flop/s per device and MFU from them. 0 when unknown.
  double modelFlops = 0, peakFlopsPerDevice = 0;
  /// Tokens per sample (sequence models), 0 if the model has none.
  int64_t tokensPerSample = 0;
  /// Seconds of communication between pipeline stages in the simulated
  /// step (events whose devices lie in two stages, summed; with
  /// stage-transfer=planned the receivers' all-gathers are not included);
  /// -1 when pp = 1.
  double stageTransferSeconds = -1;

  /// Samples of one microbatch of one replica.
  int64_t getMicrobatchSize() const {
    return config.batch / std::max<int64_t>(config.dp * config.microbatches, 1);
  }
  /// Model flop/s achieved per device (the sequential program's flops per
  /// step, not counting recomputation or communication), and its fraction
  /// of the device's peak (model flops utilization).
  double getModelFlopsPerDevice() const {
    int64_t devices = config.getNumDevices();
    return latency > 0 && devices > 0 ? modelFlops / latency / devices : 0;
  }
  double getMFU() const {
    return peakFlopsPerDevice > 0
               ? getModelFlopsPerDevice() / peakFlopsPerDevice
               : 0;
  }
};

/// The work of one step of a sequential program: its flops (every op the
/// cost model prices, forward, backward and update), the element type that
/// does most of them, and the tokens per sample of its integer inputs of
/// rank two or more (token ids), 0 if none.
struct ModelWork {
  double flops = 0;
  std::string dtype = "f32";
  int64_t tokensPerSample = 0;
};
ModelWork getModelWork(mlir::ModuleOp program, llvm::StringRef entry);

/// A sequential program to distribute, serialized so that every worker
/// context can parse its own copy.
struct SearchProgram {
  int64_t batch = 1;
  /// MLIR bytecode of the module.
  std::string bytecode;
  /// The function `dist-dtp` distributes.
  std::string entry;
};

/// Serializes `module` for the workers.
mlir::FailureOr<SearchProgram>
serializeProgram(mlir::ModuleOp module, llvm::StringRef entry, int64_t batch);

struct SearchOptions {
  Cluster cluster;
  SimulatorOptions simulator;
  /// Worker threads (>= 1).
  unsigned jobs = 1;
  /// Run canonicalize and cse after dist-dtp.
  bool cleanup = false;
  /// Run dist-verify-placement after the transforms.
  bool verify = true;
  /// Drop configurations whose resident lower bound exceeds the device
  /// memory before transforming them (getResidentLowerBound).
  bool memoryPrecheck = true;
  /// Also run MLIR's IR verifier after dist-dtp (structural invariants of
  /// every op; dist-dtp's tests check them, so searches skip it by default).
  bool verifyIR = false;
  /// Fast estimation (estimateConfig) instead of simulating every
  /// configuration's whole program.
  bool fast = false;
  /// The programs are training steps (backward and update tasks).
  bool training = false;
  /// dist-dtp's stage-transfer option: "send", "planned" or a resharding
  /// strategy (docs/design/resharding.md). Other than "send", the cluster
  /// is attached to each transformed module for the planner.
  std::string stageTransfer = "send";
  /// When set, each configuration is the published DistIR's own MLP
  /// training step (buildDistIRMLP, --distir-programs) with these layers,
  /// width and dtype, the configuration's batch, degrees and microbatches,
  /// instead of dist-dtp's transform of the source program.
  std::optional<MLPOptions> distirMLP;
  /// Called after each configuration with (done, total); serialized by the
  /// driver, may be empty.
  std::function<void(size_t, size_t)> progress;
};

/// Creates a context with every DistIR dialect loaded lazily, for a worker
/// (threading disabled: the search parallelizes across configurations).
std::unique_ptr<mlir::MLIRContext> createSearchContext();

/// Parses a serialized program into `context`.
mlir::OwningOpRef<mlir::ModuleOp> parseProgram(const SearchProgram &program,
                                               mlir::MLIRContext *context);

/// Applies the transforms of `config` to a clone of `source`. On failure,
/// returns null and sets `error` to the first error diagnostic.
/// Applies the transforms of `config` to `module` in place. On failure,
/// sets `error` to the first error diagnostic. With `annotate`, dist-dtp
/// also writes each op's task and source layer.
mlir::LogicalResult transformInPlace(mlir::ModuleOp module,
                                     llvm::StringRef entry,
                                     const SearchConfig &config,
                                     const SearchOptions &options,
                                     std::string &error, bool annotate = false);

/// With `annotate`, dist-dtp also writes each op's task (`dist.task`).
mlir::OwningOpRef<mlir::ModuleOp>
transformProgram(mlir::ModuleOp source, llvm::StringRef entry,
                 const SearchConfig &config, const SearchOptions &options,
                 std::string &error, bool annotate = false);

/// The step function that `dist-dtp` produced for `entry` (`<entry>_dtp`).
mlir::func::FuncOp findStepFunction(mlir::ModuleOp module,
                                    llvm::StringRef entry);

/// What every configuration of a program keeps resident, from the
/// sequential program: its weights, and its batch inputs per sample.
struct ResidentFootprint {
  int64_t weightBytes = 0;
  double batchBytesPerSample = 0;
};
ResidentFootprint getResidentFootprint(mlir::ModuleOp program,
                                       llvm::StringRef entry, int64_t batch);

/// A lower bound of the largest per-device peak bytes of `config`: each of
/// its dp replicas holds every weight on some of its tp * pp devices, and
/// one microbatch's inputs (streamed from the host) on some device while it
/// does, so the devices' peaks add up to at least dp * weights + the inputs
/// of dp microbatches.
int64_t getResidentLowerBound(const ResidentFootprint &footprint,
                              const SearchConfig &config);

/// Transforms and simulates one configuration.
ConfigResult evaluateConfig(mlir::ModuleOp source, llvm::StringRef entry,
                            const SearchConfig &config,
                            const SearchOptions &options);

struct TemplateRun;

/// Templates simulated by estimateConfig, shared by the configurations (and
/// worker threads) of one search: configurations that differ only in K (all
/// with K >= 3) or, in inference, in the batch per replica and microbatch,
/// replay the same template.
class TemplateCache {
public:
  TemplateCache();
  ~TemplateCache();
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The configuration whose program fast estimation simulates for `config`:
/// at most three microbatches (the first, a middle one and the last, which
/// can differ), of the same replicas in training and of one replica in
/// inference (replicas never communicate there). Its batch is the samples
/// those microbatches hold. Equal to `config` when there is nothing to
/// save.
SearchConfig getTemplateConfig(const SearchConfig &config, bool training);

/// Estimates `config` from its template program (`templateSource` is the
/// model at the template's batch): folds each stage's layers to a first
/// layer, a middle pair and a last layer when a stage has an even number of
/// at least six, simulates the template, takes each task's events and
/// memory changes (by the role of its microbatch: first, middle, last) and
/// replays them in the order of the K-microbatch schedule, repeating the
/// middle pair of layers and the links of chains over the microbatches as
/// often as the full program has them. Without overlap (one stream per
/// device) this is the whole program's simulation, with the same
/// floating-point operations in the same order
/// (docs/design/search-estimation.md); the search rejects
/// `--fast` with `--overlap`. Evaluates the configuration itself when there
/// is nothing to save.
struct TransformedTemplate;

/// A worker's most recent transformed templates (they live in the worker's
/// context): configurations that differ only in their device mapping, or in
/// inference in their data-parallel degree, transform their template once.
/// Destroy it before the context.
class TransformCache {
public:
  TransformCache();
  ~TransformCache();
  std::shared_ptr<const TransformedTemplate> lookup(llvm::StringRef key);
  void insert(llvm::StringRef key,
              std::shared_ptr<const TransformedTemplate> transformed);
  struct Impl;
  std::unique_ptr<Impl> impl;
};

///
/// A program that a template cannot represent is simulated in full, on
/// `fullProgram()` (the model at the configuration's batch), and the result
/// says why (ConfigResult::fullSimulationReason): a task that reads another
/// microbatch's values (the batch gathered before an attention), or, in
/// inference, data-parallel replicas that communicate.
ConfigResult
estimateConfig(mlir::ModuleOp templateSource, llvm::StringRef entry,
               const SearchConfig &config, const SearchOptions &options,
               TemplateCache *cache = nullptr,
               TransformCache *transforms = nullptr,
               llvm::function_ref<mlir::ModuleOp()> fullProgram = nullptr);

/// The sum of `values` in increasing order (the same bits for any order of
/// the same values).
double sumInOrder(std::vector<double> values);

/// Seconds of communication events of `sim` whose devices lie in two
/// pipeline stages of `config` (its device mapping), summed.
double getStageTransferSeconds(const SearchConfig &config,
                               const SimulationResult &sim);

/// Fills the latency, throughput, peak memory and status of `result` from
/// per-device reports.
void setSimulatedOutcome(ConfigResult &result, double latency,
                         const std::map<int64_t, DeviceReport> &devices,
                         int64_t capacity);

/// Evaluates `configs` (each naming the batch of one of `programs`; with
/// `options.fast`, the batch of its template) with `options.jobs` workers.
/// Result i belongs to configs[i].
std::vector<ConfigResult> runSearch(llvm::ArrayRef<SearchProgram> programs,
                                    llvm::ArrayRef<SearchConfig> configs,
                                    const SearchOptions &options);

/// Indices of the Ok results, best (highest throughput) first; ties keep the
/// enumeration order.
std::vector<size_t> rankResults(llvm::ArrayRef<ConfigResult> results);

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

/// One tensor-parallel decision of dist-dtp, as the reports list it.
struct TensorParallelDecision {
  std::string location; // file:line:col of the weight-reading op
  std::string what;     // its split, or "replicated: <reason>"
  bool isReplicated() const {
    return llvm::StringRef(what).starts_with("replicated");
  }
};

/// dist-dtp's decisions for one tensor-parallel degree, the same at every
/// microbatch size listed (samples per microbatch: a final projection's
/// split is priced per microbatch, so it may depend on it).
struct TensorParallelReport {
  int64_t tp = 0;
  std::vector<int64_t> microbatchSizes; // ascending
  std::vector<TensorParallelDecision> decisions;
};

/// What the reports say about the search besides its results.
struct SearchSummary {
  std::string model;
  std::string cluster;
  int64_t devices = 0;
  int64_t capacityBytes = 0;
  bool training = false;
  std::string costModel;
  bool batchSweep = false;
  /// dist-dtp's decisions per tensor-parallel degree searched (> 1).
  std::vector<TensorParallelReport> tensorParallel;
};

/// Prints the top `top` Ok configurations as a table, then one line of
/// counts per status.
void printTable(llvm::raw_ostream &os, const SearchSummary &summary,
                llvm::ArrayRef<ConfigResult> results,
                llvm::ArrayRef<size_t> ranking, size_t top);
/// One row per configuration, in enumeration order, with a `rank` column
/// (0 for configurations not ranked).
void writeCSV(llvm::raw_ostream &os, llvm::ArrayRef<ConfigResult> results,
              llvm::ArrayRef<size_t> ranking);
llvm::json::Value toJSON(const SearchSummary &summary,
                         llvm::ArrayRef<ConfigResult> results,
                         llvm::ArrayRef<size_t> ranking);
/// A scatter plot of peak memory against throughput (the DistIR paper's
/// Figures 5-6): one point per simulated configuration, out-of-memory ones
/// marked, the best highlighted, the device capacity as a dashed line.
void writeSVG(llvm::raw_ostream &os, const SearchSummary &summary,
              llvm::ArrayRef<ConfigResult> results,
              llvm::ArrayRef<size_t> ranking);

/// Human-readable sizes ("1.50 GiB"); times: distir::formatSeconds.
std::string formatBytes(int64_t bytes);

} // namespace search
} // namespace distir

#endif // DISTIR_SEARCH_SEARCH_H
