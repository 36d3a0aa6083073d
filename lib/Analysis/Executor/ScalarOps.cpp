//===- ScalarOps.cpp - Scalar semantics of arith and math ops
//---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "ScalarOps.h"
#include "DistIR/Analysis/Executor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace distir;
using namespace distir::detail;

static Type elementTypeOf(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.getElementType();
  return type;
}

static unsigned widthOf(Type type) {
  type = elementTypeOf(type);
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth();
  if (isa<FloatType>(type))
    return cast<FloatType>(type).getWidth();
  return 64; // index
}

Rounding Rounding::get(Type elementType) {
  Rounding r;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    if (floatType.isF64())
      r.kind = Kind::Exact;
    else if (floatType.isF32())
      r.kind = Kind::F32;
    else {
      r.kind = Kind::OtherFloat;
      r.semantics = &floatType.getFloatSemantics();
    }
    return r;
  }
  r.kind = Kind::Integer;
  r.width = widthOf(elementType);
  return r;
}

double Rounding::applySlow(double value) const {
  if (kind == Kind::OtherFloat) {
    bool losesInfo;
    llvm::APFloat f(value);
    f.convert(*semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    return f.convertToDouble();
  }
  if (std::isnan(value))
    return 0;
  if (width == 1)
    return value != 0 ? 1 : 0;
  // Wrap to the width (two's complement), reading the result as signed.
  double clamped = std::trunc(std::fmax(std::fmin(value, 9.2233720368547748e18),
                                        -9.2233720368547758e18));
  int64_t bits = static_cast<int64_t>(clamped);
  if (width < 64) {
    uint64_t u = static_cast<uint64_t>(bits) << (64 - width);
    bits = static_cast<int64_t>(u) >> (64 - width);
  }
  return static_cast<double>(bits);
}

/// `value` (stored signed) read as an unsigned integer of `width` bits.
static double asUnsigned(double value, unsigned width) {
  if (width >= 64)
    return value < 0 ? value + 18446744073709551616.0 : value;
  if (width == 1)
    return value != 0 ? 1 : 0;
  double modulus = std::ldexp(1.0, width);
  return value < 0 ? value + modulus : value;
}

FailureOr<ScalarOp> distir::detail::compileScalarOp(Operation *op) {
  ScalarOp scalar;
  scalar.kind = ScalarKind::Constant;
  if (op->getNumResults() != 1) {
    op->emitError() << "reference executor: unsupported scalar op";
    return failure();
  }
  scalar.resultType = elementTypeOf(op->getResult(0).getType());
  scalar.rounding = Rounding::get(scalar.resultType);
  if (op->getNumOperands())
    scalar.operandWidth = widthOf(op->getOperand(0).getType());

  using K = ScalarKind;
  std::optional<K> kind =
      llvm::TypeSwitch<Operation *, std::optional<K>>(op)
          .Case([](arith::AddFOp) { return K::AddF; })
          .Case([](arith::SubFOp) { return K::SubF; })
          .Case([](arith::MulFOp) { return K::MulF; })
          .Case([](arith::DivFOp) { return K::DivF; })
          .Case([](arith::RemFOp) { return K::RemF; })
          .Case([](arith::NegFOp) { return K::NegF; })
          .Case([](arith::MaximumFOp) { return K::MaximumF; })
          .Case([](arith::MinimumFOp) { return K::MinimumF; })
          .Case([](arith::MaxNumFOp) { return K::MaxNumF; })
          .Case([](arith::MinNumFOp) { return K::MinNumF; })
          .Case([](arith::AddIOp) { return K::AddI; })
          .Case([](arith::SubIOp) { return K::SubI; })
          .Case([](arith::MulIOp) { return K::MulI; })
          .Case([](arith::DivSIOp) { return K::DivSI; })
          .Case([](arith::DivUIOp) { return K::DivUI; })
          .Case([](arith::CeilDivSIOp) { return K::CeilDivSI; })
          .Case([](arith::FloorDivSIOp) { return K::FloorDivSI; })
          .Case([](arith::RemSIOp) { return K::RemSI; })
          .Case([](arith::RemUIOp) { return K::RemUI; })
          .Case([](arith::MaxSIOp) { return K::MaxSI; })
          .Case([](arith::MinSIOp) { return K::MinSI; })
          .Case([](arith::MaxUIOp) { return K::MaxUI; })
          .Case([](arith::MinUIOp) { return K::MinUI; })
          .Case([](arith::AndIOp) { return K::AndI; })
          .Case([](arith::OrIOp) { return K::OrI; })
          .Case([](arith::XOrIOp) { return K::XOrI; })
          .Case([](arith::ShLIOp) { return K::ShLI; })
          .Case([](arith::ShRSIOp) { return K::ShRSI; })
          .Case([](arith::ShRUIOp) { return K::ShRUI; })
          .Case([&](arith::CmpFOp cmp) {
            scalar.predicate = static_cast<int64_t>(cmp.getPredicate());
            return K::CmpF;
          })
          .Case([&](arith::CmpIOp cmp) {
            scalar.predicate = static_cast<int64_t>(cmp.getPredicate());
            return K::CmpI;
          })
          .Case([](arith::SelectOp) { return K::Select; })
          .Case([](arith::ExtFOp) { return K::ExtF; })
          .Case([](arith::TruncFOp) { return K::TruncF; })
          .Case([](arith::SIToFPOp) { return K::SIToFP; })
          .Case([](arith::UIToFPOp) { return K::UIToFP; })
          .Case([](arith::FPToSIOp) { return K::FPToSI; })
          .Case([](arith::FPToUIOp) { return K::FPToUI; })
          .Case([](arith::ExtSIOp) { return K::ExtSI; })
          .Case([](arith::ExtUIOp) { return K::ExtUI; })
          .Case([](arith::TruncIOp) { return K::TruncI; })
          .Case([](arith::IndexCastOp) { return K::IndexCast; })
          .Case([](arith::IndexCastUIOp) { return K::IndexCastUI; })
          .Case([](math::ExpOp) { return K::Exp; })
          .Case([](math::Exp2Op) { return K::Exp2; })
          .Case([](math::ExpM1Op) { return K::ExpM1; })
          .Case([](math::LogOp) { return K::Log; })
          .Case([](math::Log2Op) { return K::Log2; })
          .Case([](math::Log10Op) { return K::Log10; })
          .Case([](math::Log1pOp) { return K::Log1p; })
          .Case([](math::SqrtOp) { return K::Sqrt; })
          .Case([](math::RsqrtOp) { return K::Rsqrt; })
          .Case([](math::TanhOp) { return K::Tanh; })
          .Case([](math::ErfOp) { return K::Erf; })
          .Case([](math::PowFOp) { return K::PowF; })
          .Case([](math::FPowIOp) { return K::FPowI; })
          .Case([](math::IPowIOp) { return K::IPowI; })
          .Case([](math::AbsFOp) { return K::AbsF; })
          .Case([](math::AbsIOp) { return K::AbsI; })
          .Case([](math::CeilOp) { return K::Ceil; })
          .Case([](math::FloorOp) { return K::Floor; })
          .Case([](math::RoundOp) { return K::Round; })
          .Case([](math::RoundEvenOp) { return K::RoundEven; })
          .Case([](math::TruncOp) { return K::Trunc; })
          .Case([](math::SinOp) { return K::Sin; })
          .Case([](math::CosOp) { return K::Cos; })
          .Case([](math::TanOp) { return K::Tan; })
          .Case([](math::AtanOp) { return K::Atan; })
          .Case([](math::Atan2Op) { return K::Atan2; })
          .Case([](math::SinhOp) { return K::Sinh; })
          .Case([](math::CoshOp) { return K::Cosh; })
          .Case([](math::FmaOp) { return K::Fma; })
          .Case([](math::CopySignOp) { return K::CopySign; })
          .Default([](Operation *) { return std::nullopt; });
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = constant.getValue();
    if (auto f = dyn_cast<FloatAttr>(value))
      scalar.constant = f.getValueAsDouble();
    else if (auto i = dyn_cast<IntegerAttr>(value))
      // Convert each branch separately: a conditional of uint64_t and
      // int64_t is uint64_t, which read INT64_MIN as +2^63.
      scalar.constant = i.getType().isInteger(1)
                            ? static_cast<double>(i.getValue().getZExtValue())
                            : static_cast<double>(i.getValue().getSExtValue());
    else {
      op->emitError() << "reference executor: unsupported constant";
      return failure();
    }
    return scalar;
  }
  if (!kind) {
    op->emitError() << "reference executor: unsupported op '" << op->getName()
                    << "'";
    return failure();
  }
  scalar.kind = *kind;
  return scalar;
}

