//===- MLPEmitter.h - Placed linalg ops of the MLP builders -----*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Shared by --build-mlp and its DistIR-structured variant (DistIRMLP.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_TARGET_ONNX_MLPEMITTER_H
#define DISTIR_LIB_TARGET_ONNX_MLPEMITTER_H

#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

namespace distir {

/// Learning rate of the SGD update.
inline constexpr double kLearningRate = 0.01;

/// The element type named by --dtype (f32, f16 or bf16) after loading the
/// builders' dialects, or null after a diagnostic at `loc`.
inline mlir::Type getMLPElementType(llvm::StringRef dtype, mlir::Location loc) {
  mlir::MLIRContext *ctx = loc.getContext();
  mlir::Builder b(ctx);
  mlir::Type elt = dtype == "f16"    ? mlir::Type(b.getF16Type())
                   : dtype == "bf16" ? mlir::Type(b.getBF16Type())
                   : dtype == "f32"  ? mlir::Type(b.getF32Type())
                                     : mlir::Type();
  if (!elt) {
    mlir::emitError(loc) << "--dtype must be f32, f16 or bf16, not '" << dtype
                         << "'";
    return {};
  }
  ctx->loadDialect<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                   mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                   mlir::tensor::TensorDialect, dist::DistDialect>();
  return elt;
}

/// Emits placed linalg ops on [rows, cols] tensors.
struct MLPEmitter {
  using OpBuilder = mlir::OpBuilder;
  using Location = mlir::Location;
  using Type = mlir::Type;
  using Value = mlir::Value;
  using Attribute = mlir::Attribute;
  using RankedTensorType = mlir::RankedTensorType;
  using ValueRange = mlir::ValueRange;
  using TypeRange = mlir::TypeRange;
  using AffineMap = mlir::AffineMap;
  template <typename T> using ArrayRef = llvm::ArrayRef<T>;
  template <typename T> using SmallVector = llvm::SmallVector<T>;
  template <typename T> using function_ref = llvm::function_ref<T>;

  OpBuilder &b;
  Location loc;
  Type elt;
  Attribute device;

  RankedTensorType type(ArrayRef<int64_t> shape) const {
    return RankedTensorType::get(shape, elt, device);
  }
  Value cst(OpBuilder &bb, double v) const {
    return mlir::arith::ConstantOp::create(bb, loc, bb.getFloatAttr(elt, v));
  }
  Value empty(ArrayRef<int64_t> shape) {
    return mlir::tensor::EmptyOp::create(b, loc, shape, elt, device);
  }
  Value zeros(ArrayRef<int64_t> shape) {
    return mlir::linalg::FillOp::create(b, loc, ValueRange{cst(b, 0)},
                                        ValueRange{empty(shape)})
        .getResult(0);
  }
  Value matmul(Value x, Value y) {
    auto tx = llvm::cast<RankedTensorType>(x.getType());
    auto ty = llvm::cast<RankedTensorType>(y.getType());
    Value init = zeros({tx.getDimSize(0), ty.getDimSize(1)});
    return mlir::linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                          ValueRange{x, y}, ValueRange{init})
        .getResult(0);
  }
  Value transpose(Value x) {
    auto t = llvm::cast<RankedTensorType>(x.getType());
    Value init = empty({t.getDimSize(1), t.getDimSize(0)});
    return mlir::linalg::TransposeOp::create(b, loc, x, init,
                                             ArrayRef<int64_t>{1, 0})
        .getResult()[0];
  }
  /// Elementwise op over same-shaped operands.
  Value map(ValueRange xs,
            function_ref<Value(OpBuilder &, ArrayRef<Value>)> fn) {
    auto t = llvm::cast<RankedTensorType>(xs[0].getType());
    int64_t rank = t.getRank();
    SmallVector<AffineMap> maps(xs.size() + 1, b.getMultiDimIdentityMap(rank));
    SmallVector<mlir::utils::IteratorType> iters(
        rank, mlir::utils::IteratorType::parallel);
    Value init = empty(t.getShape());
    return mlir::linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, xs, ValueRange{init}, maps,
               iters,
               [&](OpBuilder &bb, Location l, ValueRange args) {
                 SmallVector<Value> s(args.drop_back());
                 mlir::linalg::YieldOp::create(bb, l, fn(bb, s));
               })
        .getResult(0);
  }
  Value relu(Value x) {
    return map(x, [&](OpBuilder &bb, ArrayRef<Value> a) -> Value {
      return mlir::arith::MaximumFOp::create(bb, loc, a[0], cst(bb, 0));
    });
  }
  /// ReLU's gradient: `grad` where the pre-activation `pre` is positive.
  Value reluGrad(Value grad, Value pre) {
    return map({grad, pre}, [&](OpBuilder &bb, ArrayRef<Value> a) -> Value {
      Value pos = mlir::arith::CmpFOp::create(
          bb, loc, mlir::arith::CmpFPredicate::OGT, a[1], cst(bb, 0));
      return mlir::arith::SelectOp::create(bb, loc, pos, a[0], cst(bb, 0));
    });
  }
  /// SGD: w - lr * dw.
  Value sgdUpdate(Value w, Value dw) {
    return map({w, dw}, [&](OpBuilder &bb, ArrayRef<Value> a) -> Value {
      Value step =
          mlir::arith::MulFOp::create(bb, loc, a[1], cst(bb, kLearningRate));
      return mlir::arith::SubFOp::create(bb, loc, a[0], step);
    });
  }
  /// Sum of all elements, as a rank-0 tensor.
  Value sumAll(Value x) {
    Value init = mlir::linalg::FillOp::create(b, loc, ValueRange{cst(b, 0)},
                                              ValueRange{empty({})})
                     .getResult(0);
    return mlir::linalg::ReduceOp::create(
               b, loc, ValueRange{x}, ValueRange{init}, ArrayRef<int64_t>{0, 1},
               [&](OpBuilder &bb, Location l, ValueRange args) {
                 mlir::linalg::YieldOp::create(
                     bb, l,
                     Value(
                         mlir::arith::AddFOp::create(bb, l, args[0], args[1])));
               })
        .getResult(0);
  }
};

} // namespace distir

#endif // DISTIR_LIB_TARGET_ONNX_MLPEMITTER_H
