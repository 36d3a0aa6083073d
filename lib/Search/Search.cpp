//===- Search.cpp - Search over data/tensor/pipeline strategies -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/Search.h"
#include "DistIR/Analysis/OpCost.h"
#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/Dialect/Dist/Transforms/PipelineSchedule.h"
#include "DistIR/InitAllDialects.h"
#include "DistIR/Synthesis/Synthesis.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

using namespace mlir;
using namespace distir;
using namespace distir::search;

//===----------------------------------------------------------------------===//
// Configurations
//===----------------------------------------------------------------------===//

int64_t SearchConfig::getNumDevices() const {
  if (stageTp.empty())
    return dp * tp * pp;
  int64_t meshes = 0;
  for (int64_t degree : stageTp)
    meshes += degree;
  return dp * meshes;
}

std::string SearchConfig::getTPText() const {
  if (stageTp.empty())
    return std::to_string(tp);
  std::string text;
  for (int64_t degree : stageTp)
    text += (text.empty() ? "" : ",") + std::to_string(degree);
  return text;
}

std::string SearchConfig::getPassOptions() const {
  std::string options;
  llvm::raw_string_ostream os(options);
  if (distirProgram) {
    os << "distir-dhp=" << dp << "," << tp << "," << pp << "," << microbatches;
    return options;
  }
  os << "dp=" << dp;
  if (stageTp.empty())
    os << " tp=" << tp;
  else
    os << " stage-tp=" << getTPText();
  os << " pp=" << pp << " microbatches=" << microbatches;
  if (pp > 1)
    os << " schedule=" << (schedule.empty() ? "gpipe" : schedule);
  os << " mapping=" << mapping;
  return options;
}

/// The parallelism matrix (rows dp, tp, pp; columns `levels`) of a
/// dist-dtp mixed-radix order, least significant digit first, filling the
/// levels from the innermost.
static synth::ParallelismMatrix
matrixOfOrder(ArrayRef<std::pair<int, int64_t>> order,
              ArrayRef<int64_t> levels) {
  synth::ParallelismMatrix matrix(3, std::vector<int64_t>(levels.size(), 1));
  int64_t level = static_cast<int64_t>(levels.size()) - 1;
  int64_t room = levels.empty() ? 1 : levels.back();
  for (auto [axis, factor] : order) {
    while (factor > 1 && level >= 0) {
      if (room == 1) {
        if (--level < 0)
          break;
        room = levels[level];
        continue;
      }
      int64_t take = std::gcd(factor, room);
      if (take == 1)
        return {}; // does not fit the levels
      matrix[axis][level] *= take;
      factor /= take;
      room /= take;
    }
    if (factor > 1)
      return {};
  }
  return matrix;
}

