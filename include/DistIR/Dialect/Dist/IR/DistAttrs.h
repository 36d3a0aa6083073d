//===- DistAttrs.h - dist dialect attributes --------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTATTRS_H
#define DISTIR_DIALECT_DIST_IR_DISTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

#include "DistIR/Dialect/Dist/IR/DistEnums.h.inc"

namespace distir::dist {
// Custom parameter syntax of #dist.sharding (see DistAttrs.td).
mlir::FailureOr<llvm::SmallVector<mlir::DenseI64ArrayAttr>>
parseSplitAxes(mlir::AsmParser &parser);
void printSplitAxes(mlir::AsmPrinter &printer,
                    llvm::ArrayRef<mlir::DenseI64ArrayAttr> split);
mlir::FailureOr<llvm::SmallVector<int64_t>>
parseIntList(mlir::AsmParser &parser);
void printIntList(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> values);
mlir::FailureOr<ReductionKind> parseReductionKeyword(mlir::AsmParser &parser);
} // namespace distir::dist

#define GET_ATTRDEF_CLASSES
#include "DistIR/Dialect/Dist/IR/DistAttrs.h.inc"

namespace distir::dist {

/// The device a value lives on, or null if its type carries no
/// `#dist.device` encoding.
DeviceAttr getDevice(mlir::Type type);
inline DeviceAttr getDevice(mlir::Value value) {
  return getDevice(value.getType());
}

/// Name of the discardable attribute that carries a value's sharding.
constexpr llvm::StringLiteral kShardingAttrName = "dist.sharding";

/// The stage tags of an op (dist-autodiff, dist-infer-layers): which layer
/// and which phase (forward, backward, update) it belongs to; dist-dtp cuts
/// stages and microbatches by them.
constexpr llvm::StringLiteral kLayerAttrName = "dist.layer";
constexpr llvm::StringLiteral kPhaseAttrName = "dist.phase";

/// dist-autodiff's pairing of a forward op and its adjoint: the forward op
/// carries `dist.vjp_id = N`, each op of its adjoint `dist.vjp_of = N`
/// (in per-op strategies the adjoint's configuration follows the forward
/// op's). The sum of a result's gradient contributions belongs to the
/// result's producer, though it is emitted (and tagged with `dist.layer`)
/// among a reader's backward ops.
constexpr llvm::StringLiteral kVjpIdAttr = "dist.vjp_id";
constexpr llvm::StringLiteral kVjpOfAttr = "dist.vjp_of";

/// Gives `to` the stage tags of `from` (an op a rewrite creates in `from`'s
/// stead takes its stage), and the adjoint `from` belongs to
/// (`dist.vjp_of`); with `overwrite` false, only the tags `to` lacks.
/// Nothing when `from` is null.
void copyStageTags(mlir::Operation *from, mlir::Operation *to,
                   bool overwrite = true);

/// Removes the stage tags and dist-autodiff's forward/adjoint pairing from
/// `op` (a distributed program's copy of an op, where they no longer hold).
void dropStageTags(mlir::Operation *op);

/// Checks a `dist.sharding` attribute on `op`: one #dist.sharding per result
/// (a single one for a one-result op, else an array), each valid for its
/// result's type.
mlir::LogicalResult verifyOpShardings(mlir::Operation *op,
                                      mlir::Attribute attr);

/// The sharding `op` records for result `index`, or null.
ShardingAttr getResultSharding(mlir::Operation *op, unsigned index);

/// `type` placed on `device` (replacing any existing encoding).
mlir::RankedTensorType withDevice(mlir::RankedTensorType type, int64_t device);

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_IR_DISTATTRS_H
