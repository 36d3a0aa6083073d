//===- DistToRank.h - Per-rank programs: projection and checks --*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_CONVERSION_DISTTORANK_H
#define DISTIR_CONVERSION_DISTTORANK_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace distir {

/// Replays the communication of the per-rank functions of `module` (those
/// with `dist_rank.rank`, grouped by `dist_rank.program`) with blocking
/// semantics and reports unmatched sends/receives, disagreeing collectives
/// and deadlocks (with what every stuck rank waits for).
mlir::LogicalResult verifyRankMatching(mlir::ModuleOp module);

/// Drops the #dist.device encoding from every tensor type under `root`,
/// dense constants and properties included.
void stripPlacement(mlir::Operation *root);

} // namespace distir

#endif // DISTIR_CONVERSION_DISTTORANK_H
