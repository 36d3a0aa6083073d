//===- distir-search.cpp - Search parallelization strategies --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// distir-search --model FILE.onnx|mlp:LAYERS,DIM --batch B [--training]
//   [--input-shape NAME=d0,...]... [--batch-sweep B1,B2,...]
//   --cluster NAME|file.json [--devices N] [--allow-fewer-devices]
//   [--max-microbatches K] [--max-dp N] [--max-tp N] [--max-pp N]
//   [--top T] [--jobs J] [--csv out.csv] [--json out.json]
//   [--plot out.svg|out.png] [--emit-best out.mlir] [--trace-best out.json]
//   [--cost-model analytic|distir-compat] [--algo ring|tree] [--overlap]
//   [--fast] [--cleanup] [--no-verify] [--no-memory-precheck]
//   [--link-contention] [--stage-transfer send|planned|STRATEGY]
//   [--no-progress] [--timing]
//
// See docs/design/search.md and docs/design/search-estimation.md.
//
//===----------------------------------------------------------------------===//

#include "PerOpMode.h"
#include "PlotPNG.h"

#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/Search/Driver.h"
#include "DistIR/Search/Reshard.h"
#include "DistIR/Search/Search.h"
#include "DistIR/Target/ONNX/MLPBuilder.h"
#include "DistIR/Target/ONNX/ONNXImporter.h"
#include "DistIR/Tools/ToolUtils.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Threading.h"

#include <chrono>
#include <thread>

using namespace mlir;
using namespace distir;
using namespace distir::search;
namespace cl = llvm::cl;