std::vector<std::string> search::enumerateMappings(ArrayRef<int64_t> levels,
                                                   int64_t dp, int64_t tp,
                                                   int64_t pp, size_t limit,
                                                   bool *truncated) {
  // The levels the devices occupy, innermost first.
  int64_t remaining = dp * tp * pp;
  std::vector<int64_t> used;
  for (int64_t size : llvm::reverse(levels)) {
    int64_t take = std::gcd(size, remaining);
    used.insert(used.begin(), take);
    remaining /= take;
  }
  if (remaining != 1)
    return {};
  const int64_t sizes[3] = {dp, tp, pp};
  synth::ParallelismMatrix tpInner =
      matrixOfOrder({{1, tp}, {0, dp}, {2, pp}}, used);
  synth::ParallelismMatrix dpInner =
      matrixOfOrder({{0, dp}, {1, tp}, {2, pp}}, used);
  std::vector<std::string> names;
  std::vector<synth::ParallelismMatrix> matrices =
      synth::enumerateParallelismMatrices(sizes, used, limit);
  if (matrices.size() > limit) {
    if (truncated)
      *truncated = true;
    if (!tpInner.empty())
      names.push_back("tp-inner");
    if (!dpInner.empty() && dpInner != tpInner)
      names.push_back("dp-inner");
    return names;
  }
  for (const synth::ParallelismMatrix &matrix : matrices) {
    if (matrix == tpInner) {
      names.push_back("tp-inner");
      continue;
    }
    if (matrix == dpInner) {
      names.push_back("dp-inner");
      continue;
    }
    // Innermost level first; inside a level tp, dp, pp; adjacent factors of
    // one axis merged.
    SmallVector<std::pair<int, int64_t>> order;
    for (int64_t level = static_cast<int64_t>(used.size()) - 1; level >= 0;
         --level)
      for (int axis : {1, 0, 2}) {
        int64_t factor = matrix[axis][level];
        if (factor == 1)
          continue;
        if (!order.empty() && order.back().first == axis)
          order.back().second *= factor;
        else
          order.push_back({axis, factor});
      }
    std::string name;
    static const char *axisNames[3] = {"dp", "tp", "pp"};
    for (auto [axis, factor] : order)
      name += (name.empty() ? "" : ",") + std::string(axisNames[axis]) + ":" +
              std::to_string(factor);
    names.push_back(name.empty() ? "tp-inner" : name);
  }
  // The familiar names first, then the explicit orders, each once.
  std::vector<std::string> ordered;
  for (const char *familiar : {"tp-inner", "dp-inner"})
    if (llvm::is_contained(names, familiar))
      ordered.push_back(familiar);
  for (const std::string &name : names)
    if (!llvm::is_contained(ordered, name))
      ordered.push_back(name);
  return ordered;
}

static SmallVector<int64_t> powersOfTwoUpTo(int64_t limit) {
  SmallVector<int64_t> powers;
  for (int64_t p = 1; p <= limit; p *= 2)
    powers.push_back(p);
  return powers;
}