static bool compareF(int64_t predicate, double a, double b) {
  using P = arith::CmpFPredicate;
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (static_cast<P>(predicate)) {
  case P::AlwaysFalse:
    return false;
  case P::OEQ:
    return !unordered && a == b;
  case P::OGT:
    return !unordered && a > b;
  case P::OGE:
    return !unordered && a >= b;
  case P::OLT:
    return !unordered && a < b;
  case P::OLE:
    return !unordered && a <= b;
  case P::ONE:
    return !unordered && a != b;
  case P::ORD:
    return !unordered;
  case P::UEQ:
    return unordered || a == b;
  case P::UGT:
    return unordered || a > b;
  case P::UGE:
    return unordered || a >= b;
  case P::ULT:
    return unordered || a < b;
  case P::ULE:
    return unordered || a <= b;
  case P::UNE:
    return unordered || a != b;
  case P::UNO:
    return unordered;
  case P::AlwaysTrue:
    return true;
  }
  return false;
}

static bool compareI(int64_t predicate, double a, double b, unsigned width) {
  using P = arith::CmpIPredicate;
  double ua = asUnsigned(a, width), ub = asUnsigned(b, width);
  switch (static_cast<P>(predicate)) {
  case P::eq:
    return a == b;
  case P::ne:
    return a != b;
  case P::slt:
    return a < b;
  case P::sle:
    return a <= b;
  case P::sgt:
    return a > b;
  case P::sge:
    return a >= b;
  case P::ult:
    return ua < ub;
  case P::ule:
    return ua <= ub;
  case P::ugt:
    return ua > ub;
  case P::uge:
    return ua >= ub;
  }
  return false;
}

