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
      mergedInto(graph.numComputeNodes, -1) {
  for (int64_t i = 0; i < graph.numComputeNodes; ++i) {
    duration.push_back(graph.nodes[i].duration);
    gap.push_back(graph.nodes[i].gap);
  }
}

void ComputeEdit::insertBefore(int64_t before, Node node) {
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
  insertedBefore[before].push_back(std::move(node));
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

DataflowGraph ComputeEdit::apply() const {
  int64_t computeCount = graph.numComputeNodes;
  // Where each old node goes: compute nodes keep their order with the
  // inserted ones before them, transfers follow; a merged node is its
  // target (an earlier node of its stream, already placed).
  std::vector<int64_t> newIndex(graph.nodes.size(), -1);
  int64_t next = 0;
  for (int64_t i = 0; i < computeCount; ++i) {
    next += insertedBefore[i].size();
    newIndex[i] = mergedInto[i] >= 0 ? newIndex[mergedInto[i]] : next++;
  }
  int64_t newComputeCount = next;
  for (size_t i = computeCount; i < graph.nodes.size(); ++i)
    newIndex[i] = next++;
  auto remap = [&](int64_t index) {
    return index < 0 ? index : newIndex[index];
  };

  DataflowGraph result = graph;
  result.nodes.clear();
  result.nodes.reserve(next);
  std::vector<int64_t> lastOfStream(graph.streams.size(), -1);
  auto appendCompute = [&](Node node) {
    node.previous = lastOfStream[node.stream];
    lastOfStream[node.stream] = result.nodes.size();
    result.nodes.push_back(std::move(node));
  };
  for (int64_t i = 0; i < computeCount; ++i) {
    for (const Node &extra : insertedBefore[i])
      appendCompute(extra);
    if (mergedInto[i] >= 0)
      continue;
    Node copy = graph.nodes[i];
    copy.duration = duration[i];
    copy.gap = gap[i];
    for (int64_t &dependency : copy.dependencies)
      dependency = remap(dependency);
    appendCompute(std::move(copy));
  }
  result.numComputeNodes = newComputeCount;
  for (size_t i = computeCount; i < graph.nodes.size(); ++i) {
    Node copy = graph.nodes[i];
    copy.previous = remap(copy.previous);
    // A transfer launched after two merged nodes waits for the merged node
    // once.
    llvm::SmallVector<int64_t, 2> dependencies;
    for (int64_t dependency : copy.dependencies)
      if (!llvm::is_contained(dependencies, remap(dependency)))
        dependencies.push_back(remap(dependency));
    copy.dependencies = std::move(dependencies);
    result.nodes.push_back(std::move(copy));
  }
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
