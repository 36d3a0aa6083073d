//===- OneHot.h - One-hot accumulations of structured ops -------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dist-autodiff writes the adjoint of a gather (an embedding lookup) as a
// structured op over the table's rows and the op's points,
//
//   dT[v, e] += select(ids[b, s] == v, dy[b, s, e], 0)   over (b, s, v, e),
//
// which the analyses read as what it is: a reduction over the batch into the
// table. Its work, though, is a scatter-add (one update per (b, s, e)), not
// rows x points: the cost model prices it so, and the CPU lowering runs it
// so (dist-one-hot-to-scatter).
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_ONEHOT_H
#define DISTIR_DIALECT_DIST_IR_ONEHOT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace distir {

/// A one-hot accumulation: the loop `v` selects, through `index == v`, the
/// only change to the accumulator.
struct OneHotAccumulation {
  unsigned loop;
  /// The value v is compared with (computed from inputs, not from v).
  mlir::Value index;
  /// The body ops that compute `index`, in body order.
  llvm::SetVector<mlir::Operation *> indexOps;
  /// The test is `index == v + offset` (a shard of a table split by rows
  /// over devices compares global rows: dist-dtp shifts `v` by its block's
  /// offset), so the row updated is `index - offset`.
  int64_t offset = 0;
};

/// Matches a `linalg.generic` with one init whose yield is
/// `acc + select(index == linalg.index v [+ constant], x, 0)` (either
/// operand order),
/// where `v` is a parallel loop used by no input map and by no other
/// `linalg.index`, and `index` does not depend on `v`.
std::optional<OneHotAccumulation>
matchOneHotAccumulation(mlir::linalg::GenericOp op);

/// `0 <= row < rows` (an i1): whether a row, shifted by a block's offset,
/// falls in the block (a shard's rows of a table, a scatter's target).
mlir::Value createRowInBlock(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value row, mlir::Value rows);

} // namespace distir

#endif // DISTIR_DIALECT_DIST_IR_ONEHOT_H
