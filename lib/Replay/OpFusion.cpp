//===- OpFusion.cpp - dPRO's op fusion on a traced job --------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/OpFusion.h"
#include "DistIR/Replay/Replayer.h"

#include "llvm/ADT/EquivalenceClasses.h"

#include <cassert>
#include <map>
#include <set>
#include <tuple>

using namespace distir::replay;

using OpPair = std::pair<OpIdentity, OpIdentity>;

/// Ops the model's code runs; not the framework's own: DDP's reducer and
/// its forward wrapper (the whole model in one op), gradient accumulation
/// into .grad, the optimizer, the profiler's record_function scopes.
static bool isModelOp(llvm::StringRef name) {
  if (name.consume_front("autograd::engine::evaluate_function: "))
    return !name.starts_with("torch::autograd::AccumulateGrad");
  return name.contains("::") && !name.starts_with("torch.distributed.");
}

/// The profiler's handle of a record_function scope: the tensor allocations
/// (aten::empty, aten::zeros, aten::zero_) right before a scope (a name
/// without "::", such as DistributedDataParallel.forward).
static std::vector<bool> profilerOps(const DataflowGraph &graph,
                                     llvm::ArrayRef<int64_t> nodes) {
  std::vector<bool> result(nodes.size(), false);
  bool beforeScope = false;
  for (size_t k = nodes.size(); k-- > 0;) {
    llvm::StringRef name = graph.nodes[nodes[k]].name;
    if (!name.contains("::")) {
      beforeScope = true;
      continue;
    }
    beforeScope &=
        name == "aten::empty" || name == "aten::zeros" || name == "aten::zero_";
    result[k] = beforeScope;
  }
  return result;
}

/// Per compute node: the pass it belongs to (0 forward, 1 backward) when it
/// is a model op that may be fused, else -1.
static std::vector<int> fusablePass(const DataflowGraph &graph) {
  std::vector<int> pass(graph.numComputeNodes, -1);
  for (int64_t r = 0; r < graph.numRanks; ++r)
    for (int64_t it = 0; it < graph.numIterations; ++it) {
      IterationPasses passes = findIterationPasses(graph, r, it);
      const std::vector<int64_t> *both[] = {&passes.forward, &passes.backward};
      for (int index : {0, 1}) {
        const std::vector<int64_t> &nodes = *both[index];
        std::vector<bool> profiler = profilerOps(graph, nodes);
        for (auto [k, node] : llvm::enumerate(nodes))
          if (!profiler[k] && isModelOp(graph.nodes[node].name))
            pass[node] = index;
      }
    }
  return pass;
}

/// Whether node `b` can join the node before it into one op: both model
/// ops of the same pass, two different ops (pieces of one op, split where
/// it launches work, are one already), `b` waiting for nothing else.
static bool canFuseWithPrevious(const DataflowGraph &graph,
                                llvm::ArrayRef<int> pass, int64_t b) {
  const Node &node = graph.nodes[b];
  return pass[b] >= 0 && node.previous >= 0 &&
         node.previous < graph.numComputeNodes &&
         pass[node.previous] == pass[b] && node.dependencies.empty() &&
         (node.op < 0 || graph.nodes[node.previous].op != node.op);
}

/// The op (not piece) identity of each compute node: the k-th op of its name
/// in the iteration on its rank, whatever pieces launches cut it into.
static std::vector<OpIdentity> identifyWholeOps(const DataflowGraph &graph) {
  std::vector<OpIdentity> ids(graph.numComputeNodes);
  std::map<std::tuple<int64_t, int64_t, std::string>, int64_t> seen;
  for (int64_t i = 0; i < graph.numComputeNodes; ++i) {
    const Node &node = graph.nodes[i];
    const Node *before = node.previous >= 0 && node.previous < i
                             ? &graph.nodes[node.previous]
                             : nullptr;
    int64_t &count = seen[{node.rank, node.iteration, node.name}];
    bool samePiece = before && before->op == node.op && node.op >= 0;
    ids[i] = {node.name, samePiece ? count - 1 : count++};
  }
  return ids;
}

/// `graph` with every pair of `fused` merged wherever it runs back to back.
static DataflowGraph fuse(const DataflowGraph &graph,
                          llvm::ArrayRef<OpIdentity> ids,
                          llvm::ArrayRef<int> pass,
                          const std::set<OpPair> &fused) {
  ComputeEdit edit(graph);
  for (int64_t b = 0; b < graph.numComputeNodes; ++b)
    if (canFuseWithPrevious(graph, pass, b) &&
        fused.count({ids[graph.nodes[b].previous], ids[b]}))
      // The fused op runs both ops' work without the overhead between them.
      (void)edit.mergeIntoPrevious(b);
  return edit.apply();
}

FusionAdvice distir::replay::adviseOpFusion(const DataflowGraph &graph,
                                            llvm::ArrayRef<double> offsets) {
  FusionAdvice advice;
  ReplayResult base = replay(graph, offsets);
  advice.baseline = advice.predictedIteration = base.predictedIteration;
  std::vector<OpIdentity> ids = identifyWholeOps(graph);
  std::vector<int> pass = fusablePass(graph);
  // Compute nodes after which a collective or GPU work is launched (a GPU
  // node depends on the piece that ends where its launch returns).
  std::vector<bool> launches(graph.numComputeNodes, false);
  for (int64_t i = graph.numComputeNodes; i < (int64_t)graph.nodes.size(); ++i)
    if (graph.nodes[i].step == 0 || i >= graph.firstGpuNode())
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
    if (b >= graph.numComputeNodes || graph.nodes[b].previous != a ||
        !canFuseWithPrevious(graph, pass, b) || graph.nodes[b].gap <= 0)
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
    // A fusion that would order work in a cycle is not a faster replay.
    DataflowGraph fused = fuse(graph, ids, pass, kept);
    double predicted = isAcyclic(fused)
                           ? replay(fused, offsets).predictedIteration
                           : advice.predictedIteration;
    if (predicted < advice.predictedIteration * (1 - 1e-9)) {
      advice.predictedIteration = predicted;
    } else {
      kept.erase(pair);
      ++advice.rejectedByReplay;
    }
  }

  // The fusion groups: ops joined by kept pairs, in the order they first
  // run.
  std::map<OpIdentity, int64_t> firstRun;
  for (int64_t i = graph.numComputeNodes - 1; i >= 0; --i)
    firstRun[ids[i]] = i;
  // Ops are classes by the node where they first run.
  llvm::EquivalenceClasses<int64_t> classes;
  for (const OpPair &pair : kept)
    classes.unionSets(firstRun[pair.first], firstRun[pair.second]);
  std::map<int64_t, FusionGroup> byLeader;
  for (const OpPair &pair : kept) {
    FusionGroup &group = byLeader[classes.getLeaderValue(firstRun[pair.first])];
    group.estimatedSaving += estimates[pair];
    for (const OpIdentity &op : {pair.first, pair.second})
      if (!llvm::is_contained(group.ops, op))
        group.ops.push_back(op);
  }
  for (auto &[leader, group] : byLeader) {
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