std::vector<SearchConfig> search::enumerateConfigs(const SearchSpace &space,
                                                   int64_t batch,
                                                   int64_t *truncated) {
  std::vector<SearchConfig> configs;
  auto within = [](int64_t degree, int64_t limit) {
    return limit <= 0 || degree <= limit;
  };
  // Every microbatch count, schedule, mapping and memory transform of one
  // mesh shape (per-stage degrees `stageTp`, or `tp` everywhere).
  auto addShape = [&](int64_t dp, int64_t tp, int64_t pp,
                      ArrayRef<int64_t> stageTp) {
    int64_t maxK =
        std::max<int64_t>(1, std::min(space.maxMicrobatches, batch / dp));
    // DistIR pipelines microbatches only over stages.
    if (space.distirPrograms && pp == 1)
      maxK = 1;
    for (int64_t k : powersOfTwoUpTo(maxK)) {
      SmallVector<StringRef, 3> schedules;
      if (pp == 1)
        schedules = {""};
      else if (space.distirPrograms)
        schedules = {"pipedream"};
      else if (k > 1 && space.training)
        schedules = {"gpipe", "1f1b", "eager-1f1b"};
      else
        schedules = {"gpipe"};
      std::vector<std::string> mappings;
      // (Per-stage meshes follow each other: tp-inner or dp-inner inside.)
      if (!space.levels.empty() && stageTp.empty()) {
        bool cut = false;
        mappings = enumerateMappings(space.levels, dp, tp, pp,
                                     space.maxMappings, &cut);
        if (cut && truncated && k == 1 && !space.distirPrograms)
          ++*truncated;
      }
      if (space.distirPrograms)
        mappings = {"pp:" + std::to_string(pp) + ",tp:" + std::to_string(tp) +
                    ",dp:" + std::to_string(dp)};
      if (mappings.empty()) {
        mappings = {"tp-inner"};
        if (dp > 1 && tp > 1)
          mappings.push_back("dp-inner");
      }
      // Memory transforms of training steps: ZeRO needs replicas.
      int64_t maxZero = space.training && dp > 1 && !space.distirPrograms
                            ? std::min<int64_t>(space.maxZero, 3)
                            : 0;
      SmallVector<Recompute, 3> recomputes = {Recompute::None};
      if (space.training && space.tryRecompute && !space.distirPrograms)
        recomputes.append({Recompute::Half, Recompute::All});
      for (int64_t zero = 0; zero <= maxZero; ++zero)
        for (Recompute recompute : recomputes)
          for (StringRef schedule : schedules) {
            for (const std::string &mapping : mappings) {
              SearchConfig config;
              config.batch = batch;
              config.dp = dp;
              config.tp = tp;
              config.pp = pp;
              config.stageTp.assign(stageTp.begin(), stageTp.end());
              config.microbatches = k;
              config.schedule = schedule.str();
              config.mapping = mapping;
              config.zero = zero;
              config.recompute = recompute;
              config.distirProgram = space.distirPrograms;
              configs.push_back(std::move(config));
            }
          }
    }
  };
  for (int64_t dp : powersOfTwoUpTo(space.devices)) {
    // Every data-parallel replica needs at least one sample.
    if (dp > batch || !within(dp, space.maxDP))
      continue;
    for (int64_t tp : powersOfTwoUpTo(space.devices / dp)) {
      for (int64_t pp : powersOfTwoUpTo(space.devices / (dp * tp))) {
        int64_t used = dp * tp * pp;
        if (used != space.devices && !space.allowFewerDevices)
          continue;
        if (!within(tp, space.maxTP) || !within(pp, space.maxPP))
          continue;
        addShape(dp, tp, pp, {});
      }
    }
    if (!space.stageMeshes || space.distirPrograms)
      continue;
    // Per-stage degrees: tuples of powers of two, not all equal (those are
    // the shapes above), whose meshes use the devices.
    SmallVector<int64_t> degrees = powersOfTwoUpTo(space.devices / dp);
    if (space.maxTP > 0)
      llvm::erase_if(degrees, [&](int64_t t) { return t > space.maxTP; });
    for (int64_t pp = 2; pp <= std::min<int64_t>(4, space.devices / dp);
         pp *= 2) {
      if (!within(pp, space.maxPP))
        continue;
      SmallVector<size_t> digit(pp, 0);
      while (true) {
        SmallVector<int64_t> stageTp;
        int64_t sum = 0;
        for (size_t d : digit) {
          stageTp.push_back(degrees[d]);
          sum += degrees[d];
        }
        int64_t used = dp * sum;
        if (!llvm::all_equal(stageTp) &&
            (used == space.devices ||
             (space.allowFewerDevices && used < space.devices)))
          addShape(dp, *llvm::max_element(stageTp), pp, stageTp);
        // Next tuple, the last stage's degree fastest.
        int64_t i = pp - 1;
        while (i >= 0 && ++digit[i] == degrees.size())
          digit[i--] = 0;
        if (i < 0)
          break;
      }
    }
  }
  return configs;
}

StringRef search::stringifyConfigStatus(ConfigStatus status) {
  switch (status) {
  case ConfigStatus::Ok:
    return "ok";
  case ConfigStatus::OutOfMemory:
    return "oom";
  case ConfigStatus::Skipped:
    return "skipped";
  case ConfigStatus::Failed:
    return "failed";
  }
  llvm_unreachable("unknown status");
}

//===----------------------------------------------------------------------===//
// Programs and contexts
//===----------------------------------------------------------------------===//

FailureOr<SearchProgram>
search::serializeProgram(ModuleOp module, StringRef entry, int64_t batch) {
  SearchProgram program;
  program.batch = batch;
  program.entry = entry.str();
  llvm::raw_string_ostream os(program.bytecode);
  if (failed(writeBytecodeToFile(module, os)))
    return failure();
  return program;
}

