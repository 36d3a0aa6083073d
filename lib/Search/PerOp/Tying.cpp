//===- Tying.cpp - An adjoint's configuration follows its forward op's ----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// On a training step the activations saved for the backward pass join
// forward and backward ops far apart, so the dynamic program's dependent
// sets grow past any table budget. PaSE's paper counts an op's forward and
// backward computation as one vertex; here the ops dist-autodiff emitted for
// a forward op (`dist.vjp_of`) take configurations that follow the forward
// op's (`dist.vjp_id`), and the solver sees one vertex per group.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/PerOp.h"

#include "Tiles.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Sequence.h"

#include <map>

using namespace mlir;
using namespace distir;
using namespace distir::pase;
using namespace distir::pase::detail;

namespace {

/// Per dimension of a tensor, the forward loop it runs along (-1: none).
using DimLoops = SmallVector<int64_t>;

/// The label of each dimension `map` reads: `loopOf` of the loop it reads
/// plainly, -1 for any other expression.
DimLoops loopsThrough(AffineMap map, ArrayRef<int64_t> loopOf) {
  assert(loopOf.size() == map.getNumDims() && "a label per loop");
  DimLoops out;
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    out.push_back(dim ? loopOf[dim.getPosition()] : -1);
  }
  return out;
}

/// The forward op's own loops: each labels itself.
DimLoops forwardLoopsThrough(AffineMap map) {
  return loopsThrough(map,
                      llvm::to_vector(llvm::seq<int64_t>(0, map.getNumDims())));
}

/// Which forward loop each loop of the group's ops runs along. An op's
/// loops are a linalg op's, or a data-movement op's result dims (the maps
/// the cost graph reads its tensors through, Tiles.h).
class GroupLabels {
public:
  explicit GroupLabels(Operation *forward) : forward(forward) {
    for (OpOperand &operand : forward->getOpOperands())
      if (AffineMap map = operandMap(operand))
        labels.try_emplace(operand.get(), forwardLoopsThrough(map));
    for (OpResult result : forward->getResults())
      if (AffineMap map = resultMap(result))
        labels.try_emplace(result, forwardLoopsThrough(map));
  }

  /// The forward loops of `value`'s dimensions: a forward tensor's, a
  /// group op's result's, or, for a value another op computes (the
  /// gradient flowing in), those of the forward results of its type,
  /// dimension by dimension where they agree.
  std::optional<DimLoops> of(Value value) const {
    auto it = labels.find(value);
    if (it != labels.end())
      return it->second;
    Operation *def = value.getDefiningOp();
    if (!def || isa<tensor::EmptyOp>(def))
      return std::nullopt;
    std::optional<DimLoops> found;
    for (Value result : forward->getResults()) {
      auto known = labels.find(result);
      if (result.getType() != value.getType() || known == labels.end())
        continue;
      if (!found) {
        found = known->second;
        continue;
      }
      for (auto [mine, theirs] : llvm::zip(*found, known->second))
        if (mine != theirs)
          mine = -1;
    }
    return found;
  }

  /// Labels the `numLoops` loops of `op` from its operands (forward order).
  SmallVector<int64_t> loopsOf(Operation *op, size_t numLoops) const {
    SmallVector<int64_t> loopOf(numLoops, -1);
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = operandMap(operand);
      std::optional<DimLoops> dims = map ? of(operand.get()) : std::nullopt;
      if (!dims || dims->size() != map.getNumResults())
        continue;
      for (auto [d, expr] : llvm::enumerate(map.getResults()))
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          if ((*dims)[d] >= 0 && loopOf[dim.getPosition()] < 0)
            loopOf[dim.getPosition()] = (*dims)[d];
    }
    return loopOf;
  }

  void setResults(Operation *op, ArrayRef<int64_t> loopOf) {
    for (OpResult result : op->getResults())
      if (AffineMap map = resultMap(result))
        labels[result] = loopsThrough(map, loopOf);
  }

private:
  Operation *forward;
  llvm::DenseMap<Value, DimLoops> labels;
};

} // namespace

