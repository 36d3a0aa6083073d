//===- Program.cpp - A replayed trace as a dist program -------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Replay/Program.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <cassert>
#include <limits>
#include <map>
#include <queue>

using namespace mlir;
using namespace distir;
using namespace distir::replay;

OwningOpRef<ModuleOp>
distir::replay::buildReplayProgram(MLIRContext &context,
                                   const DataflowGraph &graph,
                                   const ReplayResult &replayed) {
  context.loadDialect<dist::DistDialect, func::FuncDialect>();
  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());
  auto function =
      func::FuncOp::create(builder, builder.getUnknownLoc(), "replay",
                           builder.getFunctionType({}, {}));
  function->setAttr("dist.replayed_latency",
                    builder.getF64FloatAttr(replayed.timeline.latency));
  builder.setInsertionPointToEnd(function.addEntryBlock());

  // Each stream (a thread of a rank) is a device of the program: the
  // replay runs the streams of a rank concurrently (the main thread waits
  // in a backward call while the autograd thread runs it), as the
  // simulator runs devices.
  auto token = [&](int64_t stream) {
    return RankedTensorType::get({0}, builder.getF32Type(),
                                 dist::DeviceAttr::get(&context, stream));
  };
  // What each node waits for (its stream predecessor and dependencies, in
  // node order) and who waits for it.
  size_t count = graph.nodes.size();
  std::vector<SmallVector<int64_t, 4>> waits(count);
  std::vector<SmallVector<int64_t, 2>> users(count);
  for (auto [index, node] : llvm::enumerate(graph.nodes)) {
    waits[index].assign(node.dependencies.begin(), node.dependencies.end());
    if (node.previous >= 0)
      waits[index].push_back(node.previous);
    llvm::sort(waits[index]);
    waits[index].erase(llvm::unique(waits[index]), waits[index].end());
    for (int64_t other : waits[index])
      users[other].push_back(index);
  }

  std::vector<Value> value(count);
  // Tokens sent to another stream: (node, stream).
  llvm::DenseMap<std::pair<int64_t, int64_t>, Value> sent;
  auto tokenFor = [&](int64_t other, int64_t stream) {
    return graph.nodes[other].stream == stream ? value[other]
                                               : sent.lookup({other, stream});
  };
  // In the replay's order (a topological one); each kernel named, located
  // and timed as the replay's event for its node (a node's gap, spent on
  // its stream before it, belongs to its kernel).
  // Sends wait on a device's communication stream in program order: each is
  // emitted once the replay reached its source's end (sources by end), so
  // that a send behind a long kernel's does not hold up a short one's.
  using Pending = std::pair<double, int64_t>; // (source end, source)
  std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>>
      pending;
  auto flushSends = [&](double until) {
    while (!pending.empty() && pending.top().first <= until) {
      int64_t source = pending.top().second;
      pending.pop();
      const Node &node = graph.nodes[source];
      Location loc = NameLoc::get(
          builder.getStringAttr(replayed.timeline.events[source].location));
      for (int64_t user : users[source]) {
        int64_t stream = graph.nodes[user].stream;
        Value &copy = sent[{source, stream}];
        if (stream != node.stream && !copy)
          copy =
              dist::SendOp::create(builder, loc, token(stream), value[source]);
      }
    }
  };
  for (int64_t index : replayed.order) {
    const Node &node = graph.nodes[index];
    const SimEvent &event = replayed.timeline.events[index];
    flushSends(event.start);
    Location loc = NameLoc::get(builder.getStringAttr(event.location));
    SmallVector<Value> operands;
    for (int64_t other : waits[index]) {
      operands.push_back(tokenFor(other, node.stream));
      assert(operands.back() && "a token is sent before its consumer starts");
    }
    auto kernel = dist::KernelOp::create(
        builder, loc, token(node.stream), builder.getStringAttr(event.name),
        operands, builder.getF64FloatAttr(node.gap + event.duration),
        node.communication ? builder.getUnitAttr() : UnitAttr());
    value[index] = kernel.getResult();
    // Its token goes to the other streams that wait for it as soon as it
    // ends: a send holds both devices' communication streams, so one placed
    // at its consumer would also wait for what the producer's stream ran
    // since.
    pending.push({event.end, index});
  }
  flushSends(std::numeric_limits<double>::infinity());
  // Each rank's measured tail after its host's last op (in the replay's
  // latency too).
  std::map<int64_t, int64_t> lastHostNode;
  for (auto [index, node] : llvm::enumerate(graph.nodes)) {
    if (graph.streams[node.stream].gpu)
      continue;
    auto [it, inserted] = lastHostNode.try_emplace(node.rank, index);
    if (!inserted && replayed.timeline.events[index].end >
                         replayed.timeline.events[it->second].end)
      it->second = index;
  }
  for (auto [rank, index] : lastHostNode) {
    if (graph.tails[rank] <= 0)
      continue;
    const Node &node = graph.nodes[index];
    Location loc = NameLoc::get(
        builder.getStringAttr(llvm::formatv("rank {0} tail", rank).str()));
    dist::KernelOp::create(
        builder, loc, token(node.stream), builder.getStringAttr("(tail)"),
        ValueRange{value[index]}, builder.getF64FloatAttr(graph.tails[rank]),
        UnitAttr());
  }
  func::ReturnOp::create(builder, builder.getUnknownLoc());
  return module;
}