std::unique_ptr<MLIRContext> search::createSearchContext() {
  DialectRegistry registry;
  registerAllDialects(registry);
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

OwningOpRef<ModuleOp> search::parseProgram(const SearchProgram &program,
                                           MLIRContext *context) {
  return parseSourceString<ModuleOp>(program.bytecode, ParserConfig(context),
                                     "program");
}

/// Collapses a diagnostic into one line.
static std::string oneLine(StringRef text) {
  std::string line;
  bool space = false;
  for (char c : text.trim()) {
    if (c == '\n' || c == '\r' || c == '\t') {
      space = true;
      continue;
    }
    if (space && !line.empty())
      line += ' ';
    space = false;
    line += c;
  }
  return line;
}

namespace {
/// Records the first error reported in a context while it is alive.
class ErrorCapture {
public:
  explicit ErrorCapture(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error && first.empty())
            first = oneLine(diag.str());
          return success();
        }) {}
  std::string first;

private:
  ScopedDiagnosticHandler handler;
};
} // namespace

StringRef search::stringifyRecompute(Recompute recompute) {
  switch (recompute) {
  case Recompute::None:
    return "none";
  case Recompute::Half:
    return "half";
  case Recompute::All:
    return "all";
  }
  llvm_unreachable("unknown recompute");
}

/// The layers Recompute::Half recomputes: the first half (rounded down) of
/// each pipeline stage's layers, stages as dist-dtp cuts them (layer l in
/// stage l * pp / layers). One stage of one layer each is an error: it
/// would recompute nothing more than none, or the same as all.
static FailureOr<SmallVector<int64_t>>
getHalfRecomputeLayers(ModuleOp module, StringRef entry, int64_t pp,
                       std::string &error) {
  int64_t numLayers = 0;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isDeclaration() && (entry.empty() || func.getName() == entry))
      numLayers = std::max(numLayers, dist::getNumLayers(func));
  SmallVector<SmallVector<int64_t>> stages(pp);
  for (int64_t l = 0; l < numLayers; ++l)
    stages[l * pp / numLayers].push_back(l);
  SmallVector<int64_t> chosen;
  for (const SmallVector<int64_t> &stage : stages)
    chosen.append(stage.begin(), stage.begin() + stage.size() / 2);
  if (chosen.empty()) {
    error = "recompute=half needs a stage of two layers or more (" +
            std::to_string(std::max<int64_t>(numLayers, 0)) + " layers over " +
            std::to_string(pp) + " stages)";
    return failure();
  }
  return chosen;
}

OwningOpRef<ModuleOp> search::transformProgram(ModuleOp source, StringRef entry,
                                               const SearchConfig &config,
                                               const SearchOptions &options,
                                               std::string &error,
                                               bool annotate) {
  OwningOpRef<ModuleOp> module = source.clone();
  if (failed(
          transformInPlace(*module, entry, config, options, error, annotate)))
    return {};
  return module;
}

/// Adds the published DistIR's own training step for `config` to `module`
/// as `<entry>_dtp` (SearchOptions::distirMLP).
static LogicalResult addDistIRStep(ModuleOp module, StringRef entry,
                                   const SearchConfig &config, MLPOptions mlp,
                                   std::string &error) {
  ErrorCapture capture(module.getContext());
  if (config.zero || config.recompute != Recompute::None ||
      (config.pp > 1 && config.schedule != "pipedream")) {
    error = "DistIR's programs have no ZeRO, recomputation or schedule other "
            "than pipedream";
    return failure();
  }
  mlp.batch = config.batch;
  mlp.training = true;
  OwningOpRef<ModuleOp> built = buildDistIRMLP(
      mlp, {config.dp, config.tp, config.pp, config.microbatches},
      module.getLoc());
  if (!built) {
    error = capture.first.empty() ? std::string("--distir-dhp failed")
                                  : capture.first;
    return failure();
  }
  // (A handle, not a reference: the op moves to `module` below.)
  auto step = *built->getOps<func::FuncOp>().begin();
  step.setSymName((entry + "_dtp").str());
  step->remove();
  module.push_back(step);
  return success();
}

