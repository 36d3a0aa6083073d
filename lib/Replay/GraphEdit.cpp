//===- GraphEdit.cpp - What-if rewrites of a traced job's graph -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/GraphEdit.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <map>

using namespace distir::replay;

ComputeEdit::ComputeEdit(const DataflowGraph &graph)
    : graph(graph), insertedBefore(graph.numComputeNodes),
      insertedLaunches(graph.numComputeNodes),
      mergedInto(graph.numComputeNodes, -1) {
  for (const Node &node : graph.nodes)
    duration.push_back(node.duration);
  for (int64_t i = 0; i < graph.numComputeNodes; ++i)
    gap.push_back(graph.nodes[i].gap);
}

void ComputeEdit::insertBefore(int64_t before, Node node,
                               std::vector<Node> launches) {
  // Before a merged node is before the node it joined.
  if (mergedInto[before] >= 0)
    before = mergedInto[before];
  const Node &at = graph.nodes[before];
  node.stream = at.stream;
  node.rank = at.rank;
  node.iteration = at.iteration;
  node.communication = false;
  node.collective = node.step = node.receiver = -1;
  node.dependencies.clear();
  for (Node &work : launches) {
    work.rank = at.rank;
    work.iteration = at.iteration;
    work.communication = false;
    work.collective = work.step = work.receiver = -1;
    work.dependencies.clear();
  }
  insertedBefore[before].push_back(std::move(node));
  insertedLaunches[before].push_back(std::move(launches));
}

bool ComputeEdit::mergeIntoPrevious(int64_t node) {
  const Node &b = graph.nodes[node];
  if (b.previous < 0 || b.previous >= graph.numComputeNodes ||
      !b.dependencies.empty() || !insertedBefore[node].empty() ||
      graph.nodes[b.previous].iteration != b.iteration)
    return false;
  int64_t target =
      mergedInto[b.previous] >= 0 ? mergedInto[b.previous] : b.previous;
  mergedInto[node] = target;
  duration[target] += duration[node];
  return true;
}

int64_t distir::replay::launcherOf(const DataflowGraph &graph,
                                   const Node &node) {
  for (int64_t dependency : node.dependencies)
    if (dependency < graph.numComputeNodes)
      return dependency;
  return -1;
}

