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
bool isElementwise(linalg::GenericOp op) {
  if (op.getNumResults() != 1 || op.getNumDpsInits() != 1)
    return false;
  if (op.getNumParallelLoops() != op.getNumLoops())
    return false;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  if (op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  bool usesIndex = false;
  op.getRegion().walk([&](linalg::IndexOp) { usesIndex = true; });
  return !usesIndex;
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
            if (arg.getOwner() == &body && arg.getType() == result.getType())
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
          if (!update->hasOneUse() ||
              !isa<func::ReturnOp>(*update->getUsers().begin()))
            return update.emitError()
                   << "dist-zero: stage 3 returns the updated weight as a "
                      "chunk, so it must be returned once and not used "
                      "otherwise";
      groups.push_back(group);
    }
    return groups;
  }

  /// Leaves of the sum tree of `v`: arith.addf ops whose result has no other
  /// use are looked through (dist-dtp's microbatch accumulation).
  static void collectLeaves(Value v, SmallVectorImpl<Value> &leaves) {
    auto add = v.getDefiningOp<arith::AddFOp>();
    if (!add || !v.hasOneUse()) {
      leaves.push_back(v);
      return;
    }
    collectLeaves(add.getLhs(), leaves);
    collectLeaves(add.getRhs(), leaves);
  }

  /// Reduced gradient chunks of `group`, one per member. Sums of full
  /// gradients that become dead are added to `deadAdds`, outermost first.
  SmallVector<Value> reduceToChunks(OpBuilder &b, Group &group,
                                    SmallVectorImpl<Operation *> &deadAdds) {
    AllReduceOp reduce = group.reduce;
    Location loc = reduce.getLoc();
    int64_t n = group.size();
    Block *body = reduce->getBlock();
    SmallVector<SmallVector<Value>> leaves(n);
    for (auto [i, input] : llvm::enumerate(reduce.getInputs()))
      collectLeaves(input, leaves[i]);
    bool perLeaf = stage >= 2 && leaves[0].size() > 1 &&
                   llvm::all_of(leaves, [&](auto &l) {
                     return l.size() == leaves[0].size();
                   });
    if (!perLeaf) {
      b.setInsertionPoint(reduce);
      auto scatter = ReduceScatterOp::create(b, loc, ReductionKind::Sum,
                                             reduce.getInputs(), group.dim);
      return SmallVector<Value>(scatter.getResults());
    }
    // Stage 2 with accumulation: reduce-scatter every leaf group right after
    // its last member is defined, then rebuild the sums on chunks.
    IRMapping chunks;
    for (size_t j = 0; j < leaves[0].size(); ++j) {
      SmallVector<Value> inputs;
      Operation *last = nullptr;
      for (int64_t i = 0; i < n; ++i) {
        inputs.push_back(leaves[i][j]);
        Operation *def = leaves[i][j].getDefiningOp();
        if (def && (!last || last->isBeforeInBlock(topLevel(def, body))))
          last = topLevel(def, body);
      }
      if (last)
        b.setInsertionPointAfter(last);
      else
        b.setInsertionPointToStart(body);
      auto scatter = ReduceScatterOp::create(b, loc, ReductionKind::Sum, inputs,
                                             group.dim);
      for (int64_t i = 0; i < n; ++i)
        chunks.map(inputs[i], scatter.getResult(i));
    }
    b.setInsertionPoint(reduce);
    std::function<Value(Value)> rebuild = [&](Value v) -> Value {
      if (Value c = chunks.lookupOrNull(v))
        return c;
      auto add = v.getDefiningOp<arith::AddFOp>();
      Value lhs = rebuild(add.getLhs()), rhs = rebuild(add.getRhs());
      IRMapping mapping;
      mapping.map(add.getLhs(), lhs);
      mapping.map(add.getRhs(), rhs);
      deadAdds.push_back(add);
      Operation *clone = b.clone(*add, mapping);
      clone->getResult(0).setType(lhs.getType());
      chunks.map(v, clone->getResult(0));
      return clone->getResult(0);
    };
    SmallVector<Value> result;
    for (Value input : reduce.getInputs())
      result.push_back(rebuild(input));
    return result;
  }

  LogicalResult transform(ModuleOp module, func::FuncOp func,
                          SmallVector<Group> &groups) {
    OpBuilder b(func.getContext());
    SmallVector<Operation *> dead, deadAdds;
    // Stage 3: chunked arguments and results of the step function.
    DenseMap<unsigned, Chunk> chunkedArgs;
    SmallVector<ResultGroup> resultGroups;

    for (Group &group : groups) {
      int64_t n = group.size();
      SmallVector<Value> gradChunks = reduceToChunks(b, group, deadAdds);
      // Chunked updates, each right before the full one.
      SmallVector<Value> updated;
      for (int64_t i = 0; i < n; ++i) {
        linalg::GenericOp update = group.updates[i];
        b.setInsertionPoint(update);
        Location loc = update.getLoc();
        IRMapping mapping;
        for (Value input : update.getDpsInputs()) {
          if (mapping.contains(input))
            continue;
          if (input == group.reduce.getResult(i))
            mapping.map(input, gradChunks[i]);
          else if (stage == 3 && input == group.weights[i])
            mapping.map(input, input); // Retyped to the chunk below.
          else
            mapping.map(input, sliceChunk(b, loc, input, group.dim, i, n));
        }
        auto fullType = cast<RankedTensorType>(update.getResult(0).getType());
        RankedTensorType chunk = chunkType(fullType, group.dim, n);
        Value init = tensor::EmptyOp::create(b, loc, chunk.getShape(),
                                             chunk.getElementType(),
                                             chunk.getEncoding());
        mapping.map(update.getDpsInits()[0], init);
        Operation *clone = b.clone(*update, mapping);
        clone->getResult(0).setType(chunk);
        updated.push_back(clone->getResult(0));
        group.chunkUpdates.push_back(clone);
      }
      if (stage == 3) {
        ResultGroup results{group.dim, {}};
        for (int64_t i = 0; i < n; ++i) {
          OpOperand &use = *group.updates[i]->getUses().begin();
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
        Value init = update.getDpsInits()[0];
        dead.push_back(update);
        if (Operation *def = init.getDefiningOp())
          if (isa<tensor::EmptyOp>(def) && init.hasOneUse())
            dead.push_back(def);
      }
      dead.push_back(group.reduce);
    }
    // The all-reduces, full updates and dead accumulations go.
    for (Operation *op : dead)
      op->dropAllUses();
    for (Operation *op : dead)
      op->erase();
    // Post-order pushes children first: erase from the back (roots first).
    for (Operation *op : llvm::reverse(deadAdds))
      op->erase();

    if (stage == 3)
      if (failed(chunkWeights(b, func, groups, chunkedArgs)))
        return failure();
    updateSignature(func);
    if (stage == 3)
      return updateCallers(b, module, func, chunkedArgs, resultGroups);
    return success();
  }

  LogicalResult chunkWeights(OpBuilder &b, func::FuncOp func,
                             SmallVector<Group> &groups,
                             DenseMap<unsigned, Chunk> &chunkedArgs) {
    Block &body = func.getBody().front();
    for (Group &group : groups) {
      int64_t n = group.size();
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
