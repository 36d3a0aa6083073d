//===- ScalarOps.h - Scalar semantics of arith and math ops -----*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Ops are "compiled" once into a small record so that evaluating a linalg
// body at millions of points does not dispatch on op names each time.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_ANALYSIS_EXECUTOR_SCALAROPS_H
#define DISTIR_LIB_ANALYSIS_EXECUTOR_SCALAROPS_H

#include "DistIR/Analysis/Executor.h"
#include "mlir/IR/Operation.h"

namespace distir::detail {

enum class ScalarKind {
  Constant,
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  NegF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  AddI,
  SubI,
  MulI,
  DivSI,
  DivUI,
  CeilDivSI,
  FloorDivSI,
  RemSI,
  RemUI,
  MaxSI,
  MinSI,
  MaxUI,
  MinUI,
  AndI,
  OrI,
  XOrI,
  ShLI,
  ShRSI,
  ShRUI,
  CmpF,
  CmpI,
  Select,
  ExtF,
  TruncF,
  SIToFP,
  UIToFP,
  FPToSI,
  FPToUI,
  ExtSI,
  ExtUI,
  TruncI,
  IndexCast,
  IndexCastUI,
  Exp,
  Exp2,
  ExpM1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sqrt,
  Rsqrt,
  Tanh,
  Erf,
  PowF,
  FPowI,
  IPowI,
  AbsF,
  AbsI,
  Ceil,
  Floor,
  Round,
  RoundEven,
  Trunc,
  Sin,
  Cos,
  Tan,
  Atan,
  Atan2,
  Sinh,
  Cosh,
  Fma,
  CopySign,
};

struct ScalarOp {
  ScalarKind kind;
  /// Element type of the result.
  mlir::Type resultType;
  Rounding rounding;
  /// Bit width of the (first) operand, for unsigned interpretations.
  unsigned operandWidth = 64;
  /// Comparison predicate (arith::CmpFPredicate / CmpIPredicate value).
  int64_t predicate = 0;
  /// Value of a Constant.
  double constant = 0;
};

/// The scalar semantics of `op`, or failure (with a diagnostic) if `op` is
/// not a supported arith/math op.
mlir::FailureOr<ScalarOp> compileScalarOp(mlir::Operation *op);

/// Applies `op` to operand values; the result is rounded to its type.
double evalScalarOp(const ScalarOp &op, llvm::ArrayRef<double> operands);

} // namespace distir::detail

#endif // DISTIR_LIB_ANALYSIS_EXECUTOR_SCALAROPS_H
