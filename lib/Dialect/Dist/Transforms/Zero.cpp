//===- Zero.cpp - ZeRO stages 1-3 on data-parallel training steps ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Data parallelism replicates every weight, its gradient and the update on
// all N replicas. ZeRO partitions them: replica i owns chunk i of each
// weight. Stage 1 updates only the owned chunk (reduce-scatter the gradient,
// all-gather the updated weight), stage 2 also keeps gradients only as
// chunks (with microbatches: reduce-scatter each microbatch's gradient and
// accumulate chunks), stage 3 also keeps the weights only as chunks and
// all-gathers a weight right before each of its uses.
//
// The pass recognizes what `dist-dtp` emits rather than re-deriving the
// training step: a `dist.all_reduce sum` whose results are each read only
// by an element-wise update of a function argument. See
// docs/design/zero.md.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/DistOps.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTZEROPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir;
using namespace distir::dist;

namespace {

/// One weight-gradient all-reduce over a data-parallel group and, per
/// member (operand order), the update that reads its result and the weight
/// (a function argument) that the update reads.
struct Group {
  AllReduceOp reduce;
  /// The all-reduce's location (it is erased before stage 3 runs).
  Location loc;
  SmallVector<linalg::GenericOp> updates;
  SmallVector<BlockArgument> weights;
  /// Per member, the update on chunks that replaces the full one.
  SmallVector<Operation *> chunkUpdates;
  /// The dimension that is split into chunks.
  int64_t dim = 0;
  int64_t size() const { return static_cast<int64_t>(updates.size()); }
};

/// The op of `block` that contains `op` (or `op` itself).
Operation *topLevel(Operation *op, Block *block) {
  return block->findAncestorOpInBlock(*op);
}

RankedTensorType chunkType(RankedTensorType full, int64_t dim, int64_t n) {
  SmallVector<int64_t> shape(full.getShape());
  shape[dim] /= n;
  return RankedTensorType::get(shape, full.getElementType(),
                               full.getEncoding());
}

/// Chunk `index` of `n` of `full` along `dim`.
Value sliceChunk(OpBuilder &b, Location loc, Value full, int64_t dim,
                 int64_t index, int64_t n) {
  auto type = cast<RankedTensorType>(full.getType());
  RankedTensorType chunk = chunkType(type, dim, n);
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  for (int64_t s : chunk.getShape())
    sizes.push_back(b.getIndexAttr(s));
  offsets[dim] = b.getIndexAttr(index * chunk.getDimSize(dim));
  return tensor::ExtractSliceOp::create(b, loc, chunk, full, offsets, sizes,
                                        strides);
}

/// Whether `op` is an element-wise update that can run on chunks: all
/// loops parallel, identity indexing maps, one result, the init not read
/// and no `linalg.index`.
/// Whether `op` can run on chunks: parallel loops, identity maps but for
/// scalars broadcast to every point (Adam's step count), inits not read,
/// no linalg.index. Several results are the updated weight (the first)
/// and its optimizer state (dist-autodiff's momentum / Adam updates).
bool isElementwise(linalg::GenericOp op) {
  if (op.getNumResults() < 1)
    return false;
  if (op.getNumParallelLoops() != op.getNumLoops())
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    bool scalar = op.isDpsInput(&operand) && map.getNumResults() == 0;
    if (!map.isIdentity() && !scalar)
      return false;
  }
  for (OpOperand &init : op.getDpsInitsMutable())
    if (op.payloadUsesValueFromOperand(&init))
      return false;
  bool usesIndex = false;
  op.getRegion().walk([&](linalg::IndexOp) { usesIndex = true; });
  return !usesIndex;
}

/// Optimizer state (dist-autodiff's `dist.optimizer_state` arguments, kept
/// by dist-dtp) of the same shape as the weight: ZeRO partitions it.
bool isStateArgument(Value v, Block &body) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &body)
    return false;
  auto func = cast<func::FuncOp>(body.getParentOp());
  return func.getArgAttr(arg.getArgNumber(), "dist.optimizer_state") != nullptr;
}

/// Chunk `index` of `n` along `dim`.
struct Chunk {
  int64_t dim, index, n;
};

/// Result numbers (member order) of one group's updated-weight chunks.
struct ResultGroup {
  int64_t dim;
  SmallVector<unsigned> results;
};