LogicalResult search::transformInPlace(ModuleOp module, StringRef entry,
                                       const SearchConfig &config,
                                       const SearchOptions &options,
                                       std::string &error, bool annotate) {
  if (options.distirMLP)
    return addDistIRStep(module, entry, config, *options.distirMLP, error);
  MLIRContext *context = module.getContext();
  ErrorCapture capture(context);
  PassManager pm(context);
  // dist-dtp's output is checked by its own tests; re-verifying every
  // transformed program would double the transform time.
  pm.enableVerifier(options.verifyIR);
  std::unique_ptr<Pass> dtp = dist::createDistDTPPass();
  std::string optionError;
  std::string passOptions = config.getPassOptions();
  if (!entry.empty())
    passOptions += " entry=" + entry.str();
  if (annotate)
    passOptions += " annotate-schedule=true";
  // dist-dtp plans stage transfers and prices its tensor-parallel choices
  // on the module's cluster: the one searched.
  if (options.stageTransfer != "send")
    passOptions += " stage-transfer=" + options.stageTransfer;
  module->setAttr(dist::DistDialect::getClusterAttrName(),
                  dist::clusterToAttr(context, options.cluster));
  if (failed(dtp->initializeOptions(passOptions, [&](const Twine &msg) {
        optionError = oneLine(msg.str());
        return failure();
      }))) {
    error =
        "dist-dtp{" + config.getPassOptions() + "}: " +
        (optionError.empty() ? std::string("invalid options") : optionError);
    return failure();
  }
  if (config.recompute != Recompute::None) {
    dist::DistRecomputePassOptions recompute;
    if (config.recompute == Recompute::Half) {
      FailureOr<SmallVector<int64_t>> layers =
          getHalfRecomputeLayers(module, entry, config.pp, error);
      if (failed(layers))
        return failure();
      recompute.layers = *layers;
    }
    pm.addPass(dist::createDistRecomputePass(recompute));
  }
  pm.addPass(std::move(dtp));
  if (config.zero > 0)
    pm.addPass(
        dist::createDistZeroPass(dist::DistZeroPassOptions{config.zero}));
  if (options.cleanup) {
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (failed(pm.run(module))) {
    error = capture.first.empty()
                ? std::string(config.zero || config.recompute != Recompute::None
                                  ? "dist-dtp with the memory transforms failed"
                                  : "dist-dtp failed")
                : capture.first;
    return failure();
  }
  // The placement check changes nothing: no IR verification after it.
  if (options.verify) {
    PassManager check(context);
    check.enableVerifier(false);
    check.addPass(dist::createDistVerifyPlacementPass());
    if (failed(check.run(module))) {
      error = capture.first.empty()
                  ? std::string("dist-verify-placement failed")
                  : capture.first;
      return failure();
    }
  }
  return success();
}

func::FuncOp search::findStepFunction(ModuleOp module, StringRef entry) {
  auto step = module.lookupSymbol<func::FuncOp>((entry + "_dtp").str());
  if (step && !step.isExternal())
    return step;
  return {};
}

ModelWork search::getModelWork(ModuleOp program, StringRef entry) {
  ModelWork work;
  auto func = program.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return work;
  std::map<std::string, double> byDType;
  for (Operation &op : func.getBody().front().without_terminator()) {
    bool touchesTensors =
        llvm::any_of(op.getOperandTypes(),
                     [](Type t) { return isa<TensorType>(t); }) ||
        llvm::any_of(op.getResultTypes(),
                     [](Type t) { return isa<TensorType>(t); });
    if (!touchesTensors)
      continue;
    ComputeWork w = getComputeWork(&op);
    if (w.isFree)
      continue;
    work.flops += w.flops;
    byDType[w.dtype] += w.flops;
  }
  double most = -1;
  for (const auto &[dtype, flops] : byDType)
    if (flops > most) {
      most = flops;
      work.dtype = dtype;
    }
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    auto batch = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                    "dist.batch_dim");
    if (!type || !batch || type.getRank() < 2 ||
        !type.getElementType().isInteger())
      continue;
    int64_t tokens = 1;
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      if (static_cast<int64_t>(d) != batch.getInt())
        tokens *= size;
    work.tokensPerSample = std::max(work.tokensPerSample, tokens);
  }
  return work;
}

