//===- Interpreter.h - Program-order abstract interpreter -------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// One walker for every analysis of a `dist` program: it visits the ops of a
// function in program order (which is the schedule), recursing into
// `func.call`, unrolling `scf.for` and resolving `scf.if` when the bounds and
// conditions are concrete, and hands every other op to a domain.
//
// A domain is the derived class (CRTP). It chooses the abstract value type
// and implements
//
//   LogicalResult visitOp(Operation *op, ArrayRef<ValueT> operands,
//                         SmallVectorImpl<ValueT> &results);
//   std::optional<int64_t> getConcreteInt(const ValueT &value);
//   ValueT makeIndex(int64_t value);
//
// and may override the hooks below. The reference executor's values are
// concrete tensors; the simulator's are types plus timing and buffers, with
// concrete integers wherever index/shape arithmetic appears (mixed
// concrete/abstract interpretation).
//
// Straight-line programs need no fixpoint, so this is a direct walk rather
// than an MLIR DataFlow analysis: one pass over the ops, linear in their
// number.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_INTERPRETER_H
#define DISTIR_ANALYSIS_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"

namespace distir {

template <typename Derived, typename ValueT> class Interpreter {
public:
  /// Runs `func` on `args` and returns the values it returns.
  mlir::FailureOr<llvm::SmallVector<ValueT>>
  callFunction(mlir::func::FuncOp func, llvm::ArrayRef<ValueT> args) {
    if (func.isExternal())
      return emitErrorAt(func, "cannot interpret external function @" +
                                   func.getSymName());
    if (args.size() != func.getNumArguments())
      return emitErrorAt(func, "@" + func.getSymName() + " takes " +
                                   llvm::Twine(func.getNumArguments()) +
                                   " arguments, got " +
                                   llvm::Twine(args.size()));
    if (depth >= maxCallDepth)
      return emitErrorAt(func, "call depth exceeds " +
                                   llvm::Twine(maxCallDepth) +
                                   " (recursive program?)");
    ++depth;
    llvm::SmallVector<ValueT> results;
    mlir::LogicalResult status = runBlock(func.getBody().front(), args,
                                          /*argsOwned=*/false, results);
    --depth;
    if (failed(status))
      return mlir::failure();
    return results;
  }

  /// Maximum nesting of calls before interpretation gives up.
  unsigned maxCallDepth = 256;
  /// Most scf.for iterations one interpretation runs in all (2^26: a
  /// loop bound of 2^62 was a hang).
  static constexpr uint64_t kMaxLoopIterations = uint64_t(1) << 26;

protected:
  Derived &derived() { return static_cast<Derived &>(*this); }

  // Hooks with default (empty) behaviour. Domains that track liveness
  // (buffers, memory) count handles: every SSA value bound in an
  // interpreted block holds one handle on its abstract value.
  /// A new handle on `value` (it was bound to an SSA value, or is being
  /// returned out of a block).
  void retain(ValueT &value) {}
  /// A handle on `value` went away: its SSA value was used for the last
  /// time, or its block finished.
  void release(ValueT &value) {}
  /// Called after each op (including calls and loops) completed.
  void afterOp(mlir::Operation *op) {}

  /// Whether `op` is the last use of `value` in its block (so that `op` may
  /// reuse the value's storage).
  bool isLastUse(mlir::Value value, mlir::Operation *op) {
    mlir::Block *block = op->getBlock();
    if (!block || value.getParentBlock() != block)
      return false;
    const LastUses &lastUses = getLastUses(*block);
    auto it = lastUses.find(op);
    return it != lastUses.end() && llvm::is_contained(it->second, value);
  }

  mlir::LogicalResult emitErrorAt(mlir::Operation *op, const llvm::Twine &msg) {
    op->emitError(msg);
    return mlir::failure();
  }

  /// Runs `block` with `args` bound to its arguments; `results` receives the
  /// operands of its terminator, each with a handle owned by the caller.
  /// `argsOwned` says whether `args` bring their own handles (values
  /// returned by a previous block) or need new ones.
  mlir::LogicalResult runBlock(mlir::Block &block, llvm::ArrayRef<ValueT> args,
                               bool argsOwned,
                               llvm::SmallVectorImpl<ValueT> &results) {
    llvm::DenseMap<mlir::Value, ValueT> env;
    for (auto [arg, value] : llvm::zip_equal(block.getArguments(), args)) {
      ValueT &bound = env.try_emplace(arg, value).first->second;
      if (!argsOwned)
        derived().retain(bound);
    }
    // Whatever is still bound when the block ends (e.g. unused arguments)
    // loses its handle then.
    llvm::scope_exit releaseAll([&] {
      for (auto &entry : env)
        derived().release(entry.second);
    });
    const LastUses &lastUses = getLastUses(block);
    // Nested regions (loop bodies) see the values of enclosing blocks.
    scopes.push_back(&env);
    llvm::scope_exit popScope([&] { scopes.pop_back(); });

    for (mlir::Operation &op : block) {
      llvm::SmallVector<ValueT> operands;
      operands.reserve(op.getNumOperands());
      for (mlir::Value operand : op.getOperands()) {
        const ValueT *value = lookup(operand);
        if (!value)
          return emitErrorAt(&op, "operand is not defined in an enclosing "
                                  "interpreted block");
        operands.push_back(*value);
      }

      if (op.hasTrait<mlir::OpTrait::IsTerminator>()) {
        results.assign(operands.begin(), operands.end());
        for (ValueT &result : results)
          derived().retain(result);
        releaseDead(op, lastUses, env);
        return mlir::success();
      }

      llvm::SmallVector<ValueT> opResults;
      bool resultsOwned = false;
      if (failed(dispatch(&op, operands, opResults, resultsOwned)))
        return mlir::failure();
      if (opResults.size() != op.getNumResults())
        return emitErrorAt(&op,
                           "interpreter produced " +
                               llvm::Twine(opResults.size()) + " values for " +
                               llvm::Twine(op.getNumResults()) + " results");
      for (auto [result, value] : llvm::zip_equal(op.getResults(), opResults)) {
        ValueT &bound = env.try_emplace(result, std::move(value)).first->second;
        if (!resultsOwned)
          derived().retain(bound);
      }
      derived().afterOp(&op);
      // Results nobody uses die right away.
      for (mlir::Value result : op.getResults())
        if (result.use_empty()) {
          auto entry = env.find(result);
          derived().release(entry->second);
          env.erase(entry);
        }
      releaseDead(op, lastUses, env);
    }
    return emitErrorAt(block.getParentOp(), "block has no terminator");
  }

  /// The value bound to `value` in the current block or an enclosing one
  /// (e.g. a scalar a linalg body captures), or null.
  const ValueT *lookup(mlir::Value value) const {
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto found = (*it)->find(value);
      if (found != (*it)->end())
        return &found->second;
    }
    return nullptr;
  }

private:
  /// For each op of a block, the values (defined in the block or its
  /// arguments) whose last use in the block is that op.
  using LastUses =
      llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value, 2>>;

