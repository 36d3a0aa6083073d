//===- LowerRankPrograms.cpp - Driver of the MPI and NCCL lowerings -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The MPI and NCCL lowerings differ in their patterns and in how a process
// learns its rank; checking the input, creating communicators in a
// collective-safe order and building the dispatcher are shared here.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/DistToRank.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/IR/DistRankOps.h"

#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/MapVector.h"

#include <set>

using namespace mlir;
using namespace distir;
using namespace distir::dist_rank;

LogicalResult distir::lowerRankPrograms(ModuleOp module,
                                        const RankLoweringBackend &backend) {
  MLIRContext *ctx = module.getContext();
  // A kept global function (dist_rank.ranks) becomes the dispatcher: what it
  // holds is not lowered.
  WalkResult bad = module.walk([&](Operation *op) {
    auto parent = op->getParentOfType<func::FuncOp>();
    if (parent && parent->hasAttr(kRanksAttr))
      return WalkResult::skip();
    if (isa<dist::DistDialect>(op->getDialect())) {
      op->emitOpError("is a global communication op; run dist-to-rank before ")
          << backend.passName;
      return WalkResult::interrupt();
    }
    if (!isa<DistRankDialect>(op->getDialect()))
      return WalkResult::advance();
    if (!parent || !parent->hasAttr(kRankAttr)) {
      op->emitOpError() << "is outside a rank function (one with '" << kRankAttr
                        << "')";
      return WalkResult::interrupt();
    }
    if (backend.checkLowerable && failed(backend.checkLowerable(op)))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (bad.wasInterrupted())
    return failure();

  // Placement has served its purpose; bufferization wants plain tensors.
  stripPlacement(module);

  llvm::MapVector<StringRef, SmallVector<func::FuncOp>> programs;
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr(kRankAttr)) {
      StringRef program;
      if (auto name = func->getAttrOfType<StringAttr>(kProgramAttr))
        program = name.getValue();
      programs[program].push_back(func);
    }

  ConversionTarget target(*ctx);
  target.addIllegalDialect<DistRankDialect>();
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  OpBuilder b(ctx);
  for (auto &[program, funcs] : programs) {
    // The same communicators, in the same order, on every rank.
    std::set<SmallVector<int64_t>> groups;
    for (func::FuncOp func : funcs)
      func.walk([&](Operation *op) {
        auto group = op->getAttrOfType<DenseI64ArrayAttr>("group");
        if (group && isa<DistRankDialect>(op->getDialect()) &&
            backend.needsCommunicator(op))
          groups.insert(SmallVector<int64_t>(group.asArrayRef()));
      });
    for (func::FuncOp func : funcs) {
      RankFunctionContext rank;
      rank.self = func->getAttrOfType<IntegerAttr>(kRankAttr).getInt();
      b.setInsertionPointToStart(&func.getBody().front());
      Location loc = func.getLoc();
      if (backend.buildWorld)
        rank.world = backend.buildWorld(b, loc);
      for (const SmallVector<int64_t> &group : groups)
        rank.comms[group] = backend.buildCommunicator(b, loc, group);
      RewritePatternSet patterns(ctx);
      backend.populatePatterns(patterns, rank);
      if (failed(applyPartialConversion(func, target, std::move(patterns))))
        return failure();
    }
    if (program.empty())
      continue;
    auto global = module.lookupSymbol<func::FuncOp>(program);
    if (global && global->hasAttr(kRanksAttr))
      buildRankDispatcher(global, funcs, backend.getRank);
  }
  return success();
}