DataflowGraph ComputeEdit::apply() const {
  int64_t computeCount = graph.numComputeNodes;
  int64_t firstGpu = graph.firstGpuNode();
  int64_t oldCount = graph.nodes.size();
  // Where each old node goes: compute nodes keep their order with the
  // inserted ones before them, transfers follow, then the GPU work; a
  // merged node is its target (an earlier node of its stream, already
  // placed).
  std::vector<int64_t> newIndex(oldCount, -1);
  std::vector<std::vector<int64_t>> insertedIndex(computeCount);
  int64_t next = 0;
  for (int64_t i = 0; i < computeCount; ++i) {
    for (size_t k = 0; k < insertedBefore[i].size(); ++k)
      insertedIndex[i].push_back(next++);
    newIndex[i] = mergedInto[i] >= 0 ? newIndex[mergedInto[i]] : next++;
  }
  int64_t newComputeCount = next;
  for (int64_t i = computeCount; i < firstGpu; ++i)
    newIndex[i] = next++;
  // GPU work in launch order: the traced work keeps its order; the work an
  // inserted node launches follows the traced work launched up to that
  // node. Keys: (launching node's new index, traced before inserted, order).
  struct GpuWork {
    int64_t key, inserted, order;
    const Node *node;
    int64_t old, launcher;
  };
  std::vector<GpuWork> work;
  // Per stream: the latest launcher so far (launches are in order).
  std::map<int64_t, int64_t> key;
  for (int64_t i = firstGpu; i < oldCount; ++i) {
    int64_t launcher = launcherOf(graph, graph.nodes[i]);
    auto [at, inserted] = key.try_emplace(graph.nodes[i].stream, -1);
    if (launcher >= 0)
      at->second = std::max(at->second, newIndex[launcher]);
    work.push_back({at->second, 0, i, &graph.nodes[i], i, -1});
  }
  int64_t order = 0;
  for (int64_t i = 0; i < computeCount; ++i)
    for (auto [index, launches] :
         llvm::zip(insertedIndex[i], insertedLaunches[i]))
      for (const Node &launched : launches)
        work.push_back({index, 1, order++, &launched, -1, index});
  llvm::sort(work, [](const GpuWork &a, const GpuWork &b) {
    return std::tie(a.key, a.inserted, a.order) <
           std::tie(b.key, b.inserted, b.order);
  });
  for (const GpuWork &w : work)
    if (w.old >= 0)
      newIndex[w.old] = next + (&w - work.data());
  auto remap = [&](int64_t index) {
    return index < 0 ? index : newIndex[index];
  };
  // A dependency list in new indices; an edge to a merged pair once.
  auto remapAll = [&](const llvm::SmallVector<int64_t, 2> &dependencies) {
    llvm::SmallVector<int64_t, 2> result;
    for (int64_t dependency : dependencies)
      if (!llvm::is_contained(result, remap(dependency)))
        result.push_back(remap(dependency));
    return result;
  };

  DataflowGraph result = graph;
  result.nodes.clear();
  result.nodes.reserve(next + work.size());
  std::vector<int64_t> lastOfStream(graph.streams.size(), -1);
  auto appendOnStream = [&](Node node) {
    node.previous = lastOfStream[node.stream];
    lastOfStream[node.stream] = result.nodes.size();
    result.nodes.push_back(std::move(node));
  };
  for (int64_t i = 0; i < computeCount; ++i) {
    for (const Node &extra : insertedBefore[i])
      appendOnStream(extra);
    if (mergedInto[i] >= 0)
      continue;
    Node copy = graph.nodes[i];
    copy.duration = duration[i];
    copy.gap = gap[i];
    copy.dependencies = remapAll(copy.dependencies);
    appendOnStream(std::move(copy));
  }
  result.numComputeNodes = newComputeCount;
  for (int64_t i = computeCount; i < firstGpu; ++i) {
    Node copy = graph.nodes[i];
    copy.previous = remap(copy.previous);
    copy.dependencies = remapAll(copy.dependencies);
    result.nodes.push_back(std::move(copy));
  }
  for (const GpuWork &w : work) {
    Node copy = *w.node;
    if (w.old >= 0) {
      copy.duration = duration[w.old];
      copy.dependencies = remapAll(copy.dependencies);
    } else {
      copy.dependencies = {w.launcher};
    }
    appendOnStream(std::move(copy));
  }
  result.numGpuNodes = work.size();
  for (Collective &collective : result.collectives)
    for (int64_t &first : collective.firstTransfer)
      first = remap(first);
  for (auto &rank : result.gradients)
    for (auto &iteration : rank)
      for (Gradient &gradient : iteration)
        gradient.node = remap(gradient.node);
  for (auto &rank : result.syncNodes)
    for (int64_t &node : rank)
      node = remap(node);
  for (auto &rank : result.copyNodes)
    for (auto &iteration : rank)
      for (int64_t &node : iteration)
        node = remap(node);
  return result;
}

bool distir::replay::isAcyclic(const DataflowGraph &graph) {
  std::vector<int64_t> pending(graph.nodes.size(), 0);
  std::vector<std::vector<int64_t>> users(graph.nodes.size());
  for (auto [index, node] : llvm::enumerate(graph.nodes)) {
    for (int64_t dependency : node.dependencies)
      users[dependency].push_back(index);
    if (node.previous >= 0)
      users[node.previous].push_back(index);
    pending[index] = node.dependencies.size() + (node.previous >= 0);
  }
  std::vector<int64_t> ready;
  for (auto [index, count] : llvm::enumerate(pending))
    if (count == 0)
      ready.push_back(index);
  size_t done = 0;
  while (!ready.empty()) {
    int64_t index = ready.back();
    ready.pop_back();
    ++done;
    for (int64_t user : users[index])
      if (--pending[user] == 0)
        ready.push_back(user);
  }
  return done == graph.nodes.size();
}

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

std::vector<int64_t> distir::replay::iterationNodes(const DataflowGraph &graph,
                                                    int64_t rank,
                                                    int64_t iteration) {
  std::vector<int64_t> nodes;
  for (int64_t i = 0; i < graph.numComputeNodes; ++i)
    if (graph.nodes[i].rank == rank && graph.nodes[i].iteration == iteration)
      nodes.push_back(i);
  return nodes;
}

IterationPasses distir::replay::findIterationPasses(const DataflowGraph &graph,
                                                    int64_t rank,
                                                    int64_t iteration) {
  IterationPasses passes;
  std::vector<int64_t> nodes = iterationNodes(graph, rank, iteration);
  auto isBackward = [&](int64_t i) { return graph.nodes[i].backward; };
  auto first = llvm::find_if(nodes, isBackward);
  auto last =
      first == nodes.end()
          ? first
          : std::find_if(nodes.rbegin(), nodes.rend(), isBackward).base();
  auto forwardStart = nodes.begin();
  for (auto at = nodes.begin(); at != first; ++at)
    if (llvm::StringRef(graph.nodes[*at].name).starts_with("Optimizer."))
      forwardStart = at + 1;
  passes.forward.assign(forwardStart, first);
  passes.backward.assign(first, last);
  return passes;
}