ResidentFootprint search::getResidentFootprint(ModuleOp program,
                                               StringRef entry, int64_t batch) {
  ResidentFootprint footprint;
  auto func = program.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal() || batch < 1)
    return footprint;
  int64_t batchBytes = 0;
  for (BlockArgument arg : func.getArguments()) {
    int64_t bytes = getTensorBytes(arg.getType());
    if (func.getArgAttr(arg.getArgNumber(), "dist.batch_dim"))
      batchBytes += bytes;
    else
      footprint.weightBytes += bytes;
  }
  footprint.batchBytesPerSample = static_cast<double>(batchBytes) / batch;
  return footprint;
}

int64_t search::getResidentLowerBound(const ResidentFootprint &footprint,
                                      const SearchConfig &config) {
  // Batch inputs are streamed a microbatch at a time: each replica holds
  // at least one microbatch's inputs while it holds its weights.
  // ZeRO-3 keeps each weight once over the replicas.
  double devices = static_cast<double>(config.getNumDevices());
  double replicas = config.zero >= 3 ? 1.0 : static_cast<double>(config.dp);
  double total = static_cast<double>(footprint.weightBytes) * replicas +
                 footprint.batchBytesPerSample * config.batch /
                     std::max<int64_t>(config.microbatches, 1);
  return static_cast<int64_t>(total / devices);
}

ConfigResult search::evaluateConfig(ModuleOp source, StringRef entry,
                                    const SearchConfig &config,
                                    const SearchOptions &options) {
  using Clock = std::chrono::steady_clock;
  ConfigResult result;
  result.config = config;
  auto start = Clock::now();
  std::string error;
  OwningOpRef<ModuleOp> module =
      transformProgram(source, entry, config, options, error);
  auto transformed = Clock::now();
  result.transformSeconds =
      std::chrono::duration<double>(transformed - start).count();
  if (!module) {
    result.status = ConfigStatus::Skipped;
    result.reason = error;
    return result;
  }
  func::FuncOp step = findStepFunction(*module, entry);
  if (!step) {
    result.status = ConfigStatus::Failed;
    result.reason =
        "dist-dtp produced no step function @" + entry.str() + "_dtp";
    return result;
  }
  ErrorCapture capture(source.getContext());
  SimulatorOptions simOptions = options.simulator;
  simOptions.batchSize = config.batch;
  // The ranking uses the liveness peak; the static plan is for reports.
  simOptions.planMemory = false;
  simOptions.describeEvents = false;
  simOptions.recordMemoryTimeline = false;
  FailureOr<SimulationResult> sim = simulate(step, options.cluster, simOptions);
  result.simulateSeconds =
      std::chrono::duration<double>(Clock::now() - transformed).count();
  if (failed(sim)) {
    result.status = ConfigStatus::Failed;
    result.reason =
        "simulation failed: " +
        (capture.first.empty() ? std::string("no diagnostic") : capture.first);
    return result;
  }
  setSimulatedOutcome(result, sim->latency, sim->devices,
                      options.cluster.device.memoryCapacity);
  if (config.pp > 1)
    result.stageTransferSeconds = getStageTransferSeconds(config, *sim);
  return result;
}

