//===- DistRankOps.h - per-rank communication ops ---------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The `dist_rank` dialect: communication ops of per-rank programs (see
// DistRankOps.td). Built by the DistIRConversion library.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_DISTRANKOPS_H
#define DISTIR_DIALECT_DIST_IR_DISTRANKOPS_H

#include "DistIR/Dialect/Dist/IR/DistAttrs.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "DistIR/Conversion/DistRankDialect.h.inc"

#define GET_OP_CLASSES
#include "DistIR/Conversion/DistRankOps.h.inc"

namespace distir::dist_rank {
/// Function attributes written by dist-to-rank.
inline constexpr llvm::StringLiteral kRankAttr = "dist_rank.rank";
inline constexpr llvm::StringLiteral kNumRanksAttr = "dist_rank.num_ranks";
inline constexpr llvm::StringLiteral kProgramAttr = "dist_rank.program";
inline constexpr llvm::StringLiteral kArgMapAttr = "dist_rank.arg_map";
inline constexpr llvm::StringLiteral kResultMapAttr = "dist_rank.result_map";
/// On a kept global function: the rank functions, by rank.
inline constexpr llvm::StringLiteral kRanksAttr = "dist_rank.ranks";
} // namespace distir::dist_rank

#endif // DISTIR_DIALECT_DIST_IR_DISTRANKOPS_H
