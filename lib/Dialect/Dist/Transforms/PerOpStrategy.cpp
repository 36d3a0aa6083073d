//===- PerOpStrategy.cpp - dist-pase: PaSE's per-op strategy --------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistCluster.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/Dialect/Dist/Transforms/PerOpSearch.h"
#include "DistIR/Search/PerOp.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

#include <random>

namespace distir::dist {
#define GEN_PASS_DEF_DISTPEROPSTRATEGYPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;

namespace {

struct DistPerOpStrategyPass
    : public distir::dist::impl::DistPerOpStrategyPassBase<
          DistPerOpStrategyPass> {
  using DistPerOpStrategyPassBase::DistPerOpStrategyPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto moduleError = [&](const Twine &msg) { module.emitError() << msg; };
    FailureOr<Cluster> resolved = dist::resolveModuleCluster(
        module, cluster,
        "pass cluster=NAME or cluster=path.json to dist-pase, or attach one "
        "with dist-attach-cluster",
        moduleError);
    if (failed(resolved))
      return signalPassFailure();
    std::optional<unsigned> seed;
    std::optional<pase::BaselineKind> baseline;
    if (pick == "data-parallel")
      baseline = pase::BaselineKind::DataParallel;
    else if (pick == "one-weird-trick")
      baseline = pase::BaselineKind::OneWeirdTrick;
    else if (pick != "optimal") {
      unsigned value = 0;
      if (!StringRef(pick).starts_with("random:") ||
          StringRef(pick).drop_front(7).getAsInteger(10, value)) {
        moduleError("dist-pase: pick must be optimal, data-parallel, "
                    "one-weird-trick or random:SEED, got '" +
                    pick + "'");
        return signalPassFailure();
      }
      seed = value;
    }
    pase::PerOpOptions options;
    options.devices = devices;
    options.maxTableSize = maxTable;
    if (maxConfigs < 1) {
      moduleError("dist-pase: max-configs must be positive, got " +
                  Twine(int64_t(maxConfigs)));
      return signalPassFailure();
    }
    options.maxConfigsPerOp = maxConfigs;
    // The hand-written baselines ignore annotations.
    options.followAnnotations = followAnnotations && !baseline;
    options.tieAdjoints = tieAdjoints == dist::TieAdjoints::Always
                              ? pase::PerOpOptions::Tie::Always
                          : tieAdjoints == dist::TieAdjoints::Never
                              ? pase::PerOpOptions::Tie::Never
                              : pase::PerOpOptions::Tie::Auto;

    // Emission adds functions: walk a snapshot.
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      if (function.isDeclaration() || function.isPrivate())
        continue;
      auto functionError = [&](const Twine &msg) {
        function.emitError() << "dist-pase: " << msg;
      };
      // The baselines and random picks are of the program as written.
      FailureOr<dist::PerOpSearch> search = dist::searchPerOp(
          function, *resolved, options, order == dist::EliminationOrder::BFS,
          unflatten && !baseline && !seed, functionError);
      if (failed(search))
        return signalPassFailure();
      pase::PerOpProblem *problem = &search->problem;
      pase::Strategy *strategy = &search->strategy;
      if (baseline) {
        FailureOr<pase::BaselineStrategy> chosen =
            pase::baselineStrategy(*problem, *baseline, devices);
        if (failed(chosen))
          return signalPassFailure();
        strategy->config = chosen->strategy.config;
        strategy->cost = chosen->strategy.cost;
      }
      if (seed) {
        std::mt19937 rng(*seed);
        for (unsigned v = 0; v < problem->graph.numVertices(); ++v)
          strategy->config[v] = std::uniform_int_distribution<int64_t>(
              0, problem->graph.numConfigs(v) - 1)(rng);
        strategy->cost = problem->graph.evaluate(strategy->config);
      }
      pase::annotateStrategy(*problem, *strategy);
      std::string replicated;
      for (auto &[name, count] : problem->replicatedOps)
        replicated += llvm::formatv("{0}{1} x{2}",
                                    replicated.empty() ? "" : ", ", name, count)
                          .str();
      // At the location only: Operation::emitRemark would attach the whole
      // function as a note.
      InFlightDiagnostic remark = emitRemark(function.getLoc());
      remark
          << llvm::formatv(
                 "dist-pase: {0} ops on {1} devices, cost {2:e3} s, largest "
                 "dependent set {3} ({4} entries); replicated (no split rule): "
                 "{5}",
                 problem->ops.size(), devices, strategy->cost,
                 strategy->maxDependentSet, strategy->maxTableSize,
                 replicated.empty() ? "none" : replicated)
          << (problem->truncatedOps
                  ? llvm::formatv("; configurations cut to the {0} cheapest "
                                  "on {1} ops",
                                  options.maxConfigsPerOp,
                                  problem->truncatedOps)
                        .str()
                  : std::string());
      for (const std::string &clause :
           dist::describeAdjoints(*problem, options.tieAdjoints))
        remark << "; " << clause;
      remark << dist::describeForm(*search);
      remark.report(); // ahead of the per-op remarks below
      if (report)
        for (auto [v, op] : llvm::enumerate(problem->ops))
          emitRemark(op->getLoc())
              << "dist-pase: loops split "
              << pase::formatSplit(problem->configs[v][strategy->config[v]]);
      if (emit && failed(pase::emitStrategy(function, *problem, *strategy,
                                            functionError)))
        return signalPassFailure();
    }
  }
};

} // namespace
