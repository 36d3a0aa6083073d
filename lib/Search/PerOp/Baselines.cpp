//===- Baselines.cpp - Hand-written strategies PaSE is compared with ------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Pure data parallelism and Krizhevsky's "one weird trick" (data-parallel
// convolutions, parameter-parallel fully connected layers), expressed as
// configurations of the same cost graph, so that their predicted cost, their
// emitted programs and their simulations compare with PaSE's on equal terms.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Search/PerOp.h"
#include "Tiles.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace distir;
using namespace distir::pase;
using namespace distir::pase::detail;

namespace {

/// The configuration of `v` that splits only `loop`, by all devices; the
/// whole op on every device when `loop` is -1 or no such configuration
/// exists.
int64_t onlySplit(const PerOpProblem &problem, size_t v, int64_t loop,
                  int64_t devices, int64_t &fallbacks) {
  const std::vector<LoopSplit> &configs = problem.configs[v];
  int64_t whole = -1;
  for (auto [index, split] : llvm::enumerate(configs)) {
    bool others = true;
    for (auto [l, f] : llvm::enumerate(split.factors))
      if (static_cast<int64_t>(l) != loop && f != 1)
        others = false;
    if (!others)
      continue;
    if (loop >= 0 && split.factors[loop] == devices)
      return index;
    if (split.replicas == devices)
      whole = index;
  }
  if (loop >= 0)
    ++fallbacks;
  return whole >= 0 ? whole : 0;
}

/// A weight: a function argument without `dist.batch_dim`, seen through
/// transposes and precision casts.
bool isWeight(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (def->getNumOperands() == 0 || !isa<linalg::LinalgOp>(def) ||
        cast<linalg::LinalgOp>(def).getNumDpsInputs() != 1)
      return false;
    value = def->getOperand(0);
  }
  auto arg = cast<BlockArgument>(value);
  auto function = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return function && !function.getArgAttr(arg.getArgNumber(), "dist.batch_dim");
}

} // namespace

FailureOr<BaselineStrategy> pase::baselineStrategy(const PerOpProblem &problem,
                                                   BaselineKind kind,
                                                   int64_t devices) {
  BaselineStrategy result;
  result.strategy.config.assign(problem.ops.size(), 0);
  // The batch dimension of each value, from the arguments' dist.batch_dim.
  llvm::DenseMap<Value, int64_t> batchDim;
  if (!problem.ops.empty()) {
    auto function = problem.ops.front()->getParentOfType<FunctionOpInterface>();
    for (BlockArgument arg : function.getArguments())
      if (auto dim = function.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                            "dist.batch_dim"))
        batchDim[arg] = dim.getInt();
  }
  llvm::DenseSet<size_t> producedByBatch;
  for (size_t v = 0; v < problem.ops.size(); ++v) {
    Operation *op = problem.ops[v];
    // The loop the batch flows through: a loop reading an operand's batch dim.
    int64_t batchLoop = -1;
    for (OpOperand &operand : op->getOpOperands()) {
      auto it = batchDim.find(operand.get());
      AffineMap map = operandMap(operand);
      if (it == batchDim.end() || !map ||
          it->second >= static_cast<int64_t>(map.getNumResults()))
        continue;
      if (auto dim = dyn_cast<AffineDimExpr>(map.getResult(it->second))) {
        batchLoop = dim.getPosition();
        break;
      }
    }
    int64_t loop = batchLoop;
    // One weird trick: a fully connected layer (a contraction with a 2-D
    // weight) splits its output features instead.
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (kind == BaselineKind::OneWeirdTrick && linalgOp &&
        linalgOp.getNumReductionLoops() > 0) {
      for (OpOperand *input : linalgOp.getDpsInputOperands()) {
        auto type = dyn_cast<RankedTensorType>(input->get().getType());
        if (!type || type.getRank() != 2 || !isWeight(input->get()))
          continue;
        AffineMap map = linalgOp.getMatchingIndexingMap(input);
        SmallVector<utils::IteratorType> iterators =
            linalgOp.getIteratorTypesArray();
        for (AffineExpr expr : map.getResults())
          if (auto dim = dyn_cast<AffineDimExpr>(expr))
            if (iterators[dim.getPosition()] == utils::IteratorType::parallel)
              loop = dim.getPosition();
        ++result.parameterParallelOps;
      }
    }
    if (batchLoop >= 0)
      producedByBatch.insert(v);
    result.strategy.config[v] =
        onlySplit(problem, v, loop, devices, result.fallbacks);
    // Where the batch goes: the result dim its loop writes.
    if (batchLoop < 0)
      continue;
    for (OpResult res : op->getResults()) {
      AffineMap map = resultMap(res);
      if (!map)
        continue;
      for (auto [d, expr] : llvm::enumerate(map.getResults()))
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          if (static_cast<int64_t>(dim.getPosition()) == batchLoop)
            batchDim[res] = d;
    }
  }
  // Ops the batch does not reach but whose result initializes a batch-split
  // op (zero fills of accumulators) take the consumer's batch split.
  llvm::DenseMap<Operation *, size_t> vertexOf;
  for (size_t v = 0; v < problem.ops.size(); ++v)
    vertexOf[problem.ops[v]] = v;
  for (size_t v = problem.ops.size(); v-- > 0;) {
    auto consumer = dyn_cast<linalg::LinalgOp>(problem.ops[v]);
    if (!consumer)
      continue;
    const LoopSplit &split = problem.configs[v][result.strategy.config[v]];
    for (OpOperand &init : consumer.getDpsInitsMutable()) {
      auto produced = dyn_cast<OpResult>(init.get());
      auto it = produced ? vertexOf.find(produced.getOwner()) : vertexOf.end();
      if (it == vertexOf.end() || producedByBatch.contains(it->second))
        continue;
      AffineMap consumerMap = consumer.getMatchingIndexingMap(&init);
      AffineMap producerMap = resultMap(produced);
      if (!producerMap)
        continue;
      for (auto [d, expr] : llvm::enumerate(consumerMap.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        auto written = dyn_cast<AffineDimExpr>(producerMap.getResult(d));
        if (!dim || !written || split.factors[dim.getPosition()] != devices)
          continue;
        int64_t unused = 0;
        result.strategy.config[it->second] = onlySplit(
            problem, it->second, written.getPosition(), devices, unused);
      }
    }
  }
  result.strategy.cost = problem.graph.evaluate(result.strategy.config);
  return result;
}
