//===- DistToRank.h - Per-rank programs: projection and checks --*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_CONVERSION_DISTTORANK_H
#define DISTIR_CONVERSION_DISTTORANK_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace distir {

/// Replays the communication of the per-rank functions of `module` (those
/// with `dist_rank.rank`, grouped by `dist_rank.program`) with blocking
/// semantics and reports unmatched sends/receives, disagreeing collectives
/// and deadlocks (with what every stuck rank waits for).
mlir::LogicalResult verifyRankMatching(mlir::ModuleOp module);

/// Values for results a rank does not own: empty tensors, zero scalars.
/// Used by the dispatcher and by runners that stub other ranks' functions.
llvm::SmallVector<mlir::Value> buildPlaceholderResults(mlir::OpBuilder &b,
                                                       mlir::Location loc,
                                                       mlir::TypeRange types);

/// Replaces the body of the global function kept by dist-to-rank (the one
/// with `dist_rank.ranks`) by a dispatcher: `getRank` builds the runtime rank
/// (an i32; MPI_Comm_rank or the NCCL shim's world rank), an scf.index_switch
/// calls the rank function of that rank with its arguments, and results the
/// rank does not own are empty tensors or zeros. Removes `dist_rank.ranks`.
void buildRankDispatcher(
    mlir::func::FuncOp global, llvm::ArrayRef<mlir::func::FuncOp> rankFuncs,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location)> getRank);

/// Communicator of `group` (global ranks, in group order) from the runtime's
/// cache: calls `runtimeFunc(ranks, n) -> i64` (declared private in `module`
/// if needed) on a constant global array of the group's ranks. The runtime
/// splits the world once per group (collective: every rank asks for every
/// group of a program, in the same order, members and non-members alike)
/// and keeps the communicator until finalize, so repeated steps reuse it.
mlir::Value buildGroupCommunicator(mlir::OpBuilder &b, mlir::ModuleOp module,
                                   mlir::Location loc,
                                   llvm::ArrayRef<int64_t> group,
                                   llvm::StringRef runtimeFunc);

/// Drops the #dist.device encoding from every tensor type under `root`,
/// dense constants and properties included.
void stripPlacement(mlir::Operation *root);

} // namespace distir

#endif // DISTIR_CONVERSION_DISTTORANK_H
