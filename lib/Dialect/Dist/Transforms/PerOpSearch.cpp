//===- PerOpSearch.cpp - PaSE's search over a program's two forms ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/Transforms/PerOpSearch.h"

#include "UnflattenReshapes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

struct Solved {
  pase::PerOpProblem problem;
  pase::Strategy strategy;
};

/// The errors of one search, held back until it is known whether the other
/// form succeeds: the messages given to the error callback and the
/// diagnostics ops emit themselves.
struct HeldErrors {
  std::string first;
  SmallVector<std::pair<Location, std::string>> diagnostics;
  void record(const Twine &msg) {
    if (first.empty())
      first = msg.str();
  }
  /// Holds the errors ops emit while it lives; other diagnostics pass on.
  ScopedDiagnosticHandler hold(MLIRContext *context) {
    return ScopedDiagnosticHandler(context, [this](Diagnostic &d) {
      if (d.getSeverity() != DiagnosticSeverity::Error)
        return failure();
      diagnostics.emplace_back(d.getLocation(), d.str());
      return success();
    });
  }
  std::string reason() const {
    if (!first.empty())
      return first;
    return diagnostics.empty() ? "it failed" : diagnostics.front().second;
  }
};

/// On a training step, the weights that several differentiated ops read:
/// each one's gradient sum joins its readers in the search's graph, far
/// apart in the program (an exporter that merges equal tensors makes
/// freshly initialized models share dozens of them). Empty otherwise.
std::string sharedWeights(func::FuncOp function) {
  SmallVector<std::pair<int64_t, std::string>> shared;
  Block &body = function.getBody().front();
  for (BlockArgument arg : function.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (function.getArgAttr(i, "dist.batch_dim") ||
        function.getArgAttr(i, "dist.optimizer_state") ||
        function.getArgAttr(i, "dist.frozen") ||
        !isa<FloatType>(getElementTypeOrSelf(arg.getType())))
      continue;
    // Readers are the body's ops (an embedding's table is read inside a
    // generic), each counted once.
    llvm::SmallPtrSet<Operation *, 4> readers;
    for (Operation *user : arg.getUsers())
      if (Operation *op = body.findAncestorOpInBlock(*user))
        if (op->hasAttr(kVjpIdAttr) && !op->hasAttr(kVjpOfAttr))
          readers.insert(op);
    if (readers.size() < 2)
      continue;
    auto name = function.getArgAttrOfType<StringAttr>(i, "dist.name");
    shared.push_back(
        {static_cast<int64_t>(readers.size()),
         name ? "\"" + name.str() + "\"" : "argument " + std::to_string(i)});
  }
  if (shared.empty())
    return "";
  llvm::sort(shared, [](const auto &a, const auto &b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string out =
      llvm::formatv("; {0} weight{1} read by several "
                    "differentiated ops, whose gradient sums "
                    "join their readers: ",
                    shared.size(), shared.size() == 1 ? " is" : "s are")
          .str();
  for (auto [i, entry] : llvm::enumerate(llvm::ArrayRef(shared).take_front(3)))
    out += llvm::formatv("{0}{1} ({2} readers)", i ? ", " : "", entry.second,
                         entry.first)
               .str();
  if (shared.size() > 3)
    out += ", ...";
  return out;
}

FailureOr<Solved> solveOne(func::FuncOp function, const Cluster &cluster,
                           const pase::PerOpOptions &options, bool breadthFirst,
                           HeldErrors &held) {
  ScopedDiagnosticHandler hold = held.hold(function.getContext());
  auto record = [&](const Twine &msg) { held.record(msg); };
  FailureOr<pase::PerOpProblem> problem =
      pase::buildPerOpProblem(function, cluster, options, record);
  if (failed(problem))
    return failure();
  auto orderOf = [&](const pase::CostGraph &graph) {
    return breadthFirst ? pase::breadthFirstOrder(graph)
                        : pase::generateSeq(graph);
  };
  // A training step's adjoint ops follow their forward op: the solver sees
  // one vertex per group. The space is smaller, so by default only when a
  // vertex per op needs a table over the budget.
  using Tie = pase::PerOpOptions::Tie;
  int64_t adjointOps = llvm::count_if(
      problem->ops, [](Operation *op) { return op->hasAttr(kVjpOfAttr); });
  bool hasAdjoints = adjointOps > 0;
  std::vector<unsigned> order;
  bool tie = hasAdjoints && options.tieAdjoints == Tie::Always;
  if (hasAdjoints && options.tieAdjoints == Tie::Auto) {
    order = orderOf(problem->graph);
    tie =
        pase::measureOrder(problem->graph, order).second > options.maxTableSize;
  }
  pase::Tying tying;
  if (tie)
    tying = pase::tieAdjoints(*problem);
  problem->tiedOps = tying.tied;
  problem->untiedAdjoints = tying.apart;
  if (!tie)
    problem->adjointsNotTied = adjointOps;
  std::optional<pase::TiedGraph> tied;
  if (tying.tied > 0)
    tied = pase::contract(problem->graph, tying);
  const pase::CostGraph &graph = tied ? tied->graph : problem->graph;
  if (tied || order.empty())
    order = orderOf(graph);
  FailureOr<pase::Strategy> strategy = pase::solve(
      graph, order, options.maxTableSize, record, function.getContext());
  if (failed(strategy)) {
    // A failed search of a training step (over the table budget, in
    // practice): name what may have joined distant ops.
    if (hasAdjoints && !held.first.empty())
      held.first += sharedWeights(function);
    return failure();
  }
  if (tied) {
    strategy->config = pase::expandConfig(tying, *tied, strategy->config);
    strategy->cost = problem->graph.evaluate(strategy->config);
  }
  return Solved{std::move(*problem), std::move(*strategy)};
}

/// Whether `function` carries `dist.sharding` on an argument or an op: the
/// annotations name its dimensions as written.
bool hasAnnotations(func::FuncOp function) {
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    if (function.getArgAttr(i, kShardingAttrName))
      return true;
  return function
      .walk([](Operation *op) {
        return op->hasAttr(kShardingAttrName) ? WalkResult::interrupt()
                                              : WalkResult::advance();
      })
      .wasInterrupted();
}

} // namespace

FailureOr<PerOpSearch>
distir::dist::searchPerOp(func::FuncOp function, const Cluster &cluster,
                          const pase::PerOpOptions &options, bool breadthFirst,
                          bool tryUnflatten, pase::ErrorFn error) {
  PerOpSearch result;
  HeldErrors writtenErrors;
  FailureOr<Solved> written =
      solveOne(function, cluster, options, breadthFirst, writtenErrors);
  // The written form's errors, when it is the answer.
  auto reportWritten = [&]() -> FailureOr<PerOpSearch> {
    for (auto &[loc, message] : writtenErrors.diagnostics)
      mlir::emitError(loc) << message;
    if (!writtenErrors.first.empty())
      error(writtenErrors.first);
    return failure();
  };
  if (succeeded(written)) {
    result.problem = std::move(written->problem);
    result.strategy = std::move(written->strategy);
  }
  if (!tryUnflatten)
    return succeeded(written) ? FailureOr<PerOpSearch>(std::move(result))
                              : reportWritten();
  // Annotations name the dimensions as written; a rewrite would drop them.
  if (options.followAnnotations && hasAnnotations(function)) {
    if (failed(written))
      return reportWritten();
    result.unflattenError = "the program carries dist.sharding annotations";
    return result;
  }

  // The rewrite on a detached copy, which replaces the body only if its
  // optimum is lower (or the program as written has none).
  func::FuncOp copy = function.clone();
  llvm::scope_exit eraseCopy([&] { copy.erase(); });
  HeldErrors copyErrors;
  FailureOr<UnflattenStats> stats;
  {
    ScopedDiagnosticHandler hold = copyErrors.hold(function.getContext());
    stats = unflattenReshapes(copy);
  }
  if (failed(stats) || (stats->refined == 0 && stats->sunk == 0)) {
    if (failed(written))
      return reportWritten();
    if (failed(stats))
      result.unflattenError = copyErrors.reason();
    return result;
  }
  FailureOr<Solved> apart =
      solveOne(copy, cluster, options, breadthFirst, copyErrors);
  if (failed(apart)) {
    if (failed(written))
      return reportWritten();
    result.unflattenError = copyErrors.reason();
    return result;
  }
  if (succeeded(written)) {
    if (apart->strategy.cost >= result.strategy.cost) {
      result.otherCost = apart->strategy.cost;
      return result;
    }
    result.otherCost = result.strategy.cost;
  } else {
    result.writtenError = writtenErrors.reason();
  }
  result.problem = std::move(apart->problem);
  result.strategy = std::move(apart->strategy);
  result.unflattened = true;
  // The problem's ops move with the body.
  function.getBody().takeBody(copy.getBody());
  return result;
}

SmallVector<std::string, 2>
distir::dist::describeAdjoints(const pase::PerOpProblem &problem,
                               pase::PerOpOptions::Tie tie) {
  SmallVector<std::string, 2> clauses;
  if (problem.tiedOps || problem.untiedAdjoints)
    clauses.push_back(llvm::formatv("adjoint ops following their forward op: "
                                    "{0} ({1} apart)",
                                    problem.tiedOps, problem.untiedAdjoints));
  if (problem.adjointsNotTied)
    clauses.push_back(llvm::formatv(
        "adjoint ops searched on their own: {0} ({1})", problem.adjointsNotTied,
        tie == pase::PerOpOptions::Tie::Never
            ? "tie-adjoints=never"
            : "the untied tables fit the table budget"));
  return clauses;
}

std::string distir::dist::describeForm(const PerOpSearch &search) {
  if (search.unflattened && search.otherCost)
    return llvm::formatv("; merged dimensions read apart "
                         "(dist-unflatten-reshapes; as written: {0:e3} s)",
                         *search.otherCost)
        .str();
  if (search.unflattened)
    return "; merged dimensions read apart (dist-unflatten-reshapes; as "
           "written: no strategy, " +
           search.writtenError + ")";
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