  const LastUses &getLastUses(mlir::Block &block) {
    auto [it, inserted] = lastUsesCache.try_emplace(&block);
    if (!inserted)
      return it->second;
    // One pass in block order: a value's last user is the last op that uses
    // it directly or, for values of this block, inside its regions. Values
    // are listed in the order of their first use (post-order walk), not the
    // map's pointer order: releases at the same time are reported (Chrome
    // trace) in this order. Only ops with regions are walked (most are not).
    llvm::DenseMap<mlir::Value, mlir::Operation *> last;
    llvm::SmallVector<mlir::Value> order;
    auto note = [&](mlir::Value value, mlir::Operation *user, bool record) {
      auto [entry, inserted] = last.try_emplace(value, nullptr);
      if (inserted)
        order.push_back(value);
      if (record)
        entry->second = user;
    };
    for (mlir::Operation &op : block) {
      if (op.getNumRegions() != 0)
        op.walk([&](mlir::Operation *nested) {
          if (nested == &op)
            return;
          for (mlir::Value operand : nested->getOperands())
            note(operand, &op, operand.getParentBlock() == &block);
        });
      for (mlir::Value operand : op.getOperands())
        note(operand, &op, /*record=*/true);
    }
    LastUses &uses = it->second;
    for (mlir::Value value : order)
      if (mlir::Operation *user = last.lookup(value))
        uses[user].push_back(value);
    return it->second;
  }

  void releaseDead(mlir::Operation &op, const LastUses &lastUses,
                   llvm::DenseMap<mlir::Value, ValueT> &env) {
    auto it = lastUses.find(&op);
    if (it == lastUses.end())
      return;
    for (mlir::Value value : it->second) {
      auto entry = env.find(value);
      if (entry == env.end())
        continue;
      derived().release(entry->second);
      env.erase(entry);
    }
  }

