//===- Solver.cpp - PaSE's per-operator strategy solver -------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Elimination of a pairwise min-sum problem (PaSE's dynamic program): the
// factors are the vertex costs and the edge costs; eliminating vertex v
// replaces the factors that mention v by one factor over v's dependent set
// (its minimum over v's configurations) and remembers the minimizing
// configuration for back-substitution.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/PerOpSolver.h"

#include "mlir/IR/Threading.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>

using namespace mlir;
using namespace distir;
using namespace distir::pase;

unsigned CostGraph::addVertex(std::vector<double> costs) {
  vertexCost.push_back(std::move(costs));
  return vertexCost.size() - 1;
}

void CostGraph::addEdge(unsigned from, unsigned to, std::vector<double> cost) {
  edges.push_back({from, to, std::move(cost)});
}

double CostGraph::evaluate(ArrayRef<int64_t> config) const {
  double total = 0;
  for (unsigned v = 0; v < numVertices(); ++v)
    total += vertexCost[v][config[v]];
  for (const Edge &edge : edges)
    total +=
        edge.cost[config[edge.from] * numConfigs(edge.to) + config[edge.to]];
  return total;
}

/// Product of configuration counts, saturating at `cap + 1`.
static int64_t tableSize(const CostGraph &graph,
                         const std::set<unsigned> &scope, int64_t cap) {
  int64_t size = 1;
  for (unsigned u : scope) {
    int64_t n = graph.numConfigs(u);
    if (n != 0 && size > cap / n)
      return cap + 1;
    size *= n;
  }
  return size;
}

namespace {
/// Interaction graph under symbolic elimination.
struct EliminationGraph {
  std::vector<std::set<unsigned>> neighbors;
  std::vector<bool> eliminated;

  explicit EliminationGraph(const CostGraph &graph)
      : neighbors(graph.numVertices()), eliminated(graph.numVertices(), false) {
    for (const CostGraph::Edge &edge : graph.edges) {
      if (edge.from == edge.to)
        continue;
      neighbors[edge.from].insert(edge.to);
      neighbors[edge.to].insert(edge.from);
    }
  }

  /// Removes v and joins its neighbours (fill-in); returns its dependent set.
  std::set<unsigned> eliminate(unsigned v) {
    std::set<unsigned> dependent = std::move(neighbors[v]);
    neighbors[v].clear();
    eliminated[v] = true;
    for (unsigned u : dependent) {
      neighbors[u].erase(v);
      for (unsigned w : dependent)
        if (w != u)
          neighbors[u].insert(w);
    }
    return dependent;
  }
};
} // namespace

std::vector<unsigned> pase::generateSeq(const CostGraph &graph) {
  constexpr int64_t kCap = std::numeric_limits<int64_t>::max() / 2;
  EliminationGraph elim(graph);
  // Vertices by (dependent set, table, id); only the eliminated vertex's
  // neighbours change theirs.
  using Key = std::tuple<size_t, int64_t, unsigned>;
  auto keyOf = [&](unsigned v) {
    return Key{elim.neighbors[v].size(),
               tableSize(graph, elim.neighbors[v], kCap), v};
  };
  std::vector<Key> keys;
  std::set<Key> queue;
  for (unsigned v = 0; v < graph.numVertices(); ++v) {
    keys.push_back(keyOf(v));
    queue.insert(keys.back());
  }
  std::vector<unsigned> order;
  order.reserve(graph.numVertices());
  while (!queue.empty()) {
    unsigned best = std::get<2>(*queue.begin());
    queue.erase(queue.begin());
    for (unsigned u : elim.eliminate(best)) {
      queue.erase(keys[u]);
      keys[u] = keyOf(u);
      queue.insert(keys[u]);
    }
    order.push_back(best);
  }
  return order;
}

