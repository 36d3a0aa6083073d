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

#include "llvm/ADT/DenseMap.h"

#include <map>

using namespace mlir;
using namespace distir;
using namespace distir::pase;

namespace {

/// Per dimension of a tensor, the forward loop it runs along (-1: none).
using DimLoops = SmallVector<int64_t>;

DimLoops loopsThrough(AffineMap map, ArrayRef<int64_t> loopOf = {}) {
  DimLoops out;
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      out.push_back(-1);
    else
      out.push_back(loopOf.empty() ? int64_t(dim.getPosition())
                                   : loopOf[dim.getPosition()]);
  }
  return out;
}

/// Which forward loop each loop of the group's ops runs along.
class GroupLabels {
public:
  explicit GroupLabels(linalg::LinalgOp forward) : forward(forward) {
    for (OpOperand &operand : forward->getOpOperands())
      labels.try_emplace(
          operand.get(),
          loopsThrough(forward.getMatchingIndexingMap(&operand)));
    for (OpResult result : forward->getResults())
      labels.try_emplace(
          result, loopsThrough(forward.getIndexingMapMatchingResult(result)));
  }

  /// The forward loops of `value`'s dimensions: a forward tensor's, a
  /// group op's result's, or, for a value from outside the group (the
  /// gradient flowing in), those of the forward tensors of its type when
  /// they agree.
  std::optional<DimLoops> of(Value value) const {
    auto it = labels.find(value);
    if (it != labels.end())
      return it->second;
    std::optional<DimLoops> found;
    for (auto &[tensor, dims] : forwardTensors())
      if (tensor.getType() == value.getType()) {
        if (found && *found != dims)
          return std::nullopt;
        found = dims;
      }
    return found;
  }

  /// Labels `op`'s loops from its operands (forward order).
  SmallVector<int64_t> loopsOf(linalg::LinalgOp op) const {
    SmallVector<int64_t> loopOf(op.getNumLoops(), -1);
    for (OpOperand &operand : op->getOpOperands()) {
      std::optional<DimLoops> dims = of(operand.get());
      if (!dims)
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [d, expr] : llvm::enumerate(map.getResults()))
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          if ((*dims)[d] >= 0 && loopOf[dim.getPosition()] < 0)
            loopOf[dim.getPosition()] = (*dims)[d];
    }
    return loopOf;
  }

  void setResults(linalg::LinalgOp op, ArrayRef<int64_t> loopOf) {
    for (OpResult result : op->getResults())
      labels[result] =
          loopsThrough(op.getIndexingMapMatchingResult(result), loopOf);
  }

private:
  SmallVector<std::pair<Value, DimLoops>> forwardTensors() const {
    SmallVector<std::pair<Value, DimLoops>> all;
    for (OpOperand &operand : forward->getOpOperands())
      all.push_back({operand.get(), labels.lookup(operand.get())});
    for (OpResult result : forward->getResults())
      all.push_back({result, labels.lookup(result)});
    return all;
  }

  linalg::LinalgOp forward;
  llvm::DenseMap<Value, DimLoops> labels;
};

} // namespace

Tying pase::tieAdjoints(const PerOpProblem &problem) {
  size_t n = problem.ops.size();
  Tying tying;
  tying.leaderOf.assign(n, -1);
  tying.follow.resize(n);
  llvm::DenseMap<int64_t, size_t> leaderById;
  for (size_t v = 0; v < n; ++v)
    if (auto id = problem.ops[v]->getAttrOfType<IntegerAttr>(dist::kVjpIdAttr))
      if (isa<linalg::LinalgOp>(problem.ops[v]))
        leaderById[id.getInt()] = v;
  // Each group's adjoint ops, in program order (producers first).
  std::map<size_t, SmallVector<size_t>> groups;
  for (size_t v = 0; v < n; ++v) {
    auto of = problem.ops[v]->getAttrOfType<IntegerAttr>(dist::kVjpOfAttr);
    if (!of)
      continue;
    auto leader = leaderById.find(of.getInt());
    if (leader == leaderById.end() || !isa<linalg::LinalgOp>(problem.ops[v])) {
      ++tying.apart;
      continue;
    }
    groups[leader->second].push_back(v);
  }

  for (auto &[leader, members] : groups) {
    GroupLabels labels(cast<linalg::LinalgOp>(problem.ops[leader]));
    std::vector<SmallVector<int64_t>> loopOf(members.size());
    for (auto [i, v] : llvm::enumerate(members)) {
      auto op = cast<linalg::LinalgOp>(problem.ops[v]);
      loopOf[i] = labels.loopsOf(op);
      labels.setResults(op, loopOf[i]);
    }
    // Loops no operand labels (a zero fill of an accumulator) take those
    // of the group op that reads the result.
    llvm::DenseMap<Operation *, size_t> indexOf;
    for (auto [i, v] : llvm::enumerate(members))
      indexOf[problem.ops[v]] = i;
    for (size_t i = members.size(); i-- > 0;) {
      auto op = cast<linalg::LinalgOp>(problem.ops[members[i]]);
      for (OpResult result : op->getResults())
        for (OpOperand &use : result.getUses()) {
          auto reader = indexOf.find(use.getOwner());
          if (reader == indexOf.end())
            continue;
          auto readerOp = cast<linalg::LinalgOp>(use.getOwner());
          DimLoops dims = loopsThrough(readerOp.getMatchingIndexingMap(&use),
                                       loopOf[reader->second]);
          AffineMap map = op.getIndexingMapMatchingResult(result);
          for (auto [d, expr] : llvm::enumerate(map.getResults()))
            if (auto dim = dyn_cast<AffineDimExpr>(expr))
              if (dims[d] >= 0 && loopOf[i][dim.getPosition()] < 0)
                loopOf[i][dim.getPosition()] = dims[d];
        }
    }

    const std::vector<LoopSplit> &leaderSplits = problem.configs[leader];
    for (auto [i, v] : llvm::enumerate(members)) {
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
          if (loop >= 0)
            factors[l] = split.factors[loop];
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
