//===- OpFusion.cpp - dPRO's op fusion on a traced job --------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/OpFusion.h"
#include "DistIR/Replay/Replayer.h"

#include <functional>
#include <map>
#include <set>

using namespace distir::replay;

using OpPair = std::pair<OpIdentity, OpIdentity>;

std::vector<OpIdentity>
distir::replay::identifyOps(const DataflowGraph &graph) {
  std::vector<OpIdentity> ids(graph.numComputeNodes);
  std::map<std::tuple<int64_t, int64_t, std::string>, int64_t> seen;
  for (int64_t i = 0; i < graph.numComputeNodes; ++i) {
    const Node &node = graph.nodes[i];
    ids[i] = {node.name, seen[{node.rank, node.iteration, node.name}]++};
  }
  return ids;
}

/// Ops the model's code runs (forward and backward ops); the framework's
/// own bookkeeping (DDP's reducer, gradient accumulation into .grad, the
/// optimizer) is not the user's to fuse.
static bool isModelOp(llvm::StringRef name) {
  name.consume_front("autograd::engine::evaluate_function: ");
  return !name.starts_with("torch.distributed.") &&
         !name.starts_with("Optimizer.") &&
         !name.starts_with("torch::autograd::AccumulateGrad") &&
         !name.starts_with("ProfilerStep");
}

/// Whether compute node `b` can join the node before it on its stream: it
/// follows it in the same pass (forward or backward) of the same iteration
/// and waits for nothing else.
static bool canJoinPrevious(const DataflowGraph &graph, int64_t b) {
  const Node &node = graph.nodes[b];
  if (node.previous < 0 || node.previous >= graph.numComputeNodes ||
      !node.dependencies.empty())
    return false;
  const Node &before = graph.nodes[node.previous];
  return before.iteration == node.iteration && before.backward == node.backward;
}

/// `graph` with every pair of `fused` merged wherever it runs back to back.
static DataflowGraph fuse(const DataflowGraph &graph,
                          llvm::ArrayRef<OpIdentity> ids,
                          const std::set<OpPair> &fused) {
  ComputeEdit edit(graph);
  for (int64_t b = 0; b < graph.numComputeNodes; ++b) {
    if (!canJoinPrevious(graph, b))
      continue;
    int64_t a = graph.nodes[b].previous;
    if (!fused.count({ids[a], ids[b]}))
      continue;
    int64_t root = edit.mergedInto[a] >= 0 ? edit.mergedInto[a] : a;
    edit.mergedInto[b] = root;
    // The fused op runs both ops' work without the overhead between them.
    edit.duration[root] += edit.duration[b];
  }
  return applyEdit(graph, edit);
}

FusionAdvice distir::replay::adviseOpFusion(const DataflowGraph &graph,
                                            llvm::ArrayRef<double> offsets) {
  FusionAdvice advice;
  ReplayResult base = replay(graph, offsets);
  advice.baseline = advice.predictedIteration = base.predictedIteration;
  std::vector<OpIdentity> ids = identifyOps(graph);
  // Compute nodes after which a collective is launched.
  std::vector<bool> launches(graph.numComputeNodes, false);
  for (size_t i = graph.numComputeNodes; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].step == 0)
      for (int64_t dependency : graph.nodes[i].dependencies)
        if (dependency < graph.numComputeNodes)
          launches[dependency] = true;

  // Theorem 1 on each pair back to back on the critical path: the overhead
  // before the second op is saved; a collective launched after the first op
  // starts the second op's time later.
  std::map<OpPair, double> estimates;
  llvm::ArrayRef<int64_t> path = base.timeline.criticalPath;
  for (size_t p = 1; p < path.size(); ++p) {
    int64_t a = path[p - 1], b = path[p];
    if (b >= graph.numComputeNodes || !canJoinPrevious(graph, b) ||
        graph.nodes[b].previous != a || graph.nodes[b].gap <= 0 ||
        !isModelOp(graph.nodes[a].name) || !isModelOp(graph.nodes[b].name))
      continue;
    double saved = graph.nodes[b].gap;
    double lost = launches[a] ? graph.nodes[b].duration : 0;
    estimates[{ids[a], ids[b]}] += (saved - lost) / graph.numIterations;
  }
  advice.candidates = estimates.size();
  std::vector<std::pair<double, OpPair>> accepted;
  for (const auto &[pair, saving] : estimates) {
    if (saving > 0)
      accepted.push_back({saving, pair});
    else
      ++advice.rejectedByRule;
  }
  // Largest estimate first; ties in a fixed order.
  llvm::sort(accepted, [](const auto &x, const auto &y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });

  // Each fusion the rule accepts is kept only if the replay gets faster.
  std::set<OpPair> kept;
  for (const auto &[saving, pair] : accepted) {
    kept.insert(pair);
    double predicted =
        replay(fuse(graph, ids, kept), offsets).predictedIteration;
    if (predicted < advice.predictedIteration * (1 - 1e-9)) {
      advice.predictedIteration = predicted;
    } else {
      kept.erase(pair);
      ++advice.rejectedByReplay;
    }
  }

  // The fusion groups: ops joined by kept pairs (connected components), in
  // the order they first run.
  std::map<OpIdentity, int64_t> firstRun;
  for (int64_t i = graph.numComputeNodes - 1; i >= 0; --i)
    firstRun[ids[i]] = i;
  std::map<OpIdentity, OpIdentity> parent;
  std::function<OpIdentity(const OpIdentity &)> root =
      [&](const OpIdentity &op) -> OpIdentity {
    auto it = parent.find(op);
    if (it == parent.end() || it->second == op)
      return op;
    return it->second = root(it->second);
  };
  for (const OpPair &pair : kept) {
    OpIdentity x = root(pair.first), y = root(pair.second);
    if (!(x == y))
      parent[y] = x;
  }
  std::map<OpIdentity, FusionGroup> byRoot;
  for (const OpPair &pair : kept) {
    FusionGroup &group = byRoot[root(pair.first)];
    group.estimatedSaving += estimates[pair];
    for (const OpIdentity &op : {pair.first, pair.second})
      if (!llvm::is_contained(group.ops, op))
        group.ops.push_back(op);
  }
  for (auto &[key, group] : byRoot) {
    llvm::sort(group.ops, [&](const OpIdentity &x, const OpIdentity &y) {
      return firstRun[x] < firstRun[y];
    });
    advice.groups.push_back(std::move(group));
  }
  llvm::sort(advice.groups, [](const auto &x, const auto &y) {
    return x.estimatedSaving != y.estimatedSaving
               ? x.estimatedSaving > y.estimatedSaving
               : x.ops.front() < y.ops.front();
  });
  return advice;
}