namespace {
/// The command line.
struct Options {
  cl::OptionCategory category{"distir-search options"};
  cl::opt<std::string> model{"model", cl::desc("FILE.onnx or mlp:LAYERS,DIM"),
                             cl::value_desc("FILE.onnx|mlp:LAYERS,DIM"),
                             cl::cat(category)};
  cl::opt<int64_t> batch{"batch", cl::desc("Samples per step"), cl::init(0),
                         cl::cat(category)};
  cl::opt<std::string> batchSweep{
      "batch-sweep",
      cl::desc("Search every batch size of this list (replaces --batch)"),
      cl::value_desc("B1,B2,..."), cl::cat(category)};
  cl::opt<bool> training{
      "training",
      cl::desc("Plan the training step: mlp: models get their built-in "
               "step (MSE, SGD); ONNX models go through dist-autodiff "
               "(--loss, --optimizer)"),
      cl::cat(category)};
  cl::opt<std::string> loss{
      "loss",
      cl::desc("ONNX --training: loss, mse (default) or cross-entropy "
               "(classes on the output's last axis)"),
      cl::value_desc("mse|cross-entropy"), cl::init("mse"), cl::cat(category)};
  cl::opt<std::string> optimizer{
      "optimizer",
      cl::desc("ONNX --training: optimizer, sgd (default), momentum, adam "
               "or adamw (its state is resident memory)"),
      cl::value_desc("sgd|momentum|adam|adamw"), cl::init("sgd"),
      cl::cat(category)};
  cl::opt<std::string> dtype{
      "dtype",
      cl::desc("Element type: f32 (default), f16 or bf16, priced at the "
               "cluster's peak flop/s for that type. mlp: models are built in "
               "it; ONNX inference runs in it as after model.half() "
               "(dist-low-precision); ONNX --training is mixed precision "
               "(fp32 master weights and state)"),
      cl::value_desc("f32|f16|bf16"), cl::init("f32"), cl::cat(category)};
  cl::list<std::string> inputShapes{
      "input-shape",
      cl::desc("ONNX: shape of a graph input, NAME=d0,d1,...; dimension 0 is "
               "replaced by the batch size (repeatable)"),
      cl::value_desc("NAME=d0,..."), cl::cat(category)};
  cl::opt<std::string> clusterSpec{
      "cluster", cl::desc("Preset (NAME[:key=value,...]) or JSON file"),
      cl::value_desc("NAME|file.json"), cl::cat(category)};
  cl::opt<int64_t> devices{
      "devices",
      cl::desc("Devices to use (a power of two; default: the whole cluster)"),
      cl::init(0), cl::cat(category)};
  cl::opt<bool> allowFewer{
      "allow-fewer-devices",
      cl::desc("Also try configurations that use fewer devices"),
      cl::cat(category)};
  cl::opt<int64_t> maxMicrobatches{
      "max-microbatches",
      cl::desc("Largest microbatch count K (a power of two)"), cl::init(1),
      cl::cat(category)};
  cl::opt<int64_t> maxDP{"max-dp",
                         cl::desc("Largest data-parallel degree (0 = any)"),
                         cl::init(0), cl::cat(category)};
  cl::opt<int64_t> maxTP{"max-tp",
                         cl::desc("Largest tensor-parallel degree (0 = any)"),
                         cl::init(0), cl::cat(category)};
  cl::opt<int64_t> maxPP{"max-pp",
                         cl::desc("Largest pipeline-parallel degree (0 = any)"),
                         cl::init(0), cl::cat(category)};
  cl::opt<int64_t> maxZero{
      "zero",
      cl::desc("Training: also try ZeRO stages 1 up to this one (0-3) on "
               "data-parallel configurations (dist-zero)"),
      cl::init(0), cl::cat(category)};
  cl::opt<bool> stageMeshes{
      "stage-meshes",
      cl::desc("Also give pipeline stages their own tensor-parallel degrees "
               "(dist-dtp stage-tp, each stage on its own mesh): every tuple "
               "of powers of two, not all equal, whose meshes use the "
               "devices, for pp up to 4; simulated in full under --fast"),
      cl::cat(category)};
  cl::opt<bool> recompute{
      "recompute",
      cl::desc("Training: also try recomputing activations in the backward "
               "pass (dist-recompute) for the first half of each pipeline "
               "stage's layers and for every layer"),
      cl::cat(category)};
  cl::opt<unsigned> top{"top", cl::desc("Rows of the table"), cl::init(10),
                        cl::cat(category)};
  cl::opt<unsigned> jobs{
      "jobs", cl::desc("Worker threads (0 = one per hardware thread)"),
      cl::init(0), cl::cat(category)};
  cl::opt<std::string> csvFile{"csv", cl::desc("Write every configuration"),
                               cl::value_desc("out.csv"), cl::cat(category)};
  cl::opt<std::string> jsonFile{"json", cl::desc("Write every configuration"),
                                cl::value_desc("out.json"), cl::cat(category)};
  cl::opt<std::string> plotFile{
      "plot",
      cl::desc("Write a plot of peak memory vs throughput (.svg or .png)"),
      cl::value_desc("out.svg|out.png"), cl::cat(category)};
  cl::opt<std::string> emitBest{"emit-best",
                                cl::desc("Write the best transformed program"),
                                cl::value_desc("out.mlir"), cl::cat(category)};
  cl::opt<std::string> traceBest{
      "trace-best", cl::desc("Write the Chrome trace of the best program"),
      cl::value_desc("out.json"), cl::cat(category)};
  cl::opt<std::string> costModel{
      "cost-model", cl::desc("analytic (default) or distir-compat"),
      cl::init("analytic"), cl::cat(category)};
  cl::opt<std::string> algorithm{"algo", cl::desc("Collectives: ring or tree"),
                                 cl::init("ring"), cl::cat(category)};
  cl::opt<bool> overlap{
      "overlap",
      cl::desc("Separate compute and communication streams per device"),
      cl::cat(category)};
  cl::opt<bool> linkContention{
      "link-contention",
      cl::desc("Transfers through a shared link (one NIC behind several "
               "devices) wait for each other (not with --fast)"),
      cl::cat(category)};
  cl::opt<std::string> stageTransfer{
      "stage-transfer",
      cl::desc("How values every tensor-parallel rank holds cross pipeline "
               "stages (dist-dtp's option): send (default), planned (the "
               "cross-mesh resharding planner), send-recv, local-allgather, "
               "global-allgather or broadcast (not with --fast)"),
      cl::init("send"), cl::cat(category)};
  cl::opt<bool> cleanup{"cleanup",
                        cl::desc("Run canonicalize and cse after dist-dtp"),
                        cl::cat(category)};
  cl::opt<bool> noVerify{
      "no-verify",
      cl::desc("Skip dist-verify-placement after the transform (faster)"),
      cl::cat(category)};
  cl::opt<bool> noMemoryPrecheck{
      "no-memory-precheck",
      cl::desc("Transform and simulate configurations whose weights and "
               "inputs alone exceed the device memory too (they are oom "
               "either way; without this option they are dropped first)"),
      cl::cat(category)};
  cl::opt<bool> fast{
      "fast",
      cl::desc("Evaluate each configuration from a template program (at most "
               "three microbatches, one replica in inference, four layers "
               "per long stage) whose events are replayed in the full "
               "schedule's order: the same results as the full simulation, "
               "faster (not with --overlap)"),
      cl::cat(category)};
  cl::opt<bool> verifyIR{
      "verify-ir",
      cl::desc("Run MLIR's IR verifier on every transformed program (the "
               "program written by --emit-best is always verified)"),
      cl::cat(category)};
  cl::opt<bool> noProgress{"no-progress",
                           cl::desc("No progress bar, even on a terminal"),
                           cl::cat(category)};
  cl::opt<std::string> strategy{
      "strategy",
      cl::desc("grid: the data/tensor/pipeline grid (default); per-op: one "
               "split per op by PaSE's dynamic program (dist-pase), emitted "
               "and simulated"),
      cl::init("grid"), cl::cat(category)};
  cl::opt<bool> perOpUnflatten{
      "per-op-unflatten",
      cl::desc("With --strategy per-op: also search the program with merged "
               "dimensions read apart (dist-unflatten-reshapes: the batch "
               "and the sequence of nn.MultiheadAttention's projections) and "
               "keep the cheaper form (default true)"),
      cl::init(true), cl::cat(category)};
  cl::opt<bool> distirPrograms{
      "distir-programs",
      cl::desc("With --model mlp:..., --training and --cost-model "
               "distir-compat: evaluate each D/T/P/K on the published "
               "DistIR's own MLP training step (distir-translate "
               "--distir-dhp: its PipeDream order and device order, no ZeRO "
               "or recomputation; pp = 1 with one microbatch) instead of "
               "dist-dtp's"),
      cl::cat(category)};
  cl::opt<bool> timing{
      "timing",
      cl::desc("Print the time of each configuration and of the phases to "
               "stderr"),
      cl::cat(category)};
};
} // namespace

