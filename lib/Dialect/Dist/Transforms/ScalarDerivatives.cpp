//===- ScalarDerivatives.cpp - Derivatives of arith/math body ops ---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The table of scalar derivatives that the generic linalg rule of
// dist-autodiff applies inside a body: given the adjoint of an op's result,
// the adjoints of its float operands. Conventions follow PyTorch where the
// derivative is not defined: max/min and relu give the whole gradient to
// one side (the first operand when strictly greater/smaller), |x| has
// derivative 0 at 0, floor/ceil/round have derivative 0.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace {
/// Builds the scalar expressions of one op's derivative.
struct Emitter {
  OpBuilder &b;
  Location loc;
  DenseMap<Value, Value> &adjoints;

  Value cst(Type type, double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
  }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  /// `g` converted to the type of `v` (extf/truncf chains change width).
  Value as(Value g, Value v) {
    Type to = v.getType();
    if (g.getType() == to)
      return g;
    if (cast<FloatType>(to).getWidth() >
        cast<FloatType>(g.getType()).getWidth())
      return arith::ExtFOp::create(b, loc, to, g);
    return arith::TruncFOp::create(b, loc, to, g);
  }
  /// `g` to `x` where `cond` holds, to `y` elsewhere.
  void route(Value cond, Value x, Value y, Value g) {
    Value zero = cst(g.getType(), 0);
    add(x, select(cond, g, zero));
    add(y, select(cond, zero, g));
  }
  void add(Value v, Value g) {
    if (!isa<FloatType>(v.getType()))
      return;
    g = as(g, v);
    Value &slot = adjoints[v];
    slot = slot ? Value(arith::AddFOp::create(b, loc, slot, g)) : g;
  }
};
} // namespace

