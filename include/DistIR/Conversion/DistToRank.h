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
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"
#include "mlir/Transforms/DialectConversion.h"

#include <functional>
#include <map>

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

//===----------------------------------------------------------------------===//
// Lowering the communication of rank functions (MPI, NCCL)
//===----------------------------------------------------------------------===//

/// What the communication patterns of one rank function share: built at the
/// function's entry by lowerRankPrograms before its ops are converted.
struct RankFunctionContext {
  /// This function's rank (dist_rank.rank).
  int64_t self = 0;
  /// The communicator of each group that needs one.
  std::map<llvm::SmallVector<int64_t>, mlir::Value> comms;
  /// The backend's value for the whole world (MPI: !mpi.comm), or null.
  mlir::Value world;
};

/// What distinguishes one backend of lowerRankPrograms.
struct RankLoweringBackend {
  /// For diagnostics ("run dist-to-rank before <pass>").
  llvm::StringRef passName;
  /// Whether `op` (a dist_rank op) needs a communicator for its group.
  std::function<bool(mlir::Operation *)> needsCommunicator;
  /// Builds the communicator of a group at a rank function's entry.
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Location,
                            llvm::ArrayRef<int64_t>)>
      buildCommunicator;
  /// Builds RankFunctionContext::world at the entry; may be null.
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Location)> buildWorld;
  /// One error at `op` if the backend cannot lower it; checked for every op
  /// before anything changes. May be null.
  std::function<mlir::LogicalResult(mlir::Operation *)> checkLowerable;
  /// Adds the conversion patterns of the dist_rank ops.
  std::function<void(mlir::RewritePatternSet &, const RankFunctionContext &)>
      populatePatterns;
  /// The runtime rank (an i32) for the dispatcher.
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Location)> getRank;
};

/// The driver of convert-dist-to-mpi and convert-dist-to-nccl. Checks that
/// dist-to-rank ran (no global dist op outside the kept global function, no
/// dist_rank op outside a rank function), strips placement, then per program
/// (rank functions grouped by dist_rank.program): every rank function starts
/// with the communicators of all the program's groups that need one, in the
/// same order on every rank (their creation is collective); its dist_rank ops
/// are converted by the backend's patterns (a partial conversion: everything
/// else stays); the kept global function becomes the rank dispatcher.
mlir::LogicalResult lowerRankPrograms(mlir::ModuleOp module,
                                      const RankLoweringBackend &backend);

/// The conversion pattern of one dist_rank op for a backend whose `Lowering`
/// is built per match as `Lowering{rewriter, rank, op}` and has
/// `Value lower(OpT, OpT::Adaptor)` returning what replaces the op's result
/// (null where the op has none).
template <typename OpT, typename Lowering>
struct RankOpConversion : mlir::OpConversionPattern<OpT> {
  RankOpConversion(mlir::MLIRContext *ctx, const RankFunctionContext &rank)
      : mlir::OpConversionPattern<OpT>(ctx), rank(rank) {}

  mlir::LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    Lowering lowering{rewriter, rank, op};
    mlir::Value replacement = lowering.lower(op, adaptor);
    if (op->getNumResults())
      rewriter.replaceOp(op, replacement);
    else
      rewriter.eraseOp(op);
    return mlir::success();
  }

  const RankFunctionContext &rank;
};

/// Patterns lowering dist_rank ops to the mpi dialect (send/recv/allreduce,
/// the other collectives as rooted rounds of point-to-point transfers).
void populateDistRankToMPIConversionPatterns(mlir::RewritePatternSet &patterns,
                                             const RankFunctionContext &rank);

/// Patterns lowering dist_rank ops to calls of the NCCL runtime shim.
void populateDistRankToNCCLConversionPatterns(mlir::RewritePatternSet &patterns,
                                              const RankFunctionContext &rank);

} // namespace distir

#endif // DISTIR_CONVERSION_DISTTORANK_H