static LogicalResult report(const Twine &msg) {
  llvm::errs() << "error: " << msg << "\n";
  return failure();
}

static int fail(const Twine &msg) {
  (void)report(msg);
  return 1;
}

/// Parses `B1,B2,...` (positive integers).
static FailureOr<SmallVector<int64_t>> parseIntList(StringRef text) {
  SmallVector<int64_t> values;
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    int64_t value;
    if (part.trim().getAsInteger(10, value) || value < 1)
      return failure();
    values.push_back(value);
  }
  return values;
}

/// The model to search: --model, --dtype, --loss, --optimizer and
/// --input-shape.
static LogicalResult readModelSource(const Options &opts, ModelSource &source) {
  StringRef modelSpec = opts.model;
  if (modelSpec.empty())
    return report("no model: pass --model FILE.onnx or --model mlp:LAYERS,DIM");
  if (!llvm::is_contained({"f32", "f16", "bf16"}, opts.dtype))
    return report("--dtype must be f32, f16 or bf16, not '" + opts.dtype + "'");
  source.dtype = opts.dtype;
  if (std::string error = parseModelSpec(modelSpec, source); !error.empty())
    return report(error);
  if (source.kind == ModelSource::MLP) {
    if (opts.loss.getNumOccurrences() || opts.optimizer.getNumOccurrences())
      return report("--loss and --optimizer apply to ONNX models; mlp: "
                    "models train with their built-in MSE loss and SGD");
  } else {
    source.training = opts.training;
    source.loss = opts.loss;
    source.optimizer = opts.optimizer;
    if (!opts.training &&
        (opts.loss.getNumOccurrences() || opts.optimizer.getNumOccurrences()))
      return report("--loss and --optimizer apply to training steps "
                    "(--training)");
    if (!llvm::is_contained({"mse", "cross-entropy"}, opts.loss))
      return report("--loss must be mse or cross-entropy, not '" + opts.loss +
                    "'");
    if (!llvm::is_contained({"sgd", "momentum", "adam", "adamw"},
                            opts.optimizer))
      return report("--optimizer must be sgd, momentum, adam or adamw, not '" +
                    opts.optimizer + "'");
  }
  for (const std::string &spec : opts.inputShapes) {
    if (source.kind != ModelSource::ONNX)
      return report("--input-shape applies to ONNX models only");
    std::pair<std::string, SmallVector<int64_t>> shape;
    std::string error = parseInputShape(spec, shape);
    if (!error.empty())
      return report(error);
    source.inputShapes.push_back(std::move(shape));
  }

  return success();
}

