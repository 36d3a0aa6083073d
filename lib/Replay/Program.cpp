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
  // The replay's order: ready nodes by start (the modified Kahn algorithm
  // gave these starts), so every operand is defined before its user.
  size_t count = graph.nodes.size();
  std::vector<int64_t> pending(count, 0);
  std::vector<std::vector<int64_t>> users(count);
  auto waitsFor = [&](const Node &node) {
    SmallVector<int64_t, 4> all(node.dependencies.begin(),
                                node.dependencies.end());
    if (node.previous >= 0)
      all.push_back(node.previous);
    llvm::sort(all);
    all.erase(llvm::unique(all), all.end());
    return all;
  };
  for (auto [index, node] : llvm::enumerate(graph.nodes))
    for (int64_t other : waitsFor(node)) {
      ++pending[index];
      users[other].push_back(index);
    }
  using Entry = std::pair<double, int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  auto startOf = [&](int64_t index) {
    return replayed.timeline.events[index].start;
  };
  for (size_t index = 0; index < count; ++index)
    if (pending[index] == 0)
      ready.push({startOf(index), index});

  std::vector<Value> value(count);
  // Tokens already sent to another stream: (node, stream).
  llvm::DenseMap<std::pair<int64_t, int64_t>, Value> sent;
  while (!ready.empty()) {
    int64_t index = ready.top().second;
    ready.pop();
    const Node &node = graph.nodes[index];
    std::string where =
        llvm::formatv("rank {0} thread {1} iteration {2}", node.rank,
                      graph.streams[node.stream].thread, node.iteration);
    Location loc = NameLoc::get(builder.getStringAttr(where));
    SmallVector<Value> operands;
    for (int64_t other : waitsFor(node))
      operands.push_back(graph.nodes[other].stream == node.stream
                             ? value[other]
                             : sent.lookup({other, node.stream}));
    double duration = node.communication
                          ? replayed.transferTimes[node.collective] /
                                graph.collectives[node.collective].steps
                          : node.duration;
    std::string label = node.communication
                            ? llvm::formatv("{0} step {1} {2}->{3}", node.name,
                                            node.step, node.rank, node.receiver)
                                  .str()
                            : node.name;
    auto kernel = dist::KernelOp::create(
        builder, loc, token(node.stream), builder.getStringAttr(label),
        operands, builder.getF64FloatAttr(node.gap + duration),
        node.communication ? builder.getUnitAttr() : UnitAttr());
    value[index] = kernel.getResult();
    // Its token goes to the other streams that wait for it right away: a
    // send holds both devices' communication streams, so one placed at its
    // consumer would also wait for what the producer's stream ran since.
    for (int64_t user : users[index]) {
      int64_t stream = graph.nodes[user].stream;
      Value &copy = sent[{index, stream}];
      if (stream != node.stream && !copy)
        copy = dist::SendOp::create(builder, loc, token(stream), value[index]);
    }
    for (int64_t user : users[index])
      if (--pending[user] == 0)
        ready.push({startOf(user), user});
  }
  func::ReturnOp::create(builder, builder.getUnknownLoc());
  return module;
}