std::vector<unsigned> pase::breadthFirstOrder(const CostGraph &graph) {
  std::vector<std::vector<unsigned>> adjacent(graph.numVertices());
  for (const CostGraph::Edge &edge : graph.edges) {
    adjacent[edge.from].push_back(edge.to);
    adjacent[edge.to].push_back(edge.from);
  }
  std::vector<bool> seen(graph.numVertices(), false);
  std::vector<unsigned> order;
  for (unsigned root = 0; root < graph.numVertices(); ++root) {
    if (seen[root])
      continue;
    std::deque<unsigned> queue{root};
    seen[root] = true;
    while (!queue.empty()) {
      unsigned v = queue.front();
      queue.pop_front();
      order.push_back(v);
      for (unsigned u : adjacent[v])
        if (!seen[u]) {
          seen[u] = true;
          queue.push_back(u);
        }
    }
  }
  return order;
}

std::pair<unsigned, int64_t> pase::measureOrder(const CostGraph &graph,
                                                ArrayRef<unsigned> order) {
  constexpr int64_t kCap = std::numeric_limits<int64_t>::max() / 2;
  EliminationGraph elim(graph);
  unsigned maxSet = 0;
  int64_t maxTable = 1;
  for (unsigned v : order) {
    std::set<unsigned> dependent = elim.eliminate(v);
    maxSet = std::max<unsigned>(maxSet, dependent.size());
    maxTable = std::max(maxTable, tableSize(graph, dependent, kCap));
  }
  return {maxSet, maxTable};
}

/// Shape checks shared by both solvers.
static LogicalResult checkGraph(const CostGraph &graph, ErrorFn error) {
  for (unsigned v = 0; v < graph.numVertices(); ++v)
    if (graph.numConfigs(v) == 0) {
      error("vertex " + Twine(v) + " has no configuration");
      return failure();
    }
  for (const CostGraph::Edge &edge : graph.edges) {
    if (edge.from >= graph.numVertices() || edge.to >= graph.numVertices() ||
        edge.from == edge.to) {
      error("edge " + Twine(edge.from) + " -> " + Twine(edge.to) +
            " does not join two distinct vertices");
      return failure();
    }
    if (static_cast<int64_t>(edge.cost.size()) !=
        graph.numConfigs(edge.from) * graph.numConfigs(edge.to)) {
      error("edge " + Twine(edge.from) + " -> " + Twine(edge.to) + " has " +
            Twine(edge.cost.size()) + " costs for " +
            Twine(graph.numConfigs(edge.from)) + " x " +
            Twine(graph.numConfigs(edge.to)) + " configurations");
      return failure();
    }
  }
  return success();
}

/// The least of `sums[c] + row[c]` (of `sums[c]` when `row` is null) over
/// c < n and the first c reaching it, as one scan with `<` finds them. Four
/// interleaved scans keep each compare independent of the last one's.
static std::pair<double, int64_t> argminOfSum(const double *sums,
                                              const double *row, int64_t n) {
  constexpr int kLanes = 4;
  double best[kLanes];
  int64_t at[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) {
    best[lane] = std::numeric_limits<double>::infinity();
    at[lane] = n;
  }
  int64_t c = 0;
  auto visit = [&](int lane, int64_t c) {
    double total = row ? sums[c] + row[c] : sums[c];
    if (total < best[lane]) {
      best[lane] = total;
      at[lane] = c;
    }
  };
  for (; c + kLanes <= n; c += kLanes)
    for (int lane = 0; lane < kLanes; ++lane)
      visit(lane, c + lane);
  for (int lane = 0; c < n; ++c, ++lane)
    visit(lane, c);
  double least = std::numeric_limits<double>::infinity();
  int64_t first = n;
  for (int lane = 0; lane < kLanes; ++lane)
    if (best[lane] < least || (best[lane] == least && at[lane] < first)) {
      least = best[lane];
      first = at[lane];
    }
  // Nothing below infinity: the scan keeps configuration 0.
  return {least, first == n ? 0 : first};
}

namespace {
/// A cost table over `scope` (sorted vertex ids), mixed radix with the first
/// scope vertex most significant.
struct Factor {
  std::vector<unsigned> scope;
  std::vector<double> table;
};
} // namespace