/// --batch or --batch-sweep (sorted, without repeats).
static FailureOr<SmallVector<int64_t>> readBatches(const Options &opts) {
  SmallVector<int64_t> batches;
  if (!opts.batchSweep.empty()) {
    FailureOr<SmallVector<int64_t>> list = parseIntList(opts.batchSweep);
    if (failed(list))
      return report("malformed --batch-sweep '" + opts.batchSweep +
                    "' (expected positive integers B1,B2,...)");
    batches = *list;
    llvm::sort(batches);
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  } else if (opts.batch.getNumOccurrences() == 0) {
    return report("no batch size: pass --batch B or --batch-sweep B1,B2,...");
  } else if (opts.batch < 1) {
    return report("--batch must be positive");
  } else {
    batches.push_back(opts.batch);
  }

  return batches;
}

/// --cluster, and --devices (a power of two within the cluster; all of its
/// devices by default).
static FailureOr<Cluster>
readCluster(const Options &opts, const ModelSource &source, int64_t &devices) {
  if (opts.clusterSpec.empty())
    return report("no cluster: pass --cluster NAME|file.json");
  std::string clusterError;
  FailureOr<Cluster> cluster =
      resolveCluster(opts.clusterSpec, [&](const Twine &msg) {
        if (clusterError.empty())
          clusterError = msg.str();
      });
  if (failed(cluster) || !clusterError.empty())
    return report(clusterError.empty()
                      ? "invalid cluster '" + opts.clusterSpec + "'"
                      : clusterError);
  if (!cluster->device.getPeakFlops(source.dtype))
    return report("cluster '" + cluster->name + "' has no peak flop/s for " +
                  source.dtype + " (--dtype " + source.dtype + ")");
  int64_t available = cluster->getNumDevices();
  devices =
      opts.devices.getNumOccurrences() ? int64_t(opts.devices) : available;
  if (devices < 1 || !llvm::isPowerOf2_64(devices))
    return report("--devices " + Twine(devices) + " is not a power of two" +
                  (opts.devices.getNumOccurrences()
                       ? ""
                       : " (the cluster's device count; pass --devices)"));
  if (devices > available)
    return report("--devices " + Twine(devices) + " exceeds the " +
                  Twine(available) + " devices of cluster " + cluster->name);
  return cluster;
}