/// Integer value of a slot; saturates instead of the undefined behaviour of
/// converting out-of-range or NaN doubles.
static int64_t toInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2233720368547758e18)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

double distir::detail::evalScalarOp(const ScalarOp &op, ArrayRef<double> x) {
  using K = ScalarKind;
  unsigned w = op.operandWidth;
  double r = 0;
  switch (op.kind) {
  case K::Constant:
    r = op.constant;
    break;
  case K::AddF:
  case K::AddI:
    r = x[0] + x[1];
    break;
  case K::SubF:
  case K::SubI:
    r = x[0] - x[1];
    break;
  case K::MulF:
    r = x[0] * x[1];
    break;
  case K::MulI:
    r = static_cast<double>(
        static_cast<int64_t>(static_cast<uint64_t>(toInt(x[0])) *
                             static_cast<uint64_t>(toInt(x[1]))));
    break;
  case K::DivF:
    r = x[0] / x[1];
    break;
  case K::RemF:
    r = std::fmod(x[0], x[1]);
    break;
  case K::NegF:
    r = -x[0];
    break;
  case K::MaximumF:
    r = (std::isnan(x[0]) || std::isnan(x[1]))
            ? std::numeric_limits<double>::quiet_NaN()
            : std::fmax(x[0], x[1]);
    break;
  case K::MinimumF:
    r = (std::isnan(x[0]) || std::isnan(x[1]))
            ? std::numeric_limits<double>::quiet_NaN()
            : std::fmin(x[0], x[1]);
    break;
  case K::MaxNumF:
    r = std::fmax(x[0], x[1]);
    break;
  case K::MinNumF:
    r = std::fmin(x[0], x[1]);
    break;
  case K::DivSI:
    r = x[1] == 0 ? 0 : std::trunc(x[0] / x[1]);
    break;
  case K::DivUI:
    r = x[1] == 0 ? 0 : std::trunc(asUnsigned(x[0], w) / asUnsigned(x[1], w));
    break;
  case K::CeilDivSI:
    r = x[1] == 0 ? 0 : std::ceil(x[0] / x[1]);
    break;
  case K::FloorDivSI:
    r = x[1] == 0 ? 0 : std::floor(x[0] / x[1]);
    break;
  case K::RemSI:
    r = x[1] == 0 || x[1] == -1
            ? 0
            : static_cast<double>(toInt(x[0]) % toInt(x[1]));
    break;
  case K::RemUI:
    r = x[1] == 0 ? 0 : std::fmod(asUnsigned(x[0], w), asUnsigned(x[1], w));
    break;
  case K::MaxSI:
    r = std::max(x[0], x[1]);
    break;
  case K::MinSI:
    r = std::min(x[0], x[1]);
    break;
  case K::MaxUI:
    r = asUnsigned(x[0], w) >= asUnsigned(x[1], w) ? x[0] : x[1];
    break;
  case K::MinUI:
    r = asUnsigned(x[0], w) <= asUnsigned(x[1], w) ? x[0] : x[1];
    break;
  case K::AndI:
    r = static_cast<double>(toInt(x[0]) & toInt(x[1]));
    break;
  case K::OrI:
    r = static_cast<double>(toInt(x[0]) | toInt(x[1]));
    break;
  case K::XOrI:
    r = static_cast<double>(toInt(x[0]) ^ toInt(x[1]));
    break;
  case K::ShLI:
    r = x[1] >= w || x[1] < 0
            ? 0
            : static_cast<double>(static_cast<int64_t>(
                  static_cast<uint64_t>(toInt(x[0])) << toInt(x[1])));
    break;
  case K::ShRSI:
    r = static_cast<double>(toInt(x[0]) >>
                            std::clamp<int64_t>(toInt(x[1]), 0, 63));
    break;
  case K::ShRUI:
    r = x[1] >= w
            ? 0
            : std::floor(asUnsigned(x[0], w) / std::ldexp(1.0, toInt(x[1])));
    break;
  case K::CmpF:
    r = compareF(op.predicate, x[0], x[1]);
    break;
  case K::CmpI:
    r = compareI(op.predicate, x[0], x[1], w);
    break;
  case K::Select:
    r = x[0] != 0 ? x[1] : x[2];
    break;
  case K::ExtF:
  case K::TruncF:
  case K::SIToFP:
  case K::ExtSI:
  case K::TruncI:
  case K::IndexCast:
    r = x[0];
    break;
  case K::UIToFP:
  case K::ExtUI:
  case K::IndexCastUI:
    r = asUnsigned(x[0], w);
    break;
  case K::FPToSI:
  case K::FPToUI:
  case K::Trunc:
    r = std::trunc(x[0]);
    break;
  case K::Exp:
    r = std::exp(x[0]);
    break;
  case K::Exp2:
    r = std::exp2(x[0]);
    break;
  case K::ExpM1:
    r = std::expm1(x[0]);
    break;
  case K::Log:
    r = std::log(x[0]);
    break;
  case K::Log2:
    r = std::log2(x[0]);
    break;
  case K::Log10:
    r = std::log10(x[0]);
    break;
  case K::Log1p:
    r = std::log1p(x[0]);
    break;
  case K::Sqrt:
    r = std::sqrt(x[0]);
    break;
  case K::Rsqrt:
    r = 1.0 / std::sqrt(x[0]);
    break;
  case K::Tanh:
    r = std::tanh(x[0]);
    break;
  case K::Erf:
    r = std::erf(x[0]);
    break;
  case K::PowF:
  case K::FPowI:
    r = std::pow(x[0], x[1]);
    break;
  case K::IPowI: {
    // Integer power by squaring; negative exponents give 0 except for
    // bases 1 and -1.
    int64_t base = toInt(x[0]), exp = toInt(x[1]), acc = 1;
    if (exp < 0) {
      r = base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
      break;
    }
    for (; exp > 0;
         exp >>= 1, base = static_cast<int64_t>(static_cast<uint64_t>(base) *
                                                static_cast<uint64_t>(base)))
      if (exp & 1)
        acc = static_cast<int64_t>(static_cast<uint64_t>(acc) *
                                   static_cast<uint64_t>(base));
    r = static_cast<double>(acc);
    break;
  }
  case K::AbsF:
  case K::AbsI:
    r = std::fabs(x[0]);
    break;
  case K::Ceil:
    r = std::ceil(x[0]);
    break;
  case K::Floor:
    r = std::floor(x[0]);
    break;
  case K::Round:
    r = std::round(x[0]);
    break;
  case K::RoundEven:
    r = std::nearbyint(x[0]);
    break;
  case K::Sin:
    r = std::sin(x[0]);
    break;
  case K::Cos:
    r = std::cos(x[0]);
    break;
  case K::Tan:
    r = std::tan(x[0]);
    break;
  case K::Atan:
    r = std::atan(x[0]);
    break;
  case K::Atan2:
    r = std::atan2(x[0], x[1]);
    break;
  case K::Sinh:
    r = std::sinh(x[0]);
    break;
  case K::Cosh:
    r = std::cosh(x[0]);
    break;
  case K::Fma:
    r = std::fma(x[0], x[1], x[2]);
    break;
  case K::CopySign:
    r = std::copysign(x[0], x[1]);
    break;
  }
  return op.rounding.apply(r);
}
