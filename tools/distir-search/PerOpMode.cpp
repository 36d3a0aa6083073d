//===- PerOpMode.cpp - distir-search --strategy per-op --------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// PaSE's search as a distir-search mode: the same cost graph, solver and
// emitter as the dist-pase pass, then the simulator on the emitted program,
// so that the predicted cost and the simulated step are reported side by
// side.
//
//===----------------------------------------------------------------------===//

#include "PerOpMode.h"

#include "DistIR/Dialect/Dist/Transforms/PerOpSearch.h"
#include "DistIR/Search/PerOp.h"
#include "DistIR/Tools/ToolUtils.h"

#include "mlir/IR/Verifier.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <chrono>

using namespace mlir;
using namespace distir;
using namespace distir::search;

static int fail(const Twine &msg) {
  llvm::errs() << "error: " << msg << "\n";
  return 1;
}

int distir::search::runPerOpStrategy(const PerOpRequest &request,
                                     MLIRContext *context) {
  using Clock = std::chrono::steady_clock;
  OwningOpRef<ModuleOp> module =
      buildProgram(*request.source, request.batch, request.training, context);
  if (!module)
    return 1;
  auto function = module->lookupSymbol<func::FuncOp>(request.source->entry);
  if (!function)
    return fail("the program has no function @" + request.source->entry);

  std::string error;
  auto record = [&](const Twine &msg) {
    if (error.empty())
      error = msg.str();
  };
  pase::PerOpOptions options;
  options.devices = request.devices;
  options.model = request.simulator.costModel;
  SimulatorOptions simOptions = request.simulator;
  simOptions.batchSize = request.batch;

  /// Emits `config` (or the problem's optimum) into `target`'s entry and
  /// simulates it: the predicted and the simulated step.
  struct Outcome {
    double predicted = 0, simulated = 0;
    int64_t peak = 0;
  };
  auto emitAndSimulate = [&](ModuleOp target, pase::PerOpProblem &problem,
                             pase::Strategy &chosen,
                             Outcome &outcome) -> LogicalResult {
    auto entry = target.lookupSymbol<func::FuncOp>(request.source->entry);
    pase::annotateStrategy(problem, chosen);
    if (failed(pase::emitStrategy(entry, problem, chosen, record)))
      return failure();
    if (failed(verify(target))) {
      record("the emitted program does not verify");
      return failure();
    }
    auto step =
        target.lookupSymbol<func::FuncOp>(request.source->entry + "_pase");
    FailureOr<SimulationResult> sim =
        simulate(step, request.cluster, simOptions);
    if (failed(sim))
      return failure();
    outcome.predicted = chosen.cost;
    outcome.simulated = sim->latency;
    for (auto &[device, report] : sim->devices)
      outcome.peak = std::max(outcome.peak, report.peakBytes);
    if (!request.traceBest.empty() && target == *module &&
        failed(writeFile(request.traceBest,
                         llvm::formatv("{0}", sim->toChromeTrace()).str())))
      return failure();
    return success();
  };

  auto start = Clock::now();
  FailureOr<dist::PerOpSearch> search =
      dist::searchPerOp(function, request.cluster, options,
                        /*breadthFirst=*/false, request.unflatten, record);
  if (failed(search))
    return error.empty() ? 1 : fail(error);
  pase::PerOpProblem *problem = &search->problem;
  pase::Strategy *strategy = &search->strategy;
  double searchSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();

  // The hand-written baselines, each on its own copy of the program in the
  // form the search kept (a batch split reads the same dimensions).
  struct Baseline {
    const char *name;
    pase::BaselineKind kind;
    Outcome outcome;
    int64_t fallbacks = 0;
  };
  SmallVector<Baseline> baselines = {
      {"data parallel", pase::BaselineKind::DataParallel, {}},
      {"one weird trick", pase::BaselineKind::OneWeirdTrick, {}}};
  // They are what a user would write by hand: they ignore annotations.
  pase::PerOpOptions baselineOptions = options;
  baselineOptions.followAnnotations = false;
  for (Baseline &baseline : baselines) {
    OwningOpRef<ModuleOp> copy = module->clone();
    auto entry = copy->lookupSymbol<func::FuncOp>(request.source->entry);
    FailureOr<pase::PerOpProblem> problem = pase::buildPerOpProblem(
        entry, request.cluster, baselineOptions, record);
    if (failed(problem))
      return error.empty() ? 1 : fail(error);
    FailureOr<pase::BaselineStrategy> chosen =
        pase::baselineStrategy(*problem, baseline.kind, request.devices);
    if (failed(chosen) ||
        failed(emitAndSimulate(*copy, *problem, chosen->strategy,
                               baseline.outcome)))
      return error.empty() ? 1 : fail(error);
    baseline.fallbacks = chosen->fallbacks;
  }

  // Per-op rows before emission rewrites the ops away.
  struct Row {
    std::string op, location, split;
    double cost;
  };
  std::vector<Row> rows;
  for (auto [v, op] : llvm::enumerate(problem->ops)) {
    std::string location;
    llvm::raw_string_ostream os(location);
    op->getLoc().print(os);
    rows.push_back({op->getName().getStringRef().str(), location,
                    pase::formatSplit(problem->configs[v][strategy->config[v]]),
                    problem->graph.vertexCost[v][strategy->config[v]]});
  }
  Outcome best;
  if (failed(emitAndSimulate(*module, *problem, *strategy, best)))
    return error.empty() ? 1 : fail(error);

  llvm::raw_ostream &out = llvm::outs();
  out << llvm::formatv("per-op strategy (PaSE) on {0} devices of {1}, batch "
                       "{2}{3}\n",
                       request.devices, request.cluster.name, request.batch,
                       request.training ? ", training step" : "");
  out << llvm::formatv("  {0} ops; dynamic program over GenerateSeq: largest "
                       "dependent set {1} ({2} entries); search {3:f3} s\n",
                       problem->ops.size(), strategy->maxDependentSet,
                       strategy->maxTableSize, searchSeconds);
  std::string replicated;
  for (auto &[name, count] : problem->replicatedOps)
    replicated += llvm::formatv("{0}{1} x{2}", replicated.empty() ? "" : ", ",
                                name, count)
                      .str();
  out << "  replicated (no split rule): "
      << (replicated.empty() ? "none" : replicated) << "\n";
  // A training step: whether its adjoints followed their forward ops.
  for (const std::string &clause :
       dist::describeAdjoints(*problem, options.tieAdjoints))
    out << "  " << clause << "\n";
  if (std::string form = dist::describeForm(*search); !form.empty())
    out << "  form: " << StringRef(form).drop_front(2) << "\n";
  if (problem->truncatedOps)
    out << llvm::formatv("  configurations cut to the {0} cheapest on {1} "
                         "ops\n",
                         options.maxConfigsPerOp, problem->truncatedOps);
  out << llvm::formatv("  predicted step (cost graph): {0:e3} s\n",
                       best.predicted);
  out << llvm::formatv("  simulated step (@{0}_pase): {1:e3} s, peak memory "
                       "{2} B per device\n",
                       request.source->entry, best.simulated, best.peak);
  for (const Baseline &baseline : baselines) {
    out << llvm::formatv("  {0,-16} predicted {1:e3} s, simulated {2:e3} s, "
                         "peak memory {3} B",
                         baseline.name, baseline.outcome.predicted,
                         baseline.outcome.simulated, baseline.outcome.peak);
    if (baseline.fallbacks)
      out << llvm::formatv(" ({0} ops without that split run whole)",
                           baseline.fallbacks);
    out << "\n";
  }
  // The most expensive ops with their splits.
  std::vector<size_t> byCost(rows.size());
  std::iota(byCost.begin(), byCost.end(), 0);
  std::sort(byCost.begin(), byCost.end(), [&](size_t a, size_t b) {
    return rows[a].cost > rows[b].cost ||
           (rows[a].cost == rows[b].cost && a < b);
  });
  out << llvm::formatv("  {0,-22} {1,-34} {2,12}  {3}\n", "op", "loop split",
                       "cost (s)", "location");
  for (size_t i = 0; i < std::min<size_t>(request.top, rows.size()); ++i) {
    const Row &row = rows[byCost[i]];
    out << llvm::formatv("  {0,-22} {1,-34} {2,12:e3}  {3}\n", row.op,
                         row.split, row.cost, row.location);
  }

  if (!request.jsonFile.empty()) {
    const std::string &otherError =
        search->unflattened ? search->writtenError : search->unflattenError;
    llvm::json::Array ops;
    for (const Row &row : rows)
      ops.push_back(llvm::json::Object{{"op", row.op},
                                       {"location", row.location},
                                       {"split", row.split},
                                       {"cost_s", row.cost}});
    llvm::json::Object root{
        {"strategy", "per-op"},
        {"cluster", request.cluster.name},
        {"devices", request.devices},
        {"batch", request.batch},
        {"training", request.training},
        {"predicted_step_s", best.predicted},
        {"simulated_step_s", best.simulated},
        {"peak_bytes", best.peak},
        {"baselines",
         llvm::json::Array{
             llvm::json::Object{
                 {"name", baselines[0].name},
                 {"predicted_step_s", baselines[0].outcome.predicted},
                 {"simulated_step_s", baselines[0].outcome.simulated}},
             llvm::json::Object{
                 {"name", baselines[1].name},
                 {"predicted_step_s", baselines[1].outcome.predicted},
                 {"simulated_step_s", baselines[1].outcome.simulated}}}},
        {"largest_dependent_set", strategy->maxDependentSet},
        // Adjoint ops that followed their forward op, kept apart, or were
        // searched on their own (tying not needed).
        {"adjoint_ops_tied", problem->tiedOps},
        {"adjoint_ops_apart", problem->untiedAdjoints},
        {"adjoint_ops_untied", problem->adjointsNotTied},
        {"unflattened", search->unflattened},
        // Why the form not kept has no optimum (null: it has one, or the
        // rewrite did not change the program).
        {"other_form_error", otherError.empty()
                                 ? llvm::json::Value(nullptr)
                                 : llvm::json::Value(otherError)},
        {"other_form_predicted_step_s",
         search->otherCost ? llvm::json::Value(*search->otherCost)
                           : llvm::json::Value(nullptr)},
        {"search_s", searchSeconds},
        {"ops", std::move(ops)}};
    if (failed(writeFile(
            request.jsonFile,
            llvm::formatv("{0:2}\n", llvm::json::Value(std::move(root)))
                .str())))
      return 1;
  }
  if (!request.emitBest.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    os << "\n";
    if (failed(writeFile(request.emitBest, text)))
      return 1;
  }
  return 0;
}
