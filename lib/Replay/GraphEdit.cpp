//===- GraphEdit.cpp - What-if rewrites of a traced job's graph -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/GraphEdit.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace distir::replay;

ComputeEdit::ComputeEdit(const DataflowGraph &graph)
    : insertedBefore(graph.numComputeNodes),
      mergedInto(graph.numComputeNodes, -1) {
  for (int64_t i = 0; i < graph.numComputeNodes; ++i) {
    duration.push_back(graph.nodes[i].duration);
    gap.push_back(graph.nodes[i].gap);
  }
}

DataflowGraph distir::replay::applyEdit(const DataflowGraph &graph,
                                        const ComputeEdit &edit) {
  int64_t computeCount = graph.numComputeNodes;
  // Where each old node goes: compute nodes keep their order with the
  // inserted ones before them, transfers follow; a merged node is its
  // target.
  std::vector<int64_t> newIndex(graph.nodes.size(), -1);
  int64_t next = 0;
  for (int64_t i = 0; i < computeCount; ++i) {
    next += edit.insertedBefore[i].size();
    int64_t target = edit.mergedInto[i];
    if (target < 0) {
      newIndex[i] = next++;
      continue;
    }
    assert(target < i && newIndex[target] >= 0 &&
           edit.insertedBefore[i].empty() &&
           "a node merges into an earlier node of its stream");
    newIndex[i] = newIndex[target];
  }
  int64_t newComputeCount = next;
  for (size_t i = computeCount; i < graph.nodes.size(); ++i)
    newIndex[i] = next++;

  DataflowGraph result = graph;
  result.nodes.clear();
  result.nodes.reserve(next);
  auto remap = [&](int64_t index) {
    return index < 0 ? index : newIndex[index];
  };
  std::vector<int64_t> lastOfStream(graph.streams.size(), -1);
  auto appendCompute = [&](Node node) {
    node.previous = lastOfStream[node.stream];
    lastOfStream[node.stream] = result.nodes.size();
    result.nodes.push_back(std::move(node));
  };
  for (int64_t i = 0; i < computeCount; ++i) {
    const Node &node = graph.nodes[i];
    for (const Node &extra : edit.insertedBefore[i]) {
      assert(extra.dependencies.empty() && "inserted nodes follow the stream");
      Node copy = extra;
      copy.stream = node.stream;
      copy.rank = node.rank;
      copy.iteration = node.iteration;
      copy.communication = false;
      copy.collective = copy.step = copy.receiver = -1;
      appendCompute(std::move(copy));
    }
    if (edit.mergedInto[i] >= 0) {
      // Its waits and launches move to the node it joined.
      Node &target = result.nodes[newIndex[i]];
      for (int64_t dependency : node.dependencies)
        if (!llvm::is_contained(target.dependencies, remap(dependency)))
          target.dependencies.push_back(remap(dependency));
      continue;
    }
    Node copy = node;
    copy.duration = edit.duration[i];
    copy.gap = edit.gap[i];
    for (int64_t &dependency : copy.dependencies)
      dependency = remap(dependency);
    appendCompute(std::move(copy));
  }
  assert((int64_t)result.nodes.size() == newComputeCount);
  result.numComputeNodes = newComputeCount;
  for (size_t i = computeCount; i < graph.nodes.size(); ++i) {
    Node copy = graph.nodes[i];
    copy.previous = remap(copy.previous);
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

std::vector<int64_t> distir::replay::iterationNodes(const DataflowGraph &graph,
                                                    int64_t rank,
                                                    int64_t iteration) {
  std::vector<int64_t> nodes;
  for (int64_t i = 0; i < graph.numComputeNodes; ++i)
    if (graph.nodes[i].rank == rank && graph.nodes[i].iteration == iteration)
      nodes.push_back(i);
  return nodes;
}
