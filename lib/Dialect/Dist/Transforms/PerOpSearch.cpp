//===- PerOpSearch.cpp - PaSE's search over a program's two forms ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/Transforms/PerOpSearch.h"

#include "UnflattenReshapes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

struct Solved {
  pase::PerOpProblem problem;
  pase::Strategy strategy;
};

FailureOr<Solved> solveOne(func::FuncOp function, const Cluster &cluster,
                           const pase::PerOpOptions &options, bool breadthFirst,
                           pase::ErrorFn error) {
  FailureOr<pase::PerOpProblem> problem =
      pase::buildPerOpProblem(function, cluster, options, error);
  if (failed(problem))
    return failure();
  std::vector<unsigned> order = breadthFirst
                                    ? pase::breadthFirstOrder(problem->graph)
                                    : pase::generateSeq(problem->graph);
  FailureOr<pase::Strategy> strategy =
      pase::solve(problem->graph, order, options.maxTableSize, error,
                  function.getContext());
  if (failed(strategy))
    return failure();
  return Solved{std::move(*problem), std::move(*strategy)};
}

} // namespace

FailureOr<PerOpSearch>
distir::dist::searchPerOp(func::FuncOp function, const Cluster &cluster,
                          const pase::PerOpOptions &options, bool breadthFirst,
                          bool tryUnflatten, pase::ErrorFn error) {
  FailureOr<Solved> plain =
      solveOne(function, cluster, options, breadthFirst, error);
  if (failed(plain))
    return failure();
  PerOpSearch result;
  result.problem = std::move(plain->problem);
  result.strategy = std::move(plain->strategy);
  if (!tryUnflatten)
    return result;

  // The rewrite on a detached copy, which replaces the body only if its
  // optimum is lower. Its diagnostics are the search's to report.
  func::FuncOp copy = function.clone();
  llvm::scope_exit eraseCopy([&] { copy.erase(); });
  std::string copyError;
  auto record = [&](const Twine &msg) {
    if (copyError.empty())
      copyError = msg.str();
  };
  FailureOr<UnflattenStats> stats;
  {
    ScopedDiagnosticHandler quiet(function.getContext(), [&](Diagnostic &d) {
      record(d.str());
      return success();
    });
    stats = unflattenReshapes(copy);
  }
  if (failed(stats)) {
    result.unflattenError = copyError;
    return result;
  }
  if (stats->refined == 0 && stats->sunk == 0)
    return result;
  FailureOr<Solved> apart =
      solveOne(copy, cluster, options, breadthFirst, record);
  if (failed(apart)) {
    result.unflattenError = copyError;
    return result;
  }
  if (apart->strategy.cost >= result.strategy.cost) {
    result.otherCost = apart->strategy.cost;
    return result;
  }
  result.otherCost = result.strategy.cost;
  result.problem = std::move(apart->problem);
  result.strategy = std::move(apart->strategy);
  result.unflattened = true;
  // The problem's ops move with the body.
  function.getBody().takeBody(copy.getBody());
  return result;
}

std::string distir::dist::describeForm(const PerOpSearch &search) {
  if (search.unflattened)
    return llvm::formatv("; merged dimensions read apart "
                         "(dist-unflatten-reshapes; as written: {0:e3} s)",
                         *search.otherCost)
        .str();
  if (search.otherCost)
    return llvm::formatv("; as written (merged dimensions read apart: "
                         "{0:e3} s)",
                         *search.otherCost)
        .str();
  if (!search.unflattenError.empty())
    return "; as written (merged dimensions read apart: not searched, " +
           search.unflattenError + ")";
  return "";
}
