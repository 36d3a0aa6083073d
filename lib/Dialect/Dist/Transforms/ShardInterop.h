//===- ShardInterop.h - dist.sharding <-> upstream shard annotations -*- C++
//-*-//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Shared by dist-import-shard (shard.shard annotations into dist.sharding)
// and dist-propagate-sharding (dist.sharding out to shard.shard, upstream's
// propagation, and back).
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_DIALECT_DIST_TRANSFORMS_SHARDINTEROP_H
#define DISTIR_LIB_DIALECT_DIST_TRANSFORMS_SHARDINTEROP_H

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace distir::dist {

/// The dist form of the sharding `shardingValue` names (a shard.sharding
/// op), or failure with an error at the op that cannot be expressed.
mlir::FailureOr<ShardingAttr>
convertShardSharding(mlir::Operation *annotation, mlir::Value shardingValue,
                     mlir::SymbolTableCollection &symbols);

/// Records `sharding` for `value` (a function argument's attribute or its
/// producer's dist.sharding); an existing different one is an error at
/// `annotation`.
mlir::LogicalResult recordSharding(mlir::Operation *annotation,
                                   mlir::Value value, ShardingAttr sharding);

/// The dist.sharding of `value`: its function argument attribute or its
/// producer's entry; null when it has none.
ShardingAttr getValueSharding(mlir::Value value);

/// Sets the dist.sharding of `value` (a function argument or an op result;
/// a multi-result op's other entries are kept, or replicated on the same
/// mesh when they had none).
void setValueSharding(mlir::Value value, ShardingAttr sharding);

/// A shard.sharding op for `sharding` (split only) on grid `grid`.
mlir::Value buildShardSharding(mlir::OpBuilder &builder, mlir::Location loc,
                               llvm::StringRef grid, ShardingAttr sharding);

} // namespace distir::dist

#endif // DISTIR_LIB_DIALECT_DIST_TRANSFORMS_SHARDINTEROP_H