/// The search-space and simulation options, checked against each other
/// before anything runs.
static LogicalResult checkSearchOptions(const Options &opts) {
  if (opts.maxMicrobatches < 1 || !llvm::isPowerOf2_64(opts.maxMicrobatches))
    return report("--max-microbatches " + Twine(opts.maxMicrobatches) +
                  " is not a power of two");
  if (opts.maxDP < 0 || opts.maxTP < 0 || opts.maxPP < 0)
    return report("--max-dp, --max-tp and --max-pp must be >= 0");
  if (opts.top < 1)
    return report("--top must be positive");
  if (opts.strategy != "grid" && opts.strategy != "per-op")
    return report("--strategy must be grid or per-op, not '" + opts.strategy +
                  "'");
  if (opts.strategy == "per-op") {
    // The grid's dimensions and reports have no meaning for one per-op plan.
    for (const cl::Option *grid : std::initializer_list<const cl::Option *>{
             &opts.batchSweep, &opts.maxMicrobatches, &opts.maxDP, &opts.maxTP,
             &opts.maxPP, &opts.maxZero, &opts.recompute, &opts.fast,
             &opts.stageMeshes, &opts.csvFile, &opts.plotFile, &opts.allowFewer,
             &opts.overlap, &opts.cleanup, &opts.linkContention,
             &opts.stageTransfer})
      if (grid->getNumOccurrences())
        return report("--" + grid->ArgStr +
                      " belongs to the grid search; --strategy per-op takes "
                      "--model, --batch, --training, --cluster, --devices, "
                      "--cost-model, --algo, --top, --json, --emit-best, "
                      "--trace-best and --per-op-unflatten");
  } else if (opts.perOpUnflatten.getNumOccurrences()) {
    return report("--per-op-unflatten belongs to --strategy per-op");
  }

  if (opts.fast && opts.overlap)
    return report("--fast replays tasks on one stream per device; it cannot "
                  "be combined with --overlap");
  if (opts.fast && opts.cleanup)
    return report("--fast replays the tasks as dist-dtp emits them; it cannot "
                  "be combined with --cleanup (canonicalize and cse merge ops "
                  "across microbatches)");
  if (opts.fast && opts.linkContention)
    return report("--fast replays each task's events without the other tasks' "
                  "transfers; it cannot be combined with --link-contention");
  if (opts.stageTransfer != "send" && opts.stageTransfer != "planned" &&
      !reshard::symbolizeStrategy(opts.stageTransfer))
    return report("unknown --stage-transfer '" + opts.stageTransfer +
                  "' (expected send, planned, send-recv, local-allgather, "
                  "global-allgather or broadcast)");
  if (opts.fast && opts.stageTransfer != "send")
    return report("--fast shares one template among device mappings, but "
                  "planned stage transfers depend on the mapping; it cannot be "
                  "combined with --stage-transfer " +
                  opts.stageTransfer);
  if (opts.maxZero < 0 || opts.maxZero > 3)
    return report("--zero must be a ZeRO stage from 0 to 3, not " +
                  Twine(int64_t(opts.maxZero)));
  if ((opts.maxZero > 0 || opts.recompute) && !opts.training)
    return report(
        "--zero and --recompute apply to training steps (--training)");
  return success();
}

/// The plot's format, from its extension; checked before the search.
static LogicalResult readPlotFormat(const Options &opts, bool &plotIsPNG) {
  plotIsPNG = false;
  // The plot's format, from its extension; checked before the search.
  if (!opts.plotFile.empty()) {
    StringRef ext = llvm::sys::path::extension(opts.plotFile);
    plotIsPNG = ext.equals_insensitive(".png");
    if (!plotIsPNG && !ext.equals_insensitive(".svg"))
      return report("--plot: unsupported format '" + ext.str() +
                    "' (expected a .svg or .png file name)");
    if (plotIsPNG && !canWritePlotPNG())
      return report("--plot: this build cannot write PNG (it needs librsvg, "
                    "librsvg2-dev); write an .svg plot instead");
  }
  return success();
}