LogicalResult
distir::autodiff::addScalarAdjoints(OpBuilder &b, Operation *op, Value g,
                                    DenseMap<Value, Value> &adjoints) {
  if (op->getNumResults() != 1 || !isa<FloatType>(op->getResult(0).getType()))
    return success();
  Emitter e{b, op->getLoc(), adjoints};
  Value r = op->getResult(0);
  Type t = r.getType();
  auto operand = [&](unsigned i) { return op->getOperand(i); };
  // Piecewise-constant and operand-free ops, and reads of a tensor (the
  // gather rule differentiates the tensor): no contribution.
  if (op->getNumOperands() == 0 || isa<tensor::ExtractOp>(op) ||
      isa<arith::ConstantOp, arith::SIToFPOp, arith::UIToFPOp, math::FloorOp,
          math::CeilOp, math::RoundOp, math::RoundEvenOp, math::TruncOp>(op))
    return success();
  bool handled =
      TypeSwitch<Operation *, bool>(op)
          .Case<arith::AddFOp>([&](auto) {
            e.add(operand(0), g);
            e.add(operand(1), g);
            return true;
          })
          .Case<arith::SubFOp>([&](auto) {
            e.add(operand(0), g);
            e.add(operand(1), e.neg(g));
            return true;
          })
          .Case<arith::MulFOp>([&](auto) {
            e.add(operand(0), e.mul(g, operand(1)));
            e.add(operand(1), e.mul(g, operand(0)));
            return true;
          })
          .Case<arith::DivFOp>([&](auto) {
            e.add(operand(0), e.div(g, operand(1)));
            e.add(operand(1), e.neg(e.div(e.mul(g, r), operand(1))));
            return true;
          })
          .Case<arith::NegFOp>([&](auto) {
            e.add(operand(0), e.neg(g));
            return true;
          })
          .Case<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                arith::MinNumFOp>([&](Operation *) {
            // The whole gradient to the strictly larger (smaller) side.
            bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
            Value first = e.cmp(isMax ? arith::CmpFPredicate::OGT
                                      : arith::CmpFPredicate::OLT,
                                operand(0), operand(1));
            e.route(first, operand(0), operand(1), g);
            return true;
          })
          .Case<arith::SelectOp>([&](auto) {
            e.route(operand(0), operand(1), operand(2), g);
            return true;
          })
          .Case<arith::ExtFOp, arith::TruncFOp>([&](auto) {
            e.add(operand(0), g);
            return true;
          })
          .Case<math::ExpOp>([&](auto) {
            e.add(operand(0), e.mul(g, r));
            return true;
          })
          .Case<math::Exp2Op>([&](auto) {
            e.add(operand(0), e.mul(e.mul(g, r), e.cst(t, llvm::numbers::ln2)));
            return true;
          })
          .Case<math::ExpM1Op>([&](auto) {
            e.add(operand(0),
                  e.mul(g, arith::AddFOp::create(b, e.loc, r, e.cst(t, 1))));
            return true;
          })
          .Case<math::LogOp>([&](auto) {
            e.add(operand(0), e.div(g, operand(0)));
            return true;
          })
          .Case<math::Log2Op>([&](auto) {
            e.add(operand(0),
                  e.div(g, e.mul(operand(0), e.cst(t, llvm::numbers::ln2))));
            return true;
          })
          .Case<math::Log10Op>([&](auto) {
            e.add(operand(0),
                  e.div(g, e.mul(operand(0), e.cst(t, llvm::numbers::ln10))));
            return true;
          })
          .Case<math::Log1pOp>([&](auto) {
            e.add(operand(0), e.div(g, arith::AddFOp::create(
                                           b, e.loc, operand(0), e.cst(t, 1))));
            return true;
          })
          .Case<math::SqrtOp>([&](auto) {
            e.add(operand(0), e.div(e.mul(g, e.cst(t, 0.5)), r));
            return true;
          })
          .Case<math::RsqrtOp>([&](auto) {
            // d/dx x^-1/2 = -1/2 x^-3/2 = -1/2 r^3.
            e.add(operand(0),
                  e.mul(e.mul(g, e.cst(t, -0.5)), e.mul(r, e.mul(r, r))));
            return true;
          })
          .Case<math::TanhOp>([&](auto) {
            Value one = e.cst(t, 1);
            e.add(operand(0),
                  e.mul(g, arith::SubFOp::create(b, e.loc, one, e.mul(r, r))));
            return true;
          })
          .Case<math::ErfOp>([&](auto) {
            Value x = operand(0);
            Value gauss = math::ExpOp::create(b, e.loc, e.neg(e.mul(x, x)));
            e.add(x, e.mul(e.mul(g, gauss),
                           e.cst(t, 2.0 * llvm::numbers::inv_sqrtpi)));
            return true;
          })
          .Case<math::SinOp>([&](auto) {
            e.add(operand(0),
                  e.mul(g, math::CosOp::create(b, e.loc, operand(0))));
            return true;
          })
          .Case<math::CosOp>([&](auto) {
            e.add(operand(0),
                  e.neg(e.mul(g, math::SinOp::create(b, e.loc, operand(0)))));
            return true;
          })
          .Case<math::AbsFOp>([&](auto) {
            Value x = operand(0), zero = e.cst(t, 0);
            Value pos = e.cmp(arith::CmpFPredicate::OGT, x, zero);
            Value negative = e.cmp(arith::CmpFPredicate::OLT, x, zero);
            e.add(x, e.select(pos, g, e.select(negative, e.neg(g), zero)));
            return true;
          })
          .Case<math::PowFOp>([&](auto) {
            Value x = operand(0), y = operand(1);
            Value ym1 = arith::SubFOp::create(b, e.loc, y, e.cst(t, 1));
            e.add(x,
                  e.mul(e.mul(g, y), math::PowFOp::create(b, e.loc, x, ym1)));
            // A constant exponent (x^2 from Pow) has no adjoint to receive.
            if (!y.getDefiningOp<arith::ConstantOp>())
              e.add(y, e.mul(e.mul(g, r), math::LogOp::create(b, e.loc, x)));
            return true;
          })
          .Case<math::FPowIOp>([&](auto) {
            Value x = operand(0), n = operand(1);
            Value one = arith::ConstantOp::create(
                b, e.loc, b.getIntegerAttr(n.getType(), 1));
            Value nm1 = arith::SubIOp::create(b, e.loc, n, one);
            Value nf = arith::SIToFPOp::create(b, e.loc, t, n);
            e.add(x,
                  e.mul(e.mul(g, nf), math::FPowIOp::create(b, e.loc, x, nm1)));
            return true;
          })
          .Default([](Operation *) { return false; });
  return success(handled);
}