double search::getStageTransferSeconds(const SearchConfig &config,
                                       const SimulationResult &sim) {
  std::map<int64_t, int64_t> stageOf;
  if (!config.stageTp.empty()) {
    for (int64_t s = 0; s < config.pp; ++s)
      for (int64_t d = 0; d < config.dp; ++d)
        for (int64_t t = 0; t < config.stageTp[s]; ++t)
          stageOf[dist::getStageMeshDeviceId(config.stageTp, config.dp,
                                             config.mapping == "tp-inner", d, t,
                                             s)] = s;
  } else {
    std::string error;
    std::optional<dist::DeviceOrder> order = dist::parseDeviceOrder(
        config.mapping, config.dp, config.tp, config.pp, error);
    if (!order)
      return -1;
    for (int64_t d = 0; d < config.dp; ++d)
      for (int64_t t = 0; t < config.tp; ++t)
        for (int64_t s = 0; s < config.pp; ++s)
          stageOf[dist::getDeviceId(*order, d, t, s)] = s;
  }
  std::vector<double> durations;
  for (const SimEvent &event : sim.events) {
    if (!event.isCommunication)
      continue;
    std::optional<int64_t> stage;
    bool crosses = false;
    for (int64_t device : event.devices) {
      auto it = stageOf.find(device);
      if (it == stageOf.end())
        continue;
      crosses |= stage && *stage != it->second;
      stage = it->second;
    }
    if (crosses)
      durations.push_back(event.duration);
  }
  return sumInOrder(durations);
}

double search::sumInOrder(std::vector<double> values) {
  // Sorted, so that --fast's replay (another order of the same events)
  // gives the same bits.
  llvm::sort(values);
  double sum = 0;
  for (double value : values)
    sum += value;
  return sum;
}

void search::setSimulatedOutcome(ConfigResult &result, double latency,
                                 const std::map<int64_t, DeviceReport> &devices,
                                 int64_t capacity) {
  result.simulated = true;
  result.latency = latency;
  result.throughput = latency > 0 ? result.config.batch / latency : 0;
  bool exceeds = false;
  for (const auto &[device, report] : devices) {
    if (report.peakBytes > result.peakBytes || result.peakDevice < 0) {
      result.peakBytes = report.peakBytes;
      result.peakDevice = device;
      result.peakBreakdown = report.peakBreakdown;
    }
    result.residentBytes = std::max(result.residentBytes, report.residentBytes);
    exceeds |=
        report.exceedsCapacity || (capacity > 0 && report.peakBytes > capacity);
  }
  if (exceeds) {
    result.status = ConfigStatus::OutOfMemory;
    result.reason = "peak memory " + formatBytes(result.peakBytes) +
                    " on device " + std::to_string(result.peakDevice) +
                    " exceeds the capacity " + formatBytes(capacity);
  } else {
    result.status = ConfigStatus::Ok;
  }
}

//===----------------------------------------------------------------------===//
// Parallel driver
//===----------------------------------------------------------------------===//

