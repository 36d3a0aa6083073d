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
  OwningOpRef<ModuleOp> module = buildProgram(*request.source, request.batch,
                                              request.training, context);
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
  auto start = Clock::now();
  FailureOr<pase::PerOpProblem> problem =
      pase::buildPerOpProblem(function, request.cluster, options, record);
  if (failed(problem))
    return error.empty() ? 1 : fail(error);
  std::vector<unsigned> order = pase::generateSeq(problem->graph);
  FailureOr<pase::Strategy> strategy =
      pase::solve(problem->graph, order, options.maxTableSize, record);
  if (failed(strategy))
    return fail(error);
  double searchSeconds =
      std::chrono::duration<double>(Clock::now() - start).count();

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
  pase::annotateStrategy(*problem, *strategy);
  if (failed(pase::emitStrategy(function, *problem, *strategy, record)))
    return error.empty() ? 1 : fail(error);
  if (failed(verify(*module)))
    return fail("the emitted program does not verify");
  auto step = module->lookupSymbol<func::FuncOp>(request.source->entry +
                                                 "_pase");
  SimulatorOptions simOptions = request.simulator;
  simOptions.batchSize = request.batch;
  FailureOr<SimulationResult> sim =
      simulate(step, request.cluster, simOptions);
  if (failed(sim))
    return 1;
  int64_t peak = 0;
  for (auto &[device, report] : sim->devices)
    peak = std::max(peak, report.peakBytes);

  llvm::raw_ostream &out = llvm::outs();
  out << llvm::formatv("per-op strategy (PaSE) on {0} devices of {1}, batch "
                       "{2}{3}\n",
                       request.devices, request.cluster.name, request.batch,
                       request.training ? ", training step" : "");
  out << llvm::formatv("  {0} ops; dynamic program over GenerateSeq: largest "
                       "dependent set {1} ({2} entries), {3:f3} s\n",
                       problem->ops.size(), strategy->maxDependentSet,
                       strategy->maxTableSize, searchSeconds);
  std::string replicated;
  for (auto &[name, count] : problem->replicatedOps)
    replicated += llvm::formatv("{0}{1} x{2}", replicated.empty() ? "" : ", ",
                                name, count)
                      .str();
  out << "  replicated (no split rule): "
      << (replicated.empty() ? "none" : replicated) << "\n";
  out << llvm::formatv("  predicted step (cost graph): {0:e3} s\n",
                       strategy->cost);
  out << llvm::formatv("  simulated step (@{0}_pase): {1:e3} s, peak memory "
                       "{2} B per device\n",
                       request.source->entry, sim->latency, peak);
  // The most expensive ops with their splits.
  std::vector<size_t> byCost(rows.size());
  std::iota(byCost.begin(), byCost.end(), 0);
  std::sort(byCost.begin(), byCost.end(), [&](size_t a, size_t b) {
    return rows[a].cost > rows[b].cost || (rows[a].cost == rows[b].cost && a < b);
  });
  out << llvm::formatv("  {0,-22} {1,-34} {2,12}  {3}\n", "op", "loop split",
                       "cost (s)", "location");
  for (size_t i = 0; i < std::min<size_t>(request.top, rows.size()); ++i) {
    const Row &row = rows[byCost[i]];
    out << llvm::formatv("  {0,-22} {1,-34} {2,12:e3}  {3}\n", row.op,
                         row.split, row.cost, row.location);
  }

  if (!request.jsonFile.empty()) {
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
        {"predicted_step_s", strategy->cost},
        {"simulated_step_s", sim->latency},
        {"peak_bytes", peak},
        {"largest_dependent_set", strategy->maxDependentSet},
        {"search_s", searchSeconds},
        {"ops", std::move(ops)}};
    if (failed(writeFile(request.jsonFile,
                         llvm::formatv("{0:2}\n", llvm::json::Value(
                                                      std::move(root)))
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
  if (!request.traceBest.empty() &&
      failed(writeFile(request.traceBest,
                       llvm::formatv("{0}", sim->toChromeTrace()).str())))
    return 1;
  return 0;
}
