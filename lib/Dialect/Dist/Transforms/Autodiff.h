//===- Autodiff.h - Reverse-mode differentiation internals -----*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the dist-autodiff pass (Autodiff.cpp), its op rules
// (AutodiffRules.cpp) and the derivatives of scalar body ops
// (ScalarDerivatives.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_DIALECT_DIST_TRANSFORMS_AUTODIFF_H
#define DISTIR_LIB_DIALECT_DIST_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace distir::autodiff {

/// Adds to `adjoints` the contributions of the floating-point operands of
/// the scalar op `op` (an `arith`/`math` op in a linalg body), given the
/// adjoint `grad` of its result. Ops whose result is not a float (compares,
/// index arithmetic) and piecewise-constant ops contribute nothing. Fails
/// (without a diagnostic) for a float op without a derivative.
mlir::LogicalResult
addScalarAdjoints(mlir::OpBuilder &b, mlir::Operation *op, mlir::Value grad,
                  llvm::DenseMap<mlir::Value, mlir::Value> &adjoints);

/// Rewrites the forward function `func` to compute in `low` (f16, bf16):
/// every f32 value becomes `low`, each f32 argument is cast on entry and
/// the results are cast back to f32; `casts` maps each cast argument to
/// its low-precision copy. Fails (with an error) on a program that already
/// mixes float types.
mlir::LogicalResult
lowerComputePrecision(mlir::func::FuncOp func, mlir::FloatType low,
                      llvm::DenseMap<mlir::Value, mlir::Value> &casts);

/// Rewrites `func` to run in `low` as a model converted with `.half()` does:
/// every f32 value, argument (inputs and weights alike) and result becomes
/// `low`, without casts. Fails (with an error) on a program that already
/// mixes float types.
mlir::LogicalResult lowerProgramPrecision(mlir::func::FuncOp func,
                                          mlir::FloatType low);

/// A tensor of `type` (its device included) filled with `value`.
mlir::Value createFilled(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, double value);

/// A linalg.generic with identity maps over `type`'s shape (parallel
/// loops) yielding `body` of the scalars of `ins`.
mlir::Value createElementwise(
    mlir::OpBuilder &b, mlir::Location loc, mlir::ValueRange ins,
    mlir::RankedTensorType type,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::ValueRange)>
        body);

/// Emits the backward pass of tensor ops: the vector-Jacobian product of
/// each op, given the adjoints of its results, accumulated into the
/// adjoints of its active operands.
class AdjointEmitter {
public:
  AdjointEmitter(mlir::OpBuilder &b, const llvm::DenseSet<mlir::Value> &active)
      : b(b), active(active) {}

  /// Emits the adjoints of `op`'s active operands (nothing when no result
  /// of `op` has an adjoint). Fails with one error on `op` when it has no
  /// rule.
  mlir::LogicalResult emit(mlir::Operation *op);

  /// Adds `grad` to the adjoint of `v`.
  void accumulate(mlir::Value v, mlir::Value grad);
  /// The adjoint of `v`, or null if nothing flows into `v`.
  mlir::Value lookup(mlir::Value v) const { return adjoints.lookup(v); }
  /// The ops (each sum and its tensor.empty) that added contributions to
  /// the adjoint of each value read by several ops, in emission order.
  const llvm::DenseMap<mlir::Value, llvm::SmallVector<mlir::Operation *>> &
  sumOps() const {
    return sumOpsOf;
  }

  mlir::Value filled(mlir::Location loc, mlir::RankedTensorType type,
                     double value) {
    return createFilled(b, loc, type, value);
  }

private:
  bool isActive(mlir::Value v) const { return active.contains(v); }
  mlir::LogicalResult emitStructured(mlir::Operation *op);
  mlir::LogicalResult emitMatmul(mlir::Operation *op);
  mlir::LogicalResult emitSoftmax(mlir::Operation *op);
  mlir::LogicalResult emitTensorOp(mlir::Operation *op);
  mlir::LogicalResult emitGather(mlir::Operation *op,
                                 mlir::tensor::ExtractOp extract);
  mlir::Value transpose(mlir::Location loc, mlir::Value x);
  mlir::Value matmul(mlir::Location loc, mlir::Value x, mlir::Value y);

  mlir::OpBuilder &b;
  const llvm::DenseSet<mlir::Value> &active;
  llvm::DenseMap<mlir::Value, mlir::Value> adjoints;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<mlir::Operation *>> sumOpsOf;
};

} // namespace distir::autodiff

#endif // DISTIR_LIB_DIALECT_DIST_TRANSFORMS_AUTODIFF_H