Tying pase::tieAdjoints(const PerOpProblem &problem) {
  size_t n = problem.ops.size();
  Tying tying;
  tying.leaderOf.assign(n, -1);
  tying.follow.resize(n);
  // A forward op is one that no adjoint claims; an id on two ops (a
  // program rewritten after dist-autodiff) ties nothing.
  std::map<int64_t, int64_t> leaderById;
  for (size_t v = 0; v < n; ++v) {
    Operation *op = problem.ops[v];
    auto id = op->getAttrOfType<IntegerAttr>(dist::kVjpIdAttr);
    if (!id || op->hasAttr(dist::kVjpOfAttr))
      continue;
    auto [it, inserted] = leaderById.try_emplace(id.getInt(), v);
    if (!inserted)
      it->second = -1;
  }
  // Each group's adjoint ops, in program order (producers first).
  std::map<size_t, SmallVector<size_t>> groups;
  for (size_t v = 0; v < n; ++v) {
    auto of = problem.ops[v]->getAttrOfType<IntegerAttr>(dist::kVjpOfAttr);
    if (!of)
      continue;
    auto leader = leaderById.find(of.getInt());
    if (leader == leaderById.end() || leader->second < 0) {
      ++tying.apart;
      continue;
    }
    groups[leader->second].push_back(v);
  }

  // The leaves of the cost graph: no edge in, one edge out (its index).
  std::vector<int64_t> leafEdge(n, -1);
  {
    std::vector<int> in(n, 0), out(n, 0);
    for (auto [e, edge] : llvm::enumerate(problem.graph.edges)) {
      ++in[edge.to];
      ++out[edge.from];
      leafEdge[edge.from] = static_cast<int64_t>(e);
    }
    for (size_t v = 0; v < n; ++v)
      if (in[v] != 0 || out[v] != 1)
        leafEdge[v] = -1;
  }

  for (auto &[leader, members] : groups) {
    GroupLabels labels(problem.ops[leader]);
    std::vector<SmallVector<int64_t>> loopOf(members.size());
    for (auto [i, v] : llvm::enumerate(members)) {
      loopOf[i] = labels.loopsOf(problem.ops[v],
                                 problem.configs[v].front().factors.size());
      labels.setResults(problem.ops[v], loopOf[i]);
    }
    // Loops no operand labels (a zero fill of an accumulator) take those
    // of the group op that reads the result.
    llvm::DenseMap<Operation *, size_t> indexOf;
    for (auto [i, v] : llvm::enumerate(members))
      indexOf[problem.ops[v]] = i;
    for (size_t i = members.size(); i-- > 0;) {
      for (OpResult result : problem.ops[members[i]]->getResults())
        for (OpOperand &use : result.getUses()) {
          auto reader = indexOf.find(use.getOwner());
          AffineMap readMap = operandMap(use), map = resultMap(result);
          if (reader == indexOf.end() || !readMap || !map ||
              readMap.getNumResults() != map.getNumResults())
            continue;
          DimLoops dims = loopsThrough(readMap, loopOf[reader->second]);
          // A label the op already has (from an operand) stays where it is.
          for (auto [d, expr] : llvm::enumerate(map.getResults()))
            if (auto dim = dyn_cast<AffineDimExpr>(expr))
              if (dims[d] >= 0 && loopOf[i][dim.getPosition()] < 0 &&
                  !llvm::is_contained(loopOf[i], dims[d]))
                loopOf[i][dim.getPosition()] = dims[d];
        }
    }

    const std::vector<LoopSplit> &leaderSplits = problem.configs[leader];
    for (auto [i, v] : llvm::enumerate(members)) {
      // A forward op with one configuration (no split rule) would only
      // force the op whole: it keeps a vertex of its own.
      if (leaderSplits.size() == 1 && problem.configs[v].size() > 1) {
        ++tying.apart;
        continue;
      }
      // A forward loop splits one loop of the adjoint at most.
      SmallVector<int64_t> &loops = loopOf[i];
      llvm::SmallDenseSet<int64_t> seen;
      for (int64_t &loop : loops)
        if (loop >= 0 && !seen.insert(loop).second)
          loop = -1;
      std::map<SmallVector<int64_t>, int64_t> indexOfSplit;
      for (auto [c, split] : llvm::enumerate(problem.configs[v]))
        indexOfSplit.try_emplace(split.factors, c);
      std::vector<int64_t> follow;
      for (const LoopSplit &split : leaderSplits) {
        SmallVector<int64_t> factors(loops.size(), 1);
        for (auto [l, loop] : llvm::enumerate(loops))
          if (loop >= 0 && !split.factors.empty()) {
            // A leader without loops (run whole) has no factors to give.
            assert(loop < static_cast<int64_t>(split.factors.size()));
            factors[l] = split.factors[loop];
          }
        // Without that configuration (a loop it cannot split), drop the
        // innermost split loops until one exists.
        auto found = indexOfSplit.find(factors);
        for (size_t l = factors.size(); found == indexOfSplit.end() && l-- > 0;)
          if (factors[l] != 1) {
            factors[l] = 1;
            found = indexOfSplit.find(factors);
          }
        if (found == indexOfSplit.end())
          break;
        follow.push_back(found->second);
      }
      if (follow.size() != leaderSplits.size()) {
        ++tying.apart;
        continue;
      }
      tying.leaderOf[v] = static_cast<int64_t>(leader);
      tying.follow[v] = std::move(follow);
      ++tying.tied;
    }

    // A member that is a leaf of the cost graph read by its own group (the
    // zero fill that starts an accumulator) takes, for each leader
    // configuration, its cheapest configuration given its reader's (its
    // vertex cost plus the move into the reader): what eliminating the leaf
    // alone would give. Its labels could split it otherwise than the
    // reader's configuration reads it (the reader's innermost splits
    // dropped, or the loops on the mesh in another order), and every device
    // would then reshard, e.g., zeros.
    for (size_t v : members) {
      if (tying.leaderOf[v] != static_cast<int64_t>(leader) || leafEdge[v] < 0)
        continue;
      const CostGraph::Edge &edge = problem.graph.edges[leafEdge[v]];
      size_t reader = edge.to;
      if (reader != leader &&
          tying.leaderOf[reader] != static_cast<int64_t>(leader))
        continue;
      const std::vector<double> &move = edge.cost;
      const std::vector<double> &own = problem.graph.vertexCost[v];
      int64_t readerConfigs = problem.graph.numConfigs(reader);
      for (size_t c = 0; c < leaderSplits.size(); ++c) {
        int64_t read = reader == leader ? static_cast<int64_t>(c)
                                        : tying.follow[reader][c];
        int64_t best = 0;
        for (int64_t k = 1; k < static_cast<int64_t>(own.size()); ++k)
          if (own[k] + move[k * readerConfigs + read] <
              own[best] + move[best * readerConfigs + read])
            best = k;
        tying.follow[v][c] = best;
      }
    }
  }
  return tying;
}