/// What the search runs with, from the (checked) options.
static LogicalResult buildSearch(const Options &opts, const Cluster &cluster,
                                 int64_t devices, SearchOptions &searchOptions,
                                 SearchSpace &space) {
  std::optional<CostModelKind> model = symbolizeCostModelKind(opts.costModel);
  if (!model || *model == CostModelKind::Calibrated)
    return report("unknown cost model '" + opts.costModel +
                  "' (expected analytic or distir-compat)");
  searchOptions.simulator.costModel = *model;
  std::optional<CollectiveAlgorithm> algo =
      symbolizeCollectiveAlgorithm(opts.algorithm);
  if (!algo)
    return report("unknown collective algorithm '" + opts.algorithm +
                  "' (expected ring or tree)");
  searchOptions.simulator.algorithm = *algo;
  searchOptions.simulator.overlap = opts.overlap;
  searchOptions.simulator.linkContention = opts.linkContention;
  searchOptions.stageTransfer = opts.stageTransfer;
  searchOptions.fast = opts.fast;
  searchOptions.training = opts.training;
  searchOptions.cleanup = opts.cleanup;
  searchOptions.verify = !opts.noVerify;
  searchOptions.memoryPrecheck = !opts.noMemoryPrecheck;
  searchOptions.verifyIR = opts.verifyIR;
  searchOptions.cluster = cluster;
  searchOptions.jobs =
      opts.jobs ? unsigned(opts.jobs)
                : llvm::hardware_concurrency().compute_thread_count();

  space.devices = devices;
  space.allowFewerDevices = opts.allowFewer;
  space.maxMicrobatches = opts.maxMicrobatches;
  space.maxDP = opts.maxDP;
  space.maxTP = opts.maxTP;
  space.maxPP = opts.maxPP;
  space.training = opts.training;
  space.maxZero = opts.maxZero;
  space.tryRecompute = opts.recompute;
  space.stageMeshes = opts.stageMeshes;
  for (const LevelSpec &level : cluster.levels)
    space.levels.push_back(level.size);

  return success();
}

/// --distir-programs: DistIR's own MLP programs instead of dist-dtp's.
static LogicalResult useDistIRPrograms(const Options &opts,
                                       const ModelSource &source,
                                       SearchOptions &searchOptions,
                                       SearchSpace &space) {
  if (source.kind != ModelSource::MLP || !opts.training)
    return report(
        "--distir-programs needs --model mlp:LAYERS,DIM and --training");
  if (searchOptions.simulator.costModel != CostModelKind::DistIRCompat)
    return report("--distir-programs needs --cost-model distir-compat");
  if (opts.fast || opts.strategy != "grid" || opts.maxZero > 0 ||
      opts.recompute || opts.stageTransfer != "send" || opts.stageMeshes)
    return report("--distir-programs takes none of --fast, --strategy per-op, "
                  "--zero, --recompute, --stage-transfer, --stage-meshes: "
                  "DistIR's programs have one structure");
  MLPOptions mlp;
  mlp.layers = source.layers;
  mlp.dim = source.dim;
  mlp.dtype = source.dtype;
  searchOptions.distirMLP = mlp;
  space.distirPrograms = true;
  return success();
}

/// The CSV, JSON and plot files asked for.
static LogicalResult writeReports(const Options &opts,
                                  const SearchSummary &summary,
                                  const std::vector<ConfigResult> &results,
                                  const std::vector<size_t> &ranking,
                                  bool plotIsPNG) {
  if (!opts.csvFile.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    writeCSV(os, results, ranking);
    if (failed(writeFile(opts.csvFile, text)))
      return failure();
  }
  if (!opts.jsonFile.empty() &&
      failed(writeFile(
          opts.jsonFile,
          llvm::formatv("{0:2}\n", toJSON(summary, results, ranking)).str())))
    return failure();
  if (!opts.plotFile.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    writeSVG(os, summary, results, ranking);
    if (plotIsPNG) {
      std::string error;
      if (!writePlotPNG(text, opts.plotFile, error))
        return report("--plot: " + error);
    } else if (failed(writeFile(opts.plotFile, text))) {
      return failure();
    }
  }

  return success();
}

/// --timing: each configuration's transform and simulation, then the totals.
static void printTiming(const std::vector<ConfigResult> &results,
                        const SearchRun &run, unsigned jobs,
                        double secondsBeforeReports) {
  double transform = 0, simulate = 0;
  for (const ConfigResult &r : results) {
    transform += r.transformSeconds;
    simulate += r.simulateSeconds;
    const SearchConfig &c = r.config;
    llvm::errs() << llvm::formatv(
        "timing batch {0} D/T/P/K {1}/{2}/{3}/{4} {5} {6}: transform "
        "{7:f2} ms, simulate {8:f2} ms",
        c.batch, c.dp, c.getTPText(), c.pp, c.microbatches,
        c.schedule.empty() ? "-" : c.schedule, c.mapping,
        r.transformSeconds * 1e3, r.simulateSeconds * 1e3);
    if (!r.fullSimulationReason.empty())
      llvm::errs() << " (full simulation, not a template replay: "
                   << r.fullSimulationReason << ")";
    llvm::errs() << "\n";
  }
  size_t n = results.size();
  llvm::errs() << llvm::formatv(
      "build {0:f3} s, search {1:f3} s with {2} jobs: {3} configurations, "
      "per configuration {4:f2} ms (transform {5:f2} ms, simulate {6:f2} "
      "ms), total {7:f3} s before reports\n",
      run.buildSeconds, run.searchSeconds, jobs, n,
      (transform + simulate) / n * 1e3, transform / n * 1e3, simulate / n * 1e3,
      secondsBeforeReports);
}