FailureOr<Strategy> pase::solve(const CostGraph &graph,
                                ArrayRef<unsigned> order, int64_t maxTableSize,
                                ErrorFn error, MLIRContext *threads) {
  if (failed(checkGraph(graph, error)))
    return failure();
  unsigned n = graph.numVertices();
  {
    std::vector<bool> inOrder(n, false);
    bool valid = order.size() == n;
    for (unsigned v : order) {
      valid = valid && v < n && !inOrder[v];
      if (v < n)
        inOrder[v] = true;
    }
    if (!valid) {
      error("the elimination order is not a permutation of the " + Twine(n) +
            " vertices");
      return failure();
    }
  }

  std::vector<Factor> factors;
  for (unsigned v = 0; v < n; ++v)
    factors.push_back({{v}, graph.vertexCost[v]});
  for (const CostGraph::Edge &edge : graph.edges) {
    if (edge.from < edge.to) {
      factors.push_back({{edge.from, edge.to}, edge.cost});
      continue;
    }
    // Store with the smaller id first.
    int64_t nFrom = graph.numConfigs(edge.from),
            nTo = graph.numConfigs(edge.to);
    std::vector<double> table(edge.cost.size());
    for (int64_t a = 0; a < nFrom; ++a)
      for (int64_t b = 0; b < nTo; ++b)
        table[b * nFrom + a] = edge.cost[a * nTo + b];
    factors.push_back({{edge.to, edge.from}, std::move(table)});
  }
  std::vector<bool> live(factors.size(), true);
  // The factors mentioning each vertex, in creation order.
  std::vector<std::vector<unsigned>> factorsOf(n);
  for (unsigned f = 0; f < factors.size(); ++f)
    for (unsigned u : factors[f].scope)
      factorsOf[u].push_back(f);

  // Back-substitution record per eliminated vertex.
  std::vector<std::vector<unsigned>> dependentOf(n);
  std::vector<std::vector<int64_t>> argminOf(n);
  Strategy strategy;

  for (unsigned v : order) {
    std::vector<unsigned> mine;
    std::set<unsigned> scopeSet;
    for (unsigned f : factorsOf[v]) {
      if (!live[f])
        continue;
      mine.push_back(f);
      for (unsigned u : factors[f].scope)
        if (u != v)
          scopeSet.insert(u);
    }
    int64_t size = tableSize(graph, scopeSet, maxTableSize);
    if (size > maxTableSize) {
      error("the dependent set of vertex " + Twine(v) + " (" +
            Twine(scopeSet.size()) + " vertices) needs a table of more than " +
            Twine(maxTableSize) + " entries");
      return failure();
    }
    strategy.maxDependentSet =
        std::max<unsigned>(strategy.maxDependentSet, scopeSet.size());
    strategy.maxTableSize = std::max(strategy.maxTableSize, size);
    std::vector<unsigned> scope(scopeSet.begin(), scopeSet.end());

    Factor result{scope, std::vector<double>(size)};
    std::vector<int64_t> argmin(size);
    // Each factor of v as a table walk: its offset for the dependent set's
    // assignment (the other scope vertices' strides) plus c times v's
    // stride. The sums over v's configurations run factor by factor, by
    // level (below), as one vector. The order of the additions depends on
    // the graph and the order only, not on threads or chunks.
    struct Term {
      /// The factor's entries, or `contiguous`'s.
      const double *table;
      /// (position in `scope`, stride) of the factor's other vertices.
      SmallVector<std::pair<unsigned, int64_t>, 3> others;
      int64_t strideOfV = 0;
      /// The table with v's configurations made contiguous, when they were
      /// not (a copy read in place of `table`: the same numbers).
      std::vector<double> contiguous;
    };
    std::vector<Term> terms;
    for (unsigned f : mine) {
      Term term{factors[f].table.data(), {}, 0, {}};
      int64_t stride = 1;
      for (unsigned u : llvm::reverse(factors[f].scope)) {
        if (u == v)
          term.strideOfV = stride;
        else
          term.others.push_back(
              {static_cast<unsigned>(llvm::find(scope, u) - scope.begin()),
               stride});
        stride *= graph.numConfigs(u);
      }
      if (term.strideOfV != 1) {
        // Transpose so that v runs fastest: `others` are listed last scope
        // vertex first, so the first of them varies fastest among the rows.
        int64_t numConfigs = graph.numConfigs(v);
        int64_t entries = static_cast<int64_t>(factors[f].table.size());
        int64_t rows = entries / numConfigs;
        term.contiguous.resize(entries);
        SmallVector<int64_t, 3> digits(term.others.size(), 0);
        for (int64_t row = 0; row < rows; ++row) {
          int64_t from = 0;
          for (auto [digit, other] : llvm::zip(digits, term.others))
            from += digit * other.second;
          for (int64_t c = 0; c < numConfigs; ++c)
            term.contiguous[row * numConfigs + c] =
                term.table[from + c * term.strideOfV];
          for (auto [digit, other] : llvm::zip(digits, term.others)) {
            if (++digit < graph.numConfigs(scope[other.first]))
              break;
            digit = 0;
          }
        }
        int64_t newStride = numConfigs;
        for (auto &other : term.others) {
          int64_t radix = graph.numConfigs(scope[other.first]);
          other.second = newStride;
          newStride *= radix;
        }
        term.strideOfV = 1;
      }
      terms.push_back(std::move(term));
    }
    // A term's level is the last scope position it reads (-1: v alone). The
    // odometer below moves the last position fastest, so the sum of the
    // terms below a level is kept and redone only when a digit at or before
    // it turns: most entries add just the last position's terms.
    auto levelOf = [](const Term &term) {
      int64_t level = -1;
      for (auto [position, stride] : term.others)
        level = std::max<int64_t>(level, position);
      return level;
    };
    std::vector<int64_t> levels;
    {
      std::vector<unsigned> byLevel(terms.size());
      std::iota(byLevel.begin(), byLevel.end(), 0u);
      for (const Term &term : terms)
        levels.push_back(levelOf(term));
      // Stable (std::stable_sort's buffer is deprecated here).
      llvm::sort(byLevel, [&](unsigned a, unsigned b) {
        return std::make_pair(levels[a], a) < std::make_pair(levels[b], b);
      });
      std::vector<Term> sorted;
      sorted.reserve(terms.size());
      for (unsigned t : byLevel)
        sorted.push_back(std::move(terms[t]));
      terms = std::move(sorted);
    }
    // Pointed at once every term has its place (growing `terms` may copy
    // them: SmallVector's move is not noexcept).
    for (Term &term : terms)
      if (!term.contiguous.empty())
        term.table = term.contiguous.data();
    int64_t numLevels = scope.size();
    // termsBelow[j]: the terms of level < j, j in [0, numLevels].
    SmallVector<size_t, 5> termsBelow(numLevels + 1);
    for (int64_t j = 0; j <= numLevels; ++j)
      termsBelow[j] = llvm::count_if(levels, [&](int64_t l) { return l < j; });
    int64_t numConfigsOfV = graph.numConfigs(v);
    // With one term at the last level, an entry is the minimum over c of
    // below[numLevels - 1][c] + row[c]: summed and compared in one pass.
    bool fused =
        numLevels > 0 && termsBelow[numLevels] - termsBelow[numLevels - 1] == 1;
    int64_t top = fused ? numLevels - 1 : numLevels;
    // Entries [begin, end) of the table: an odometer over the dependent
    // set's configurations (the last scope vertex fastest) from `begin`.
    auto fill = [&](int64_t begin, int64_t end) {
      SmallVector<int64_t, 4> digits(scope.size());
      for (int64_t k = scope.size() - 1, rest = begin; k >= 0; --k) {
        int64_t radix = graph.numConfigs(scope[k]);
        digits[k] = rest % radix;
        rest /= radix;
      }
      auto rowOf = [&](const Term &term) {
        int64_t at = 0;
        for (auto [position, stride] : term.others)
          at += digits[position] * stride;
        return term.table + at;
      };
      // below[j]: the sum of the terms of level < j for the current digits.
      std::vector<std::vector<double>> below(
          numLevels + 1, std::vector<double>(numConfigsOfV, 0.0));
      for (size_t t = 0; t < termsBelow[0]; ++t) {
        const double *row = rowOf(terms[t]);
        for (int64_t c = 0; c < numConfigsOfV; ++c)
          below[0][c] += row[c];
      }
      // Recomputes below[j] for j in (from, top].
      auto refresh = [&](int64_t from) {
        for (int64_t j = from + 1; j <= top; ++j) {
          below[j] = below[j - 1];
          for (size_t t = termsBelow[j - 1]; t < termsBelow[j]; ++t) {
            const double *row = rowOf(terms[t]);
            for (int64_t c = 0; c < numConfigsOfV; ++c)
              below[j][c] += row[c];
          }
        }
      };
      refresh(0);
      for (int64_t index = begin; index < end; ++index) {
        auto [best, bestConfig] =
            fused ? argminOfSum(below[top].data(), rowOf(terms.back()),
                                numConfigsOfV)
                  : argminOfSum(below[top].data(), nullptr, numConfigsOfV);
        result.table[index] = best;
        argmin[index] = bestConfig;
        int64_t turned = -1;
        for (int64_t k = scope.size() - 1; k >= 0; --k) {
          if (++digits[k] < graph.numConfigs(scope[k])) {
            turned = k;
            break;
          }
          digits[k] = 0;
        }
        if (index + 1 < end && turned < top) {
          refresh(std::max<int64_t>(turned, 0));
        }
      }
    };
    // Chunks of entries on the context's threads for large tables.
    constexpr int64_t kChunk = 4096;
    int64_t chunks = (size + kChunk - 1) / kChunk;
    if (threads && chunks > 1)
      mlir::parallelFor(threads, 0, chunks, [&](size_t chunk) {
        int64_t begin = static_cast<int64_t>(chunk) * kChunk;
        fill(begin, std::min(size, begin + kChunk));
      });
    else
      fill(0, size);
    for (unsigned f : mine)
      live[f] = false;
    for (unsigned u : result.scope)
      factorsOf[u].push_back(factors.size());
    factors.push_back(std::move(result));
    live.push_back(true);
    dependentOf[v] = std::move(scope);
    argminOf[v] = std::move(argmin);
  }

  // Every vertex is gone: what is left are constants.
  strategy.config.assign(n, 0);
  for (unsigned v : llvm::reverse(order)) {
    int64_t at = 0;
    for (unsigned u : dependentOf[v])
      at = at * graph.numConfigs(u) + strategy.config[u];
    strategy.config[v] = argminOf[v][at];
  }
  strategy.cost = graph.evaluate(strategy.config);
  return strategy;
}

FailureOr<Strategy> pase::solveBruteForce(const CostGraph &graph,
                                          int64_t maxAssignments,
                                          ErrorFn error) {
  if (failed(checkGraph(graph, error)))
    return failure();
  std::set<unsigned> all;
  for (unsigned v = 0; v < graph.numVertices(); ++v)
    all.insert(v);
  int64_t total = tableSize(graph, all, maxAssignments);
  if (total > maxAssignments) {
    error("more than " + Twine(maxAssignments) + " assignments to enumerate");
    return failure();
  }
  Strategy best;
  best.cost = std::numeric_limits<double>::infinity();
  std::vector<int64_t> config(graph.numVertices(), 0);
  for (int64_t index = 0; index < total; ++index) {
    double cost = graph.evaluate(config);
    if (cost < best.cost) {
      best.cost = cost;
      best.config = config;
    }
    for (int64_t v = graph.numVertices() - 1; v >= 0; --v) {
      if (++config[v] < graph.numConfigs(v))
        break;
      config[v] = 0;
    }
  }
  best.maxDependentSet = graph.numVertices();
  best.maxTableSize = total;
  return best;
}