  /// Runs one op. Control flow returns values with their own handles
  /// (`resultsOwned`); domain ops return fresh values.
  mlir::LogicalResult dispatch(mlir::Operation *op,
                               llvm::ArrayRef<ValueT> operands,
                               llvm::SmallVectorImpl<ValueT> &results,
                               bool &resultsOwned) {
    resultsOwned =
        llvm::isa<mlir::func::CallOp, mlir::scf::ForOp, mlir::scf::IfOp>(op);
    if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op)) {
      auto callee = symbolTables.lookupNearestSymbolFrom<mlir::func::FuncOp>(
          op, call.getCalleeAttr());
      if (!callee)
        return emitErrorAt(op, "unknown callee @" + call.getCallee());
      mlir::FailureOr<llvm::SmallVector<ValueT>> out =
          callFunction(callee, operands);
      if (failed(out))
        return mlir::failure();
      results.assign(out->begin(), out->end());
      return mlir::success();
    }
    if (auto loop = llvm::dyn_cast<mlir::scf::ForOp>(op))
      return runFor(loop, operands, results);
    if (auto ifOp = llvm::dyn_cast<mlir::scf::IfOp>(op)) {
      std::optional<int64_t> cond = derived().getConcreteInt(operands[0]);
      if (!cond)
        return emitErrorAt(op, "scf.if condition is not a known constant");
      mlir::Region &region =
          *cond ? ifOp.getThenRegion() : ifOp.getElseRegion();
      if (region.empty())
        return mlir::success();
      return runBlock(region.front(), {}, /*argsOwned=*/true, results);
    }
    return derived().visitOp(op, operands, results);
  }

  mlir::LogicalResult runFor(mlir::scf::ForOp loop,
                             llvm::ArrayRef<ValueT> operands,
                             llvm::SmallVectorImpl<ValueT> &results) {
    std::optional<int64_t> lb = derived().getConcreteInt(operands[0]);
    std::optional<int64_t> ub = derived().getConcreteInt(operands[1]);
    std::optional<int64_t> step = derived().getConcreteInt(operands[2]);
    if (!lb || !ub || !step)
      return emitErrorAt(loop, "scf.for bounds are not known constants");
    if (*step <= 0)
      return emitErrorAt(loop, "scf.for step must be positive");
    // The trip count, in uint64 (ub - lb may exceed INT64_MAX); the loops
    // of one interpretation run at most kMaxLoopIterations iterations in
    // all, so a hostile bound is an error, not a hang.
    uint64_t trips =
        *ub <= *lb ? 0
                   : (static_cast<uint64_t>(*ub) - static_cast<uint64_t>(*lb) -
                      1) / static_cast<uint64_t>(*step) +
                         1;
    if (trips > kMaxLoopIterations - iterations)
      return emitErrorAt(loop, "scf.for runs " + std::to_string(trips) +
                                   " iterations; one interpretation runs at "
                                   "most " +
                                   std::to_string(kMaxLoopIterations) +
                                   " loop iterations in all");
    iterations += trips;
    // The initial values get handles of their own; later iterations pass
    // on the handles their terminator returned.
    llvm::SmallVector<ValueT> carried(operands.begin() + 3, operands.end());
    for (ValueT &value : carried)
      derived().retain(value);
    for (uint64_t trip = 0; trip < trips; ++trip) {
      int64_t iv = static_cast<int64_t>(static_cast<uint64_t>(*lb) +
                                        trip * static_cast<uint64_t>(*step));
      llvm::SmallVector<ValueT> args;
      args.push_back(derived().makeIndex(iv));
      derived().retain(args.back());
      args.append(carried.begin(), carried.end());
      llvm::SmallVector<ValueT> next;
      if (failed(runBlock(*loop.getBody(), args, /*argsOwned=*/true, next)))
        return mlir::failure();
      carried = std::move(next);
    }
    results.assign(carried.begin(), carried.end());
    return mlir::success();
  }

  llvm::SmallVector<llvm::DenseMap<mlir::Value, ValueT> *> scopes;
  mlir::SymbolTableCollection symbolTables;
  llvm::DenseMap<mlir::Block *, LastUses> lastUsesCache;
  unsigned depth = 0;
  /// Loop iterations run so far (runFor).
  uint64_t iterations = 0;
};

} // namespace distir

#endif // DISTIR_ANALYSIS_INTERPRETER_H