struct DistZeroPass : public dist::impl::DistZeroPassBase<DistZeroPass> {
  using DistZeroPassBase::DistZeroPassBase;

  void runOnOperation() final {
    ModuleOp module = getOperation();
    if (stage < 1 || stage > 3) {
      mlir::emitError(module.getLoc())
          << "dist-zero: stage must be 1, 2 or 3, got "
          << static_cast<int64_t>(stage);
      return signalPassFailure();
    }
    bool found = false;
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      if (auto applied = func->getAttrOfType<IntegerAttr>("dist.zero_stage")) {
        func.emitError() << "dist-zero: @" << func.getSymName()
                         << " is already transformed (stage "
                         << applied.getInt() << ")";
        return signalPassFailure();
      }
      FailureOr<SmallVector<Group>> groups = findGroups(func);
      if (failed(groups))
        return signalPassFailure();
      if (groups->empty())
        continue;
      found = true;
      if (failed(transform(module, func, *groups)))
        return signalPassFailure();
      func->setAttr(
          "dist.zero_stage",
          IntegerAttr::get(IntegerType::get(&getContext(), 64), stage));
    }
    if (!found) {
      mlir::emitError(module.getLoc())
          << "dist-zero: no weight gradient is all-reduced over a "
             "data-parallel group (expected a training step from "
             "--dist-dtp with dp > 1)";
      return signalPassFailure();
    }
  }

  /// The weight-gradient groups of `func`, in program order.
  FailureOr<SmallVector<Group>> findGroups(func::FuncOp func) {
    Block &body = func.getBody().front();
    SmallVector<Group> groups;
    for (auto reduce : body.getOps<AllReduceOp>()) {
      if (reduce.getKind() != ReductionKind::Sum ||
          reduce.getInputs().size() < 2)
        continue;
      Group group{reduce, reduce.getLoc(), {}, {}, {}, 0};
      for (Value result : reduce.getResults()) {
        if (!result.hasOneUse())
          break;
        auto update = dyn_cast<linalg::GenericOp>(*result.getUsers().begin());
        if (!update || update->getBlock() != &body)
          break;
        BlockArgument weight;
        for (Value input : update.getDpsInputs())
          if (auto arg = dyn_cast<BlockArgument>(input))
            if (arg.getOwner() == &body && arg.getType() == result.getType() &&
                !isStateArgument(arg, body))
              weight = arg;
        if (!weight)
          break;
        group.updates.push_back(update);
        group.weights.push_back(weight);
      }
      if (group.updates.empty())
        continue; // Not a weight gradient (e.g. the loss).
      if (group.size() != static_cast<int64_t>(reduce.getNumResults()))
        return reduce.emitError()
               << "dist-zero: only some results of this all-reduce are read "
                  "by a single element-wise update of a weight argument; "
                  "the others have other uses";
      for (linalg::GenericOp update : group.updates)
        if (!isElementwise(update))
          return update.emitError()
                 << "dist-zero: the weight update is not element-wise "
                    "(identity maps, parallel loops, init not read), so it "
                    "cannot run on chunks";
      llvm::DenseSet<Value> seen;
      for (BlockArgument w : group.weights)
        if (!seen.insert(w).second)
          return reduce.emitError()
                 << "dist-zero: two replicas update the same weight argument";
      auto type = cast<RankedTensorType>(reduce.getResult(0).getType());
      int64_t n = group.size();
      int64_t dim = -1;
      for (int64_t d = 0; d < type.getRank() && dim < 0; ++d)
        if (type.getDimSize(d) % n == 0)
          dim = d;
      if (dim < 0)
        return reduce.emitError()
               << "dist-zero: no dimension of the weight gradient " << type
               << " is divisible by the data-parallel group size " << n
               << " (chunks are not padded)";
      group.dim = dim;
      if (stage == 3)
        for (linalg::GenericOp update : group.updates)
          if (!update->getResult(0).hasOneUse() ||
              !isa<func::ReturnOp>(*update->getResult(0).getUsers().begin()))
            return update.emitError()
                   << "dist-zero: stage 3 returns the updated weight as a "
                      "chunk, so it must be returned once and not used "
                      "otherwise";
      // Replicas update alike (dist-dtp's copies): their state results are
      // chunked together.
      for (linalg::GenericOp update : group.updates)
        if (update->getNumResults() != group.updates.front()->getNumResults())
          return update.emitError()
                 << "dist-zero: the replicas' updates of this all-reduce "
                    "have different numbers of results";
      // The state an update reads is read by that update only, and what it
      // writes is returned once: both become chunks of the step function.
      for (linalg::GenericOp update : group.updates) {
        for (Value input : update.getDpsInputs())
          if (isStateArgument(input, body) &&
              input.getType() == update.getResult(0).getType() &&
              !input.hasOneUse())
            return update.emitError()
                   << "dist-zero: optimizer state argument #"
                   << cast<BlockArgument>(input).getArgNumber()
                   << " is read by more than its update, so it cannot be "
                      "partitioned";
        for (OpResult result : llvm::drop_begin(update->getResults()))
          if (!result.hasOneUse() ||
              !isa<func::ReturnOp>(*result.getUsers().begin()))
            return update.emitError()
                   << "dist-zero: updated optimizer state (result #"
                   << result.getResultNumber()
                   << ") must be returned once and not used otherwise";
      }
      groups.push_back(group);
    }
    return groups;
  }

  /// The in-place accumulation chain that ends in `v`, first link first:
  /// dist-dtp accumulates microbatch m's gradient into microbatch m - 1's
  /// by passing it as the init of the same destination-style op. A value
  /// that is no such chain is a chain of one link.
  static SmallVector<Operation *> collectLinks(Value v) {
    SmallVector<Operation *> links;
    Operation *op = v.getDefiningOp();
    while (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op)) {
      links.push_back(op);
      if (linalgOp->getNumResults() != 1 || linalgOp.getNumDpsInits() != 1)
        break;
      Value init = linalgOp.getDpsInits()[0];
      Operation *prev = init.getDefiningOp();
      // A link is a copy of the same op (another microbatch's instance).
      if (!prev || !init.hasOneUse() ||
          !OperationEquivalence::isEquivalentTo(
              prev, op, OperationEquivalence::ignoreValueEquivalence,
              /*markEquivalent=*/nullptr,
              OperationEquivalence::IgnoreLocations))
        break;
      op = prev;
    }
    if (links.empty())
      links.push_back(op);
    std::reverse(links.begin(), links.end());
    return links;
  }

  /// The `linalg.fill` of a `tensor.empty` that `firstLink` starts from
  /// (dist-dtp's zero init), or null.
  static linalg::FillOp getZeroFill(Operation *firstLink) {
    auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(firstLink);
    if (!linalgOp || linalgOp.getNumDpsInits() != 1)
      return nullptr;
    auto fill = linalgOp.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (!fill || !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return nullptr;
    return fill;
  }

  /// A fresh copy of `fill` and its `tensor.empty` at the builder's point.
  static Value cloneZeroFill(OpBuilder &b, linalg::FillOp fill) {
    IRMapping mapping;
    b.clone(*fill.getOutputs()[0].getDefiningOp(), mapping);
    return b.clone(*fill, mapping)->getResult(0);
  }

  /// Reduced gradient chunks of `group`, one per member. Stages 2 and 3
  /// keep no full gradient buffer: dist-dtp's persistent, in-place
  /// accumulated buffer is broken up so that each microbatch's gradient
  /// goes into a zero tensor of its own, allocated right before it is
  /// computed, and is reduce-scattered right after its last member computed
  /// it; the chunks are accumulated as they arrive (DeepSpeed's ZeRO-2 with
  /// gradient accumulation), so no full gradient outlives its microbatch.
  SmallVector<Value> reduceToChunks(OpBuilder &b, Group &group) {
    AllReduceOp reduce = group.reduce;
    Location loc = reduce.getLoc();
    int64_t n = group.size();
    Block *body = reduce->getBlock();
    SmallVector<SmallVector<Operation *>> links;
    for (Value input : reduce.getInputs())
      links.push_back(collectLinks(input));
    bool perLink = stage >= 2 && llvm::all_of(links, [&](auto &l) {
                     return l.size() == links[0].size() &&
                            getZeroFill(l.front()) &&
                            llvm::all_of(l, [&](Operation *op) {
                              return op->getBlock() == body;
                            });
                   });
    if (perLink) {
      // Every link gets a zero init of its own, right before it.
      for (auto &memberLinks : links) {
        linalg::FillOp fill = getZeroFill(memberLinks.front());
        Operation *empty = fill.getOutputs()[0].getDefiningOp();
        for (Operation *link : memberLinks) {
          b.setInsertionPoint(link);
          cast<linalg::LinalgOp>(link).getDpsInitsMutable()[0].set(
              cloneZeroFill(b, fill));
        }
        if (fill->use_empty()) {
          fill->erase();
          if (empty->use_empty())
            empty->erase();
        }
      }
    } else {
      b.setInsertionPoint(reduce);
      auto scatter = ReduceScatterOp::create(b, loc, ReductionKind::Sum,
                                             reduce.getInputs(), group.dim);
      return SmallVector<Value>(scatter.getResults());
    }
    SmallVector<Value> sums(n);
    for (size_t j = 0; j < links[0].size(); ++j) {
      SmallVector<Value> inputs;
      Operation *last = links[0][j];
      for (int64_t i = 0; i < n; ++i) {
        inputs.push_back(links[i][j]->getResult(0));
        if (last->isBeforeInBlock(links[i][j]))
          last = links[i][j];
      }
      b.setInsertionPointAfter(last);
      auto scatter = ReduceScatterOp::create(b, loc, ReductionKind::Sum, inputs,
                                             group.dim);
      // Accumulated in place into the first chunk (the sum is the init).
      for (int64_t i = 0; i < n; ++i)
        sums[i] = j == 0
                      ? scatter.getResult(i)
                      : linalg::AddOp::create(
                            b, loc, ValueRange{sums[i], scatter.getResult(i)},
                            ValueRange{sums[i]})
                            .getResult(0);
    }
    return sums;
  }

  LogicalResult transform(ModuleOp module, func::FuncOp func,
                          SmallVector<Group> &groups) {
    OpBuilder b(func.getContext());
    SmallVector<Operation *> dead;
    // Stage 3: chunked arguments and results of the step function.
    DenseMap<unsigned, Chunk> chunkedArgs;
    SmallVector<ResultGroup> resultGroups;
    SmallVector<BlockArgument> stateArgs;

    for (Group &group : groups) {
      int64_t n = group.size();
      SmallVector<Value> gradChunks = reduceToChunks(b, group);
      // Chunked updates, each right before the full one.
      SmallVector<Value> updated;
      for (int64_t i = 0; i < n; ++i) {
        linalg::GenericOp update = group.updates[i];
        b.setInsertionPoint(update);
        Location loc = update.getLoc();
        IRMapping mapping;
        Block &body = func.getBody().front();
        for (OpOperand *operand : update.getDpsInputOperands()) {
          Value input = operand->get();
          if (mapping.contains(input))
            continue;
          if (update.getMatchingIndexingMap(operand).getNumResults() == 0)
            mapping.map(input, input); // A scalar every point reads.
          else if (input == group.reduce.getResult(i))
            mapping.map(input, gradChunks[i]);
          else if (stage == 3 && input == group.weights[i])
            mapping.map(input, input); // Retyped to the chunk below.
          else if (isStateArgument(input, body) &&
                   input.getType() == update.getResult(0).getType()) {
            // Partitioned optimizer state: the argument becomes the chunk.
            auto arg = cast<BlockArgument>(input);
            stateArgs.push_back(arg);
            chunkedArgs[arg.getArgNumber()] = {group.dim, i, n};
            mapping.map(input, input);
          } else
            mapping.map(input, sliceChunk(b, loc, input, group.dim, i, n));
        }
        for (Value init : update.getDpsInits()) {
          RankedTensorType chunk =
              chunkType(cast<RankedTensorType>(init.getType()), group.dim, n);
          mapping.map(init, tensor::EmptyOp::create(b, loc, chunk.getShape(),
                                                    chunk.getElementType(),
                                                    chunk.getEncoding()));
        }
        Operation *clone = b.clone(*update, mapping);
        for (OpResult result : clone->getResults())
          result.setType(chunkType(cast<RankedTensorType>(result.getType()),
                                   group.dim, n));
        updated.push_back(clone->getResult(0));
        group.chunkUpdates.push_back(clone);
      }
      // Updated optimizer state is returned as chunks (every stage).
      for (unsigned r = 1; r < group.updates[0]->getNumResults(); ++r) {
        ResultGroup results{group.dim, {}};
        for (int64_t i = 0; i < n; ++i) {
          OpOperand &use = *group.updates[i]->getResult(r).getUses().begin();
          results.results.push_back(use.getOperandNumber());
          group.updates[i]->getResult(r).replaceAllUsesWith(
              group.chunkUpdates[i]->getResult(r));
        }
        resultGroups.push_back(results);
      }
      if (stage == 3) {
        ResultGroup results{group.dim, {}};
        for (int64_t i = 0; i < n; ++i) {
          OpOperand &use = *group.updates[i]->getResult(0).getUses().begin();
          results.results.push_back(use.getOperandNumber());
          group.updates[i].getResult(0).replaceAllUsesWith(updated[i]);
        }
        resultGroups.push_back(results);
      } else {
        Operation *last = group.updates.front();
        for (linalg::GenericOp update : group.updates)
          if (last->isBeforeInBlock(update))
            last = update;
        b.setInsertionPointAfter(last);
        auto gather =
            AllGatherOp::create(b, group.reduce.getLoc(), updated, group.dim);
        for (int64_t i = 0; i < n; ++i)
          group.updates[i].getResult(0).replaceAllUsesWith(gather.getResult(i));
      }
      for (linalg::GenericOp update : group.updates) {
        dead.push_back(update);
        llvm::SmallPtrSet<Operation *, 4> inits;
        for (Value init : update.getDpsInits())
          if (Operation *def = init.getDefiningOp())
            if (isa<tensor::EmptyOp>(def) &&
                llvm::all_of(def->getUsers(),
                             [&](Operation *user) {
                               return user == update.getOperation();
                             }) &&
                inits.insert(def).second)
              dead.push_back(def);
      }
      dead.push_back(group.reduce);
    }
    // The all-reduces and full updates go.
    for (Operation *op : dead)
      op->dropAllUses();
    for (Operation *op : dead)
      op->erase();

    for (BlockArgument arg : stateArgs) {
      Chunk c = chunkedArgs[arg.getArgNumber()];
      arg.setType(chunkType(cast<RankedTensorType>(arg.getType()), c.dim, c.n));
    }
    if (stage == 3)
      if (failed(chunkWeights(b, func, groups, chunkedArgs)))
        return failure();
    updateSignature(func);
    // A chunk holds part of a weight: it no longer answers to the weight's
    // name (tools bind names to whole tensors, --weights-from).
    for (auto &entry : chunkedArgs)
      func.removeArgAttr(entry.first,
                         StringAttr::get(func.getContext(), "dist.name"));
    if (!chunkedArgs.empty() || !resultGroups.empty())
      return updateCallers(b, module, func, chunkedArgs, resultGroups);
    return success();
  }

  LogicalResult chunkWeights(OpBuilder &b, func::FuncOp func,
                             SmallVector<Group> &groups,
                             DenseMap<unsigned, Chunk> &chunkedArgs) {
    Block &body = func.getBody().front();
    for (Group &group : groups) {
      int64_t n = group.size();
      // dist-dtp transposes a weight once for the backward of every
      // microbatch. Here the transpose would hold the gathered full weight
      // from the first microbatch's backward to the last one's: instead
      // each of its uses gets a transpose of its own (and so a gather of
      // its own right before it), as ZeRO-3 gathers a parameter for every
      // backward.
      for (BlockArgument w : group.weights)
        for (Operation *user : llvm::to_vector(w.getUsers())) {
          auto transpose = dyn_cast<linalg::TransposeOp>(user);
          if (!transpose || transpose->getBlock() != &body)
            continue;
          // Uses in program order; the first keeps the transpose.
          SmallVector<OpOperand *> uses;
          for (OpOperand &use : transpose.getResult()[0].getUses())
            uses.push_back(&use);
          llvm::sort(uses, [&](OpOperand *x, OpOperand *y) {
            return topLevel(x->getOwner(), &body)
                ->isBeforeInBlock(topLevel(y->getOwner(), &body));
          });
          for (OpOperand *use : llvm::drop_begin(uses)) {
            Operation *consumer = topLevel(use->getOwner(), &body);
            b.setInsertionPoint(consumer);
            IRMapping mapping;
            if (Operation *init = transpose.getInit().getDefiningOp();
                init && isa<tensor::EmptyOp>(init))
              mapping.map(transpose.getInit(), b.clone(*init)->getResult(0));
            use->set(b.clone(*transpose, mapping)->getResult(0));
          }
        }
      // Each replica's uses of its weight (besides the chunked update, which
      // reads the chunk itself), in program order.
      SmallVector<SmallVector<Operation *>> users(n);
      for (int64_t i = 0; i < n; ++i) {
        BlockArgument w = group.weights[i];
        llvm::SetVector<Operation *> ops;
        for (OpOperand &use : w.getUses())
          ops.insert(topLevel(use.getOwner(), &body));
        users[i].assign(ops.begin(), ops.end());
        llvm::sort(users[i], [](Operation *x, Operation *y) {
          return x->isBeforeInBlock(y);
        });
      }
      // The chunked update reads the argument as the chunk itself.
      for (int64_t i = 0; i < n; ++i)
        llvm::erase_if(users[i], [&](Operation *op) {
          return op == group.chunkUpdates[i];
        });
      for (int64_t i = 1; i < n; ++i)
        if (users[i].size() != users[0].size())
          return mlir::emitError(group.loc)
                 << "dist-zero: replicas use their weights a different number "
                    "of times ("
                 << users[0].size() << " vs " << users[i].size()
                 << "), cannot pair the all-gathers";
      for (int64_t i = 0; i < n; ++i) {
        BlockArgument w = group.weights[i];
        w.setType(chunkType(cast<RankedTensorType>(w.getType()), group.dim, n));
        chunkedArgs[w.getArgNumber()] = {group.dim, i, n};
      }
      for (size_t k = 0; k < users[0].size(); ++k) {
        Operation *first = users[0][k];
        for (int64_t i = 1; i < n; ++i)
          if (users[i][k]->isBeforeInBlock(first))
            first = users[i][k];
        b.setInsertionPoint(first);
        SmallVector<Value> chunks(group.weights.begin(), group.weights.end());
        auto gather = AllGatherOp::create(b, group.loc, chunks, group.dim);
        for (int64_t i = 0; i < n; ++i) {
          Operation *user = users[i][k];
          group.weights[i].replaceUsesWithIf(
              gather.getResult(i),
              [&](OpOperand &use) { return user->isAncestor(use.getOwner()); });
        }
      }
    }
    return success();
  }

  static void updateSignature(func::FuncOp func) {
    Block &body = func.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                   ret.getOperandTypes()));
  }

  /// Stage 3: callers pass each replica its chunk and gather the updated
  /// chunks back onto the device of each full result they read.
  LogicalResult updateCallers(OpBuilder &b, ModuleOp module, func::FuncOp func,
                              DenseMap<unsigned, Chunk> &chunkedArgs,
                              SmallVector<ResultGroup> &resultGroups) {
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (call.getCallee() == func.getSymName())
        calls.push_back(call);
    });
    FunctionType type = func.getFunctionType();
    for (func::CallOp call : calls) {
      b.setInsertionPoint(call);
      for (auto [arg, c] : chunkedArgs)
        call->setOperand(arg,
                         sliceChunk(b, call.getLoc(), call->getOperand(arg),
                                    c.dim, c.index, c.n));
      b.setInsertionPointAfter(call);
      for (ResultGroup &group : resultGroups) {
        SmallVector<RankedTensorType> fullTypes;
        SmallVector<SmallVector<OpOperand *>> uses;
        SmallVector<Value> members;
        for (unsigned res : group.results) {
          Value result = call.getResult(res);
          fullTypes.push_back(cast<RankedTensorType>(result.getType()));
          uses.emplace_back();
          for (OpOperand &use : result.getUses())
            uses.back().push_back(&use);
          result.setType(type.getResult(res));
          members.push_back(result);
        }
        for (auto [i, memberUses] : llvm::enumerate(uses)) {
          if (memberUses.empty())
            continue;
          auto gather = GatherOp::create(b, call.getLoc(), fullTypes[i],
                                         members, group.dim);
          for (OpOperand *use : memberUses)
            use->set(gather.getResult());
        }
      }
    }
    return success();
  }
};
} // namespace