TiedGraph pase::contract(const CostGraph &graph, const Tying &tying) {
  TiedGraph tied;
  unsigned n = graph.numVertices();
  tied.vertexOf.assign(n, 0);
  for (unsigned v = 0; v < n; ++v)
    if (tying.leaderOf[v] < 0)
      tied.vertexOf[v] = tied.graph.addVertex(graph.vertexCost[v]);
  // A vertex's configuration in terms of its group's.
  auto configOf = [&](unsigned v, int64_t c) {
    return tying.leaderOf[v] < 0 ? c : tying.follow[v][c];
  };
  for (unsigned v = 0; v < n; ++v) {
    if (tying.leaderOf[v] < 0)
      continue;
    assert(tying.leaderOf[tying.leaderOf[v]] < 0 && "a leader follows");
    assert(tying.follow[v].size() ==
               static_cast<size_t>(graph.numConfigs(tying.leaderOf[v])) &&
           "a configuration per leader configuration");
    unsigned group = tied.vertexOf[tying.leaderOf[v]];
    tied.vertexOf[v] = group;
    std::vector<double> &cost = tied.graph.vertexCost[group];
    for (size_t c = 0; c < cost.size(); ++c)
      cost[c] += graph.vertexCost[v][configOf(v, c)];
  }
  // Edges between the same two groups are summed into one table.
  std::map<std::pair<unsigned, unsigned>, std::vector<double>> tables;
  std::vector<std::pair<unsigned, unsigned>> order;
  for (const CostGraph::Edge &edge : graph.edges) {
    unsigned a = tied.vertexOf[edge.from], b = tied.vertexOf[edge.to];
    int64_t toConfigs = graph.numConfigs(edge.to);
    auto original = [&](int64_t ca, int64_t cb) {
      return edge
          .cost[configOf(edge.from, ca) * toConfigs + configOf(edge.to, cb)];
    };
    if (a == b) {
      std::vector<double> &cost = tied.graph.vertexCost[a];
      for (size_t c = 0; c < cost.size(); ++c)
        cost[c] += original(c, c);
      continue;
    }
    std::pair<unsigned, unsigned> key = {std::min(a, b), std::max(a, b)};
    int64_t rows = tied.graph.numConfigs(key.first);
    int64_t cols = tied.graph.numConfigs(key.second);
    auto [it, inserted] = tables.try_emplace(key);
    if (inserted) {
      it->second.assign(rows * cols, 0.0);
      order.push_back(key);
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        it->second[r * cols + c] +=
            a == key.first ? original(r, c) : original(c, r);
  }
  for (auto key : order)
    tied.graph.addEdge(key.first, key.second, std::move(tables[key]));
  return tied;
}

std::vector<int64_t> pase::expandConfig(const Tying &tying,
                                        const TiedGraph &tied,
                                        ArrayRef<int64_t> vertexConfig) {
  std::vector<int64_t> config(tied.vertexOf.size());
  for (size_t v = 0; v < config.size(); ++v) {
    int64_t c = vertexConfig[tied.vertexOf[v]];
    config[v] = tying.leaderOf[v] < 0 ? c : tying.follow[v][c];
  }
  return config;
}