std::vector<ConfigResult> search::runSearch(ArrayRef<SearchProgram> programs,
                                            ArrayRef<SearchConfig> configs,
                                            const SearchOptions &options) {
  std::vector<ConfigResult> results(configs.size());
  TemplateCache templates;
  // Workers take groups of configurations that differ only in their device
  // mapping (consecutive in the enumeration), so that one worker transforms
  // their --fast template once (TransformCache).
  std::vector<size_t> groupStarts;
  for (size_t i = 0; i < configs.size(); ++i) {
    const SearchConfig &c = configs[i];
    if (i == 0 || !options.fast) {
      groupStarts.push_back(i);
      continue;
    }
    const SearchConfig &p = configs[i - 1];
    if (std::tie(c.batch, c.dp, c.tp, c.pp, c.stageTp, c.microbatches,
                 c.schedule, c.zero, c.recompute) !=
        std::tie(p.batch, p.dp, p.tp, p.pp, p.stageTp, p.microbatches,
                 p.schedule, p.zero, p.recompute))
      groupStarts.push_back(i);
  }
  groupStarts.push_back(configs.size());
  std::atomic<size_t> next{0};
  std::mutex progressMutex;
  size_t done = 0;

  auto worker = [&]() {
    std::unique_ptr<MLIRContext> context = createSearchContext();
    // Declared after the context: its modules die first.
    TransformCache transforms;
    // Programs parsed into this worker's context, by batch.
    std::map<int64_t, OwningOpRef<ModuleOp>> parsed;
    std::map<int64_t, std::string> parseErrors;
    std::map<int64_t, ResidentFootprint> footprints;
    int64_t capacity =
        options.memoryPrecheck ? options.cluster.device.memoryCapacity : 0;
    for (size_t group = next++; group + 1 < groupStarts.size(); group = next++)
      for (size_t i = groupStarts[group]; i < groupStarts[group + 1]; ++i) {
        const SearchConfig &config = configs[i];
        int64_t batch = options.fast
                            ? getTemplateConfig(config, options.training).batch
                            : config.batch;
        const SearchProgram *program = llvm::find_if(
            programs, [&](const SearchProgram &p) { return p.batch == batch; });
        ConfigResult &result = results[i];
        // The program at `b`, parsed into this worker's context once.
        auto getParsed = [&](int64_t b, const SearchProgram &p) {
          auto it = parsed.find(b);
          if (it == parsed.end()) {
            ErrorCapture capture(context.get());
            OwningOpRef<ModuleOp> module = parseProgram(p, context.get());
            if (!module)
              parseErrors[b] = "cannot parse the program: " + capture.first;
            else
              footprints[b] = getResidentFootprint(*module, p.entry, b);
            it = parsed.emplace(b, std::move(module)).first;
          }
          return it;
        };
        if (program == programs.end()) {
          result.config = config;
          result.status = ConfigStatus::Failed;
          result.reason = "no program for batch " + std::to_string(batch);
        } else {
          auto it = getParsed(batch, *program);
          int64_t bound =
              it->second ? getResidentLowerBound(footprints[batch], config) : 0;
          if (!it->second) {
            result.config = config;
            result.status = ConfigStatus::Failed;
            result.reason = parseErrors[batch];
          } else if (capacity > 0 && bound > capacity) {
            // Dropped without a transform or a simulation: what the devices
            // must hold from the start already exceeds their memory.
            result.config = config;
            result.status = ConfigStatus::OutOfMemory;
            result.reason = "weights and inputs need at least " +
                            formatBytes(bound) +
                            " per device, more than the capacity " +
                            formatBytes(capacity) + " (not simulated)";
          } else if (options.fast) {
            auto fullProgram = [&]() -> ModuleOp {
              const SearchProgram *p =
                  llvm::find_if(programs, [&](const SearchProgram &candidate) {
                    return candidate.batch == config.batch;
                  });
              if (p == programs.end())
                return {};
              auto full = getParsed(config.batch, *p);
              return full->second ? *full->second : ModuleOp();
            };
            result =
                estimateConfig(*it->second, program->entry, config, options,
                               &templates, &transforms, fullProgram);
          } else {
            result =
                evaluateConfig(*it->second, program->entry, config, options);
          }
        }
        std::lock_guard<std::mutex> lock(progressMutex);
        ++done;
        if (options.progress)
          options.progress(done, configs.size());
      }
  };

  unsigned jobs = std::max(1u, options.jobs);
  jobs = std::min<size_t>(jobs, std::max<size_t>(1, groupStarts.size() - 1));
  if (jobs == 1) {
    worker();
  } else {
    std::vector<std::thread> threads;
    for (unsigned j = 0; j < jobs; ++j)
      threads.emplace_back(worker);
    for (std::thread &t : threads)
      t.join();
  }
  return results;
}

std::vector<size_t> search::rankResults(ArrayRef<ConfigResult> results) {
  std::vector<size_t> ranking;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].status == ConfigStatus::Ok)
      ranking.push_back(i);
  // Ties keep the enumeration order (std::stable_sort needs a deprecated
  // libstdc++ helper).
  llvm::sort(ranking, [&](size_t a, size_t b) {
    if (results[a].throughput != results[b].throughput)
      return results[a].throughput > results[b].throughput;
    return a < b;
  });
  return ranking;
}
