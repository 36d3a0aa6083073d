//===- MixedPrecision.cpp - Low-precision compute with fp32 masters -------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Mixed precision as Megatron and DeepSpeed run it: the weights (and their
// optimizer state) stay fp32 ("master weights"); each step casts them to
// f16/bf16, and the forward and backward passes compute in that type. The
// rewrite happens on the forward program, before differentiation: every
// f32 value becomes the low type, a cast follows each f32 argument, and the
// model output is cast back to f32 for the loss. The cast's adjoint then
// turns each low-precision weight gradient into the fp32 gradient that the
// update reads.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "DistIR/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace distir::dist {
#define GEN_PASS_DEF_DISTLOWPRECISIONPASS
#include "DistIR/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace distir::dist

using namespace mlir;
using namespace distir::autodiff;

/// `type` with f32 replaced by `low` (tensors: their element type).
static Type lowered(Type type, FloatType low) {
  if (type.isF32())
    return low;
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    if (tensor.getElementType().isF32())
      return RankedTensorType::get(tensor.getShape(), low,
                                   tensor.getEncoding());
  return type;
}

/// An elementwise cast of `v` to `to` (a tensor type of v's shape).
static Value castTensor(OpBuilder &b, Location loc, Value v,
                        RankedTensorType to) {
  Type elt = to.getElementType();
  bool widen = cast<FloatType>(elt).getWidth() >
               cast<FloatType>(getElementTypeOrSelf(v.getType())).getWidth();
  return createElementwise(
      b, loc, v, to, [&](OpBuilder &bb, Location l, ValueRange args) -> Value {
        if (widen)
          return arith::ExtFOp::create(bb, l, elt, args[0]);
        return arith::TruncFOp::create(bb, l, elt, args[0]);
      });
}

/// Every f32 value of the ops of `func`'s body (results, region arguments,
/// constants) becomes `low`. Fails on a program that already has casts
/// (`who` names the caller in the error).
static LogicalResult lowerOps(func::FuncOp func, FloatType low, StringRef who) {
  Block &body = func.getBody().front();
  // Ops written by the model, before any cast is inserted.
  SmallVector<Operation *> modelOps;
  for (Operation &op : body.without_terminator())
    modelOps.push_back(&op);
  for (Operation *op : modelOps) {
    WalkResult result = op->walk([&](Operation *nested) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(nested)) {
        nested->emitOpError()
            << who
            << " expects a program in one floating-point type (f32), not "
               "one with casts";
        return WalkResult::interrupt();
      }
      for (Value r : nested->getResults())
        r.setType(lowered(r.getType(), low));
      for (Region &region : nested->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            arg.setType(lowered(arg.getType(), low));
      if (auto constant = dyn_cast<arith::ConstantOp>(nested)) {
        if (auto f = dyn_cast<FloatAttr>(constant.getValue());
            f && f.getType().isF32()) {
          constant.setValueAttr(FloatAttr::get(low, f.getValueAsDouble()));
        } else if (auto dense =
                       dyn_cast<DenseFPElementsAttr>(constant.getValue());
                   dense && dense.getElementType().isF32()) {
          const llvm::fltSemantics &sem = low.getFloatSemantics();
          constant.setValueAttr(dense.mapValues(low, [&](const APFloat &v) {
            APFloat c = v;
            bool lost;
            c.convert(sem, APFloat::rmNearestTiesToEven, &lost);
            return c.bitcastToAPInt();
          }));
        }
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
  }
  return success();
}

LogicalResult
distir::autodiff::lowerComputePrecision(func::FuncOp func, FloatType low,
                                        DenseMap<Value, Value> &casts) {
  if (failed(lowerOps(func, low, "dist-autodiff: compute=")))
    return failure();
  Block &body = func.getBody().front();
  Operation *returnOp = body.getTerminator();
  // Casts of the f32 arguments (master weights, inputs) at the start.
  OpBuilder b(func.getContext());
  b.setInsertionPointToStart(&body);
  for (BlockArgument arg : body.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.getElementType().isF32() || arg.use_empty())
      continue;
    Value c = castTensor(b, arg.getLoc(), arg,
                         cast<RankedTensorType>(lowered(type, low)));
    arg.replaceAllUsesExcept(c, c.getDefiningOp());
    casts[arg] = c;
  }
  // The output back to f32 for the loss.
  b.setInsertionPoint(returnOp);
  for (OpOperand &result : returnOp->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(result.get().getType());
    if (type && type.getElementType() == low)
      result.set(
          castTensor(b, result.get().getLoc(), result.get(),
                     RankedTensorType::get(type.getShape(), b.getF32Type(),
                                           type.getEncoding())));
  }
  return success();
}

LogicalResult distir::autodiff::lowerProgramPrecision(func::FuncOp func,
                                                      FloatType low) {
  if (failed(lowerOps(func, low, "dist-low-precision")))
    return failure();
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    arg.setType(lowered(arg.getType(), low));
  func.setFunctionType(
      FunctionType::get(func.getContext(), body.getArgumentTypes(),
                        body.getTerminator()->getOperandTypes()));
  return success();
}

namespace {
struct DistLowPrecisionPass
    : public distir::dist::impl::DistLowPrecisionPassBase<
          DistLowPrecisionPass> {
  using DistLowPrecisionPassBase::DistLowPrecisionPassBase;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FloatType low;
    switch (type) {
    case distir::dist::ComputePrecision::F32:
      return;
    case distir::dist::ComputePrecision::F16:
      low = Float16Type::get(context);
      break;
    case distir::dist::ComputePrecision::BF16:
      low = BFloat16Type::get(context);
      break;
    }
    // Every function, so that calls and callees keep matching types.
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isDeclaration()) {
        auto hasF32 = [](Type type) {
          return getElementTypeOrSelf(type).isF32();
        };
        if (llvm::any_of(func.getArgumentTypes(), hasF32) ||
            llvm::any_of(func.getResultTypes(), hasF32)) {
          func.emitOpError() << "dist-low-precision cannot change the types "
                                "of an external function";
          return signalPassFailure();
        }
        continue;
      }
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError()
            << "dist-low-precision expects functions of one block";
        return signalPassFailure();
      }
      if (failed(lowerProgramPrecision(func, low)))
        return signalPassFailure();
    }
  }
};
} // namespace