/// Why no configuration fits, by status, with the first rejection's reason.
static std::string describeNoFit(const std::vector<ConfigResult> &results) {
  size_t counts[4] = {0, 0, 0, 0};
  const ConfigResult *firstRejected = nullptr;
  for (const ConfigResult &r : results) {
    ++counts[static_cast<unsigned>(r.status)];
    if (r.status != ConfigStatus::OutOfMemory && !firstRejected)
      firstRejected = &r;
  }
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "no configuration fits: of " << results.size() << " configurations, "
     << counts[unsigned(ConfigStatus::OutOfMemory)]
     << " exceed the device memory, " << counts[unsigned(ConfigStatus::Skipped)]
     << " were rejected by dist-dtp"
     << " and " << counts[unsigned(ConfigStatus::Failed)]
     << " failed to simulate";
  if (firstRejected)
    os << " (first: " << firstRejected->config.getPassOptions() << ": "
       << firstRejected->reason << ")";
  return message;
}

/// --emit-best and --trace-best: the best configuration's program and its
/// simulated trace.
static LogicalResult writeBest(const Options &opts, SearchRun &run,
                               ArrayRef<int64_t> batches,
                               const ModelSource &source,
                               const SearchOptions &searchOptions,
                               const SearchConfig &best) {
  size_t which = llvm::find(batches, best.batch) - batches.begin();
  std::string error;
  OwningOpRef<ModuleOp> transformed = transformProgram(
      *run.modules[which], source.entry, best, searchOptions, error);
  if (!transformed)
    return report("cannot transform the best configuration: " + error);
  if (failed(verify(*transformed)))
    return report("the best configuration's program does not verify");
  if (!opts.emitBest.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    transformed->print(os);
    os << "\n";
    if (failed(writeFile(opts.emitBest, text)))
      return failure();
  }
  if (!opts.traceBest.empty()) {
    SimulatorOptions simOptions = searchOptions.simulator;
    simOptions.batchSize = best.batch;
    FailureOr<SimulationResult> sim =
        simulate(findStepFunction(*transformed, source.entry),
                 searchOptions.cluster, simOptions);
    if (failed(sim))
      return failure();
    if (failed(writeFile(opts.traceBest,
                         llvm::formatv("{0}", sim->toChromeTrace()).str())))
      return failure();
  }
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Options opts;
  cl::HideUnrelatedOptions(opts.category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "DistIR search: enumerates data/tensor/pipeline-parallel "
      "configurations, simulates each on a cluster and ranks them\n");

  using Clock = std::chrono::steady_clock;
  auto startTime = Clock::now();

  ModelSource source;
  if (failed(readModelSource(opts, source)))
    return 1;
  FailureOr<SmallVector<int64_t>> batches = readBatches(opts);
  if (failed(batches))
    return 1;
  int64_t devices = 0;
  FailureOr<Cluster> cluster = readCluster(opts, source, devices);
  bool plotIsPNG = false;
  if (failed(cluster) || failed(checkSearchOptions(opts)))
    return 1;
  // Output files: their directories exist (or the error is said) before
  // the search runs.
  for (const std::string &path :
       {opts.csvFile.getValue(), opts.jsonFile.getValue(),
        opts.plotFile.getValue(), opts.emitBest.getValue(),
        opts.traceBest.getValue()})
    if (failed(prepareOutputFile(path)))
      return 1;

  SearchOptions searchOptions;
  SearchSpace space;
  if (failed(readPlotFormat(opts, plotIsPNG)) ||
      failed(buildSearch(opts, *cluster, devices, searchOptions, space)))
    return 1;

  if (opts.distirPrograms &&
      failed(useDistIRPrograms(opts, source, searchOptions, space)))
    return 1;

  // Build or import the program once per batch size.
  std::unique_ptr<MLIRContext> context = createSearchContext();
  ScopedDiagnosticHandler printErrors(context.get(), [](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return success();
    // The model file's position (an ONNX node's), when there is one.
    Location loc = diag.getLocation();
    while (auto name = dyn_cast<NameLoc>(loc))
      loc = name.getChildLoc();
    if (auto file = dyn_cast<FileLineColLoc>(loc))
      if (file.getFilename() != "<model>")
        llvm::errs() << file.getFilename().getValue() << ":" << file.getLine()
                     << ":" << file.getColumn() << ": ";
    llvm::errs() << "error: " << diag.str() << "\n";
    return success();
  });
  if (opts.strategy == "per-op") {
    PerOpRequest request;
    request.source = &source;
    request.batch = batches->front();
    request.training = opts.training;
    request.cluster = *cluster;
    request.devices = devices;
    request.simulator = searchOptions.simulator;
    request.top = opts.top;
    request.emitBest = opts.emitBest;
    request.traceBest = opts.traceBest;
    request.jsonFile = opts.jsonFile;
    request.unflatten = opts.perOpUnflatten;
    return runPerOpStrategy(request, context.get());
  }
  // Progress bar on a terminal.
  bool showProgress =
      !opts.noProgress && llvm::sys::Process::StandardErrIsDisplayed();
  if (showProgress)
    searchOptions.progress = [](size_t done, size_t total) {
      const unsigned width = 40;
      unsigned filled = static_cast<unsigned>(width * done / total);
      llvm::errs() << "\r[" << std::string(filled, '#')
                   << std::string(width - filled, ' ') << "] " << done << "/"
                   << total << " configurations";
      if (done == total)
        llvm::errs() << "\r" << std::string(width + 40, ' ') << "\r";
      llvm::errs().flush();
    };
  FailureOr<SearchRun> run =
      searchModel(source, *batches, space, searchOptions, context.get());
  if (failed(run))
    return 1;
  auto searchedTime = Clock::now();
  // Deep hierarchies: said once, so the table is read knowing it.
  if (run->truncatedMappings > 0)
    llvm::errs() << "note: the cluster's " << space.levels.size()
                 << " levels give more than " << space.maxMappings
                 << " device mappings for " << run->truncatedMappings
                 << " D/T/P choice(s); those try only tp-inner and "
                    "dp-inner\n";
  if (run->results.empty())
    return fail("no configuration to search (check --max-dp, --max-tp and "
                "--max-pp)");
  std::vector<ConfigResult> &results = run->results;
  std::vector<size_t> &ranking = run->ranking;

  // Reports.
  SearchSummary summary;
  summary.model = opts.model;
  summary.cluster = opts.clusterSpec;
  summary.devices = devices;
  summary.capacityBytes = cluster->device.memoryCapacity;
  summary.training = opts.training;
  summary.costModel = opts.costModel;
  summary.batchSweep = !opts.batchSweep.empty();
  summary.tensorParallel = run->tensorParallel;
  printTable(llvm::outs(), summary, results, ranking, opts.top);
  llvm::outs().flush();

  if (failed(writeReports(opts, summary, results, ranking, plotIsPNG)))
    return 1;
  if (opts.timing)
    printTiming(
        results, *run, searchOptions.jobs,
        std::chrono::duration<double>(searchedTime - startTime).count());
  if (ranking.empty())
    return fail(describeNoFit(results));
  if ((!opts.emitBest.empty() || !opts.traceBest.empty()) &&
      failed(writeBest(opts, *run, *batches, source, searchOptions,
                       results[ranking.front()].config)))
    return 1;

  // Tearing down large modules is slow and the process is about to exit.
  run->releaseModules();
  return 0;
}
