//===- ImportElementwise.cpp - ONNX elementwise ops -----------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Elementwise ONNX ops with multidirectional broadcasting, evaluated at
// import time on known values or emitted as linalg.generic.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace distir;
using namespace distir::onnx_import;

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

std::optional<ElementwiseInfo>
distir::onnx_import::elementwiseInfo(StringRef op) {
  return llvm::StringSwitch<std::optional<ElementwiseInfo>>(op)
      .Cases(
          {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "BitShift"},
          ElementwiseInfo{2})
      .Cases({"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"},
             ElementwiseInfo{2, true})
      .Cases({"And", "Or", "Xor"}, ElementwiseInfo{2, false, true})
      .Case("Not", ElementwiseInfo{1, false, true})
      .Case("Where", ElementwiseInfo{3})
      .Cases({"Neg",         "Abs",
              "Sqrt",        "Reciprocal",
              "Exp",         "Log",
              "Erf",         "Tanh",
              "Sigmoid",     "Relu",
              "LeakyRelu",   "Floor",
              "Ceil",        "Sin",
              "Cos",         "Softplus",
              "Gelu",        "Elu",
              "HardSigmoid", "HardSwish",
              "Softsign",    "ThresholdedRelu",
              "Selu",        "Celu",
              "Mish"},
             ElementwiseInfo{1})
      .Default(std::nullopt);
}

static bool isFloatOnly(StringRef op) {
  return llvm::is_contained({"Sqrt",
                             "Reciprocal",
                             "Exp",
                             "Log",
                             "Erf",
                             "Tanh",
                             "Sigmoid",
                             "LeakyRelu",
                             "Floor",
                             "Ceil",
                             "Sin",
                             "Cos",
                             "Softplus",
                             "Gelu",
                             "Elu",
                             "HardSigmoid",
                             "HardSwish",
                             "Softsign",
                             "ThresholdedRelu",
                             "Selu",
                             "Celu",
                             "Mish"},
                            op);
}

/// Evaluates a scalar op on doubles (floats) at import time.
static double evalFloat(StringRef op, ArrayRef<double> a, double alpha,
                        double beta) {
  double x = a[0], y = a.size() > 1 ? a[1] : 0;
  return llvm::StringSwitch<std::function<double()>>(op)
      .Case("Add", [&] { return x + y; })
      .Case("Sub", [&] { return x - y; })
      .Case("Mul", [&] { return x * y; })
      .Case("Div", [&] { return x / y; })
      .Case("Pow", [&] { return std::pow(x, y); })
      .Case("Max", [&] { return std::max(x, y); })
      .Case("Min", [&] { return std::min(x, y); })
      .Case("Mod", [&] { return std::fmod(x, y); })
      .Case("Equal", [&] { return double(x == y); })
      .Case("Less", [&] { return double(x < y); })
      .Case("Greater", [&] { return double(x > y); })
      .Case("LessOrEqual", [&] { return double(x <= y); })
      .Case("GreaterOrEqual", [&] { return double(x >= y); })
      .Case("And", [&] { return double(x != 0 && y != 0); })
      .Case("Or", [&] { return double(x != 0 || y != 0); })
      .Case("Xor", [&] { return double((x != 0) != (y != 0)); })
      .Case("Not", [&] { return double(x == 0); })
      .Case("Where", [&] { return x != 0 ? a[1] : a[2]; })
      .Case("Neg", [&] { return -x; })
      .Case("Abs", [&] { return std::fabs(x); })
      .Case("Sqrt", [&] { return std::sqrt(x); })
      .Case("Reciprocal", [&] { return 1.0 / x; })
      .Case("Exp", [&] { return std::exp(x); })
      .Case("Log", [&] { return std::log(x); })
      .Case("Erf", [&] { return std::erf(x); })
      .Case("Tanh", [&] { return std::tanh(x); })
      .Case("Sigmoid", [&] { return 1.0 / (1.0 + std::exp(-x)); })
      .Case("Relu", [&] { return std::max(x, 0.0); })
      .Case("LeakyRelu", [&] { return x >= 0 ? x : alpha * x; })
      .Case("Floor", [&] { return std::floor(x); })
      .Case("Ceil", [&] { return std::ceil(x); })
      .Case("Sin", [&] { return std::sin(x); })
      .Case("Cos", [&] { return std::cos(x); })
      .Case("Softplus", [&] { return std::log1p(std::exp(x)); })
      .Case("Mish", [&] { return x * std::tanh(std::log1p(std::exp(x))); })
      .Case("Gelu",
            [&] { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); })
      .Case("Elu", [&] { return x >= 0 ? x : alpha * (std::exp(x) - 1.0); })
      .Case("HardSigmoid",
            [&] { return std::clamp(alpha * x + beta, 0.0, 1.0); })
      .Case("HardSwish",
            [&] { return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0); })
      .Case("Softsign", [&] { return x / (1.0 + std::fabs(x)); })
      .Case("ThresholdedRelu", [&] { return x > alpha ? x : 0.0; })
      .Case("Selu",
            [&] { return beta * (x > 0 ? x : alpha * (std::exp(x) - 1.0)); })
      .Case("Celu",
            [&] {
              return std::max(0.0, x) +
                     std::min(0.0, alpha * (std::exp(x / alpha) - 1.0));
            })
      .Default([] { return 0.0; })();
}

/// Evaluates a scalar op on integers at import time. Unsigned operands are
/// zero-extended; their division, remainder, comparisons and min/max are
/// computed in uint64. Signed Mod is Python's % (fmod=0) unless `truncMod`
/// (fmod=1: C's %). Arithmetic wraps around (two's complement) like the
/// emitted arith ops, e.g. Div(INT64_MIN, -1) is INT64_MIN; narrower types
/// are truncated to their width afterwards (intsAttr). Returns std::nullopt
/// for an integer division or remainder by zero.
static std::optional<int64_t> evalInt(StringRef op, ArrayRef<int64_t> a,
                                      bool isUnsigned, bool truncMod) {
  int64_t x = a[0], y = a.size() > 1 ? a[1] : 0;
  uint64_t ux = x, uy = y;
  if ((op == "Div" || op == "Mod") && y == 0)
    return std::nullopt;
  // x / -1 and x % -1 without the overflow trap of INT64_MIN / -1.
  if (!isUnsigned && y == -1 && op == "Div")
    return int64_t(uint64_t(0) - ux);
  if (!isUnsigned && y == -1 && op == "Mod")
    return int64_t(0);
  if (op == "Mod" && truncMod && !isUnsigned)
    return x % y;
  // BitShift (unsigned operands): shifting by the width or more gives 0.
  if (op == "BitShiftLeft")
    return uy >= 64 ? 0 : int64_t(ux << uy);
  if (op == "BitShiftRight")
    return uy >= 64 ? 0 : int64_t(ux >> uy);
  if (isUnsigned) {
    std::optional<int64_t> r =
        llvm::StringSwitch<std::function<std::optional<int64_t>()>>(op)
            .Case("Div", [&] { return int64_t(ux / uy); })
            .Case("Mod", [&] { return int64_t(ux % uy); })
            .Case("Max", [&] { return int64_t(std::max(ux, uy)); })
            .Case("Min", [&] { return int64_t(std::min(ux, uy)); })
            .Case("Less", [&] { return int64_t(ux < uy); })
            .Case("Greater", [&] { return int64_t(ux > uy); })
            .Case("LessOrEqual", [&] { return int64_t(ux <= uy); })
            .Case("GreaterOrEqual", [&] { return int64_t(ux >= uy); })
            .Cases({"Abs", "Relu"}, [&] { return x; })
            .Default([] { return std::nullopt; })();
    if (r)
      return *r;
  }
  return llvm::StringSwitch<std::function<int64_t()>>(op)
      .Case("Add", [&] { return int64_t(ux + uy); })
      .Case("Sub", [&] { return int64_t(ux - uy); })
      .Case("Mul", [&] { return int64_t(ux * uy); })
      // ONNX integer Div truncates toward zero.
      .Case("Div", [&] { return x / y; })
      .Case("Pow",
            [&] {
              // Square-and-multiply, exact modulo 2^64.
              uint64_t r = 1, base = ux;
              for (uint64_t e = y < 0 ? 0 : uy; e; e >>= 1, base *= base)
                if (e & 1)
                  r *= base;
              return y < 0 ? int64_t(0) : int64_t(r);
            })
      .Case("Max", [&] { return std::max(x, y); })
      .Case("Min", [&] { return std::min(x, y); })
      .Case("Mod",
            [&] {
              int64_t r = x % y;
              return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
            })
      .Case("Equal", [&] { return int64_t(x == y); })
      .Case("Less", [&] { return int64_t(x < y); })
      .Case("Greater", [&] { return int64_t(x > y); })
      .Case("LessOrEqual", [&] { return int64_t(x <= y); })
      .Case("GreaterOrEqual", [&] { return int64_t(x >= y); })
      .Case("And", [&] { return int64_t(x && y); })
      .Case("Or", [&] { return int64_t(x || y); })
      .Case("Xor", [&] { return int64_t(bool(x) != bool(y)); })
      .Case("Not", [&] { return int64_t(!x); })
      .Case("Where", [&] { return x ? a[1] : a[2]; })
      .Case("Neg", [&] { return int64_t(uint64_t(0) - ux); })
      .Case("Abs", [&] { return x < 0 ? int64_t(uint64_t(0) - ux) : x; })
      .Case("Relu", [&] { return std::max<int64_t>(x, 0); })
      .Default([] { return int64_t(0); })();
}

/// Converts scalar `x` to the float type `to` (rounding to nearest even).
/// float16 <-> bfloat16 goes through f32, which holds both: neither holds
/// the other, and arith.extf/truncf need a wider/narrower target.
Value distir::onnx_import::castFloat(OpBuilder &b, Location loc, Value x,
                                     FloatType to) {
  auto from = cast<FloatType>(x.getType());
  if (from == to)
    return x;
  if (from.getWidth() == to.getWidth()) {
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (from.getWidth() < to.getWidth())
    return arith::ExtFOp::create(b, loc, to, x);
  return arith::TruncFOp::create(b, loc, to, x);
}

/// Emits the scalar op; operands already have the op's element types.
/// `isUnsigned`: integer operands are unsigned.
Value distir::onnx_import::emitScalar(OpBuilder &b, Location loc, StringRef op,
                                      ArrayRef<Value> a, double alpha,
                                      double beta, bool isUnsigned) {
  Value x = a[0], y = a.size() > 1 ? a[1] : Value();
  Type t = x.getType();
  bool f = isa<FloatType>(t);
  auto cst = [&](double v) -> Value {
    if (f)
      return arith::ConstantOp::create(b, loc, b.getFloatAttr(t, v));
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, (int64_t)v));
  };
  auto cmp = [&](arith::CmpFPredicate fp, arith::CmpIPredicate ip,
                 arith::CmpIPredicate up) -> Value {
    if (f)
      return arith::CmpFOp::create(b, loc, fp, x, y);
    return arith::CmpIOp::create(b, loc, isUnsigned ? up : ip, x, y);
  };
  if (isUnsigned && !f) {
    if (op == "Div")
      return arith::DivUIOp::create(b, loc, x, y);
    // fmod=0 and fmod=1 agree on unsigned operands.
    if (op == "Mod")
      return arith::RemUIOp::create(b, loc, x, y);
    if (op == "Max")
      return arith::MaxUIOp::create(b, loc, x, y);
    if (op == "Min")
      return arith::MinUIOp::create(b, loc, x, y);
    if (op == "Abs" || op == "Relu")
      return x;
  }
  if (op == "Add")
    return f ? Value(arith::AddFOp::create(b, loc, x, y))
             : Value(arith::AddIOp::create(b, loc, x, y));
  if (op == "Sub")
    return f ? Value(arith::SubFOp::create(b, loc, x, y))
             : Value(arith::SubIOp::create(b, loc, x, y));
  if (op == "Mul")
    return f ? Value(arith::MulFOp::create(b, loc, x, y))
             : Value(arith::MulIOp::create(b, loc, x, y));
  if (op == "Div")
    return f ? Value(arith::DivFOp::create(b, loc, x, y))
             : Value(arith::DivSIOp::create(b, loc, x, y));
  if (op == "Pow")
    return f ? Value(math::PowFOp::create(b, loc, x, y))
             : Value(math::IPowIOp::create(b, loc, x, y));
  if (op == "Max")
    return f ? Value(arith::MaximumFOp::create(b, loc, x, y))
             : Value(arith::MaxSIOp::create(b, loc, x, y));
  if (op == "Min")
    return f ? Value(arith::MinimumFOp::create(b, loc, x, y))
             : Value(arith::MinSIOp::create(b, loc, x, y));
  if (op == "Mod")
    return f ? Value(arith::RemFOp::create(b, loc, x, y))
             : Value(arith::RemSIOp::create(b, loc, x, y));
  if (op == "Equal")
    return cmp(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
               arith::CmpIPredicate::eq);
  if (op == "Less")
    return cmp(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
               arith::CmpIPredicate::ult);
  if (op == "Greater")
    return cmp(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
               arith::CmpIPredicate::ugt);
  if (op == "LessOrEqual")
    return cmp(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
               arith::CmpIPredicate::ule);
  if (op == "GreaterOrEqual")
    return cmp(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
               arith::CmpIPredicate::uge);
  if (op == "And")
    return arith::AndIOp::create(b, loc, x, y);
  if (op == "Or")
    return arith::OrIOp::create(b, loc, x, y);
  if (op == "Xor")
    return arith::XOrIOp::create(b, loc, x, y);
  if (op == "Not")
    return arith::XOrIOp::create(
        b, loc, x, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  if (op == "Where")
    return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
  if (op == "Neg")
    return f ? Value(arith::NegFOp::create(b, loc, x))
             : Value(arith::SubIOp::create(b, loc, cst(0), x));
  if (op == "Abs")
    return f ? Value(math::AbsFOp::create(b, loc, x))
             : Value(math::AbsIOp::create(b, loc, x));
  if (op == "Sqrt")
    return math::SqrtOp::create(b, loc, x);
  if (op == "Reciprocal")
    return arith::DivFOp::create(b, loc, cst(1), x);
  if (op == "Exp")
    return math::ExpOp::create(b, loc, x);
  if (op == "Log")
    return math::LogOp::create(b, loc, x);
  if (op == "Erf")
    return math::ErfOp::create(b, loc, x);
  if (op == "Tanh")
    return math::TanhOp::create(b, loc, x);
  if (op == "Floor")
    return math::FloorOp::create(b, loc, x);
  if (op == "Ceil")
    return math::CeilOp::create(b, loc, x);
  if (op == "Sin")
    return math::SinOp::create(b, loc, x);
  if (op == "Cos")
    return math::CosOp::create(b, loc, x);
  if (op == "Sigmoid") {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, cst(1),
                                 arith::AddFOp::create(b, loc, cst(1), e));
  }
  if (op == "Softplus")
    return math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x));
  if (op == "Mish") {
    // x * tanh(softplus(x)) (opset 18).
    Value softplus =
        math::Log1pOp::create(b, loc, math::ExpOp::create(b, loc, x));
    return arith::MulFOp::create(b, loc, x,
                                 math::TanhOp::create(b, loc, softplus));
  }
  if (op == "Gelu") {
    Value s = arith::MulFOp::create(b, loc, x, cst(M_SQRT1_2));
    Value e =
        arith::AddFOp::create(b, loc, cst(1), math::ErfOp::create(b, loc, s));
    return arith::MulFOp::create(b, loc,
                                 arith::MulFOp::create(b, loc, x, cst(0.5)), e);
  }
  if (op == "Relu")
    return f ? Value(arith::MaximumFOp::create(b, loc, x, cst(0)))
             : Value(arith::MaxSIOp::create(b, loc, x, cst(0)));
  if (op == "LeakyRelu" || op == "Elu") {
    Value neg =
        op == "LeakyRelu"
            ? Value(arith::MulFOp::create(b, loc, x, cst(alpha)))
            : Value(arith::MulFOp::create(b, loc, cst(alpha),
                                          math::ExpM1Op::create(b, loc, x)));
    Value ge =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x, cst(0));
    return arith::SelectOp::create(b, loc, ge, x, neg);
  }
  if (op == "HardSigmoid" || op == "HardSwish") {
    // HardSwish(x) = x * HardSigmoid(x) with alpha = 1/6, beta = 1/2.
    bool swish = op == "HardSwish";
    Value v = arith::AddFOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, x, cst(swish ? 1.0 / 6.0 : alpha)),
        cst(swish ? 0.5 : beta));
    Value h = arith::MinimumFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, v, cst(0)), cst(1));
    return swish ? Value(arith::MulFOp::create(b, loc, x, h)) : h;
  }
  if (op == "Softsign")
    return arith::DivFOp::create(
        b, loc, x,
        arith::AddFOp::create(b, loc, cst(1), math::AbsFOp::create(b, loc, x)));
  if (op == "ThresholdedRelu") {
    Value gt =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, cst(alpha));
    return arith::SelectOp::create(b, loc, gt, x, cst(0));
  }
  if (op == "Selu") {
    // beta carries Selu's gamma.
    Value neg = arith::MulFOp::create(b, loc, cst(alpha),
                                      math::ExpM1Op::create(b, loc, x));
    Value gt =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, cst(0));
    return arith::MulFOp::create(b, loc, cst(beta),
                                 arith::SelectOp::create(b, loc, gt, x, neg));
  }
  if (op == "Celu") {
    Value e = math::ExpM1Op::create(
        b, loc, arith::DivFOp::create(b, loc, x, cst(alpha)));
    Value neg = arith::MinimumFOp::create(
        b, loc, cst(0), arith::MulFOp::create(b, loc, cst(alpha), e));
    return arith::AddFOp::create(
        b, loc, arith::MaximumFOp::create(b, loc, x, cst(0)), neg);
  }
  return Value();
}

LogicalResult Importer::importElementwise(StringRef op) {
  ElementwiseInfo info = *elementwiseInfo(op);
  unsigned first = op == "Where" ? 1 : 0;
  for (unsigned i = 0; i < info.arity; ++i)
    if (!hasInput(i))
      return fail("expects " + Twine(info.arity) + " inputs");
  // Max and Min are variadic in ONNX; only the binary form is lowered.
  if (curNode->input_size() > static_cast<int>(info.arity))
    return fail("variadic form with " + Twine(curNode->input_size()) +
                " inputs is not supported");
  Type elt = inElt(first);
  // Pow's exponent may have another type than its base (converted below).
  for (unsigned i = first; i < info.arity; ++i)
    if (inElt(i) != elt && !(op == "Pow" && i == 1))
      return fail("operand element types differ");
  // The result has the base's type: an integer base with a float exponent
  // is computed in f64 and truncated toward zero (as numpy's astype).
  if (op == "Pow" && inElt(1) != elt &&
      (elt.isInteger(1) || inElt(1).isInteger(1)))
    return fail("unsupported combination of base and exponent types");
  bool mixedPow = op == "Pow" && inElt(1) != elt;
  if (op == "Where" && !inElt(0).isInteger(1))
    return fail("condition must be a bool tensor");
  if (info.logical && !elt.isInteger(1))
    return fail("operands must be bool tensors");
  if (isFloatOnly(op) && !isa<FloatType>(elt))
    return fail("integer operands are not supported");
  // Selu's defaults (alpha, gamma) are the ONNX spec's float constants.
  double alpha = attrFloat("alpha", op == "LeakyRelu"     ? 0.01f
                                    : op == "HardSigmoid" ? 0.2f
                                    : op == "Selu" ? 1.67326319217681884765625f
                                                   : 1.0f);
  double beta = op == "Selu" ? attrFloat("gamma", 1.05070102214813232421875f)
                             : attrFloat("beta", 0.5f);
  if (op == "Celu" && alpha == 0)
    return fail("alpha must not be 0");
  if (op == "Gelu" && attrString("approximate", "none") != "none")
    return fail("approximate Gelu is not supported");
  if (op == "Mod" && isa<FloatType>(elt) && attrInt("fmod", 0) == 0)
    return fail("float Mod requires fmod=1");
  // Signed integer Mod with fmod=0 takes the divisor's sign (Python's %).
  bool floorMod = op == "Mod" && !isa<FloatType>(elt) &&
                  attrInt("fmod", 0) == 0 && !in(first).isUnsigned;
  // Signedness of the operands (ONNX gives them one type) and the result.
  bool opUnsigned = in(first).isUnsigned;
  outUnsigned = !info.comparison && opUnsigned;
  // BitShift is defined on unsigned integers; evaluated and emitted per
  // direction.
  StringRef scalarOp = op;
  if (op == "BitShift") {
    if (!opUnsigned)
      return fail("operands must be unsigned integer tensors");
    std::string direction = attrString("direction", "");
    if (direction != "LEFT" && direction != "RIGHT")
      return fail("direction must be LEFT or RIGHT, got '" + direction + "'");
    scalarOp = direction == "LEFT" ? "BitShiftLeft" : "BitShiftRight";
  }
  Type outElt = info.comparison ? builder.getI1Type() : elt;

  SmallVector<int64_t> outShape;
  for (unsigned i = 0; i < info.arity; ++i) {
    auto b = broadcastShapes(outShape, inShape(i));
    if (!b)
      return fail("shapes " + shapeStr(outShape) + " and " +
                  shapeStr(inShape(i)) + " do not broadcast");
    outShape = *b;
  }

  // Evaluate at import time when all operands are known.
  if (canFold(numElements(outShape))) {
    int64_t n = numElements(outShape);
    SmallVector<SmallVector<int64_t>> idx;
    for (unsigned i = 0; i < info.arity; ++i)
      idx.push_back(broadcastIndices(outShape, inShape(i)));
    if (isa<FloatType>(elt) || mixedPow) {
      SmallVector<SmallVector<double>> vals;
      for (unsigned i = 0; i < info.arity; ++i)
        vals.push_back(knownFloatsOf(i));
      SmallVector<double> out(n);
      for (int64_t j = 0; j < n; ++j) {
        SmallVector<double> args;
        for (unsigned i = 0; i < info.arity; ++i)
          args.push_back(vals[i][idx[i][j]]);
        out[j] = evalFloat(op, args, alpha, beta);
      }
      setKnown(0, floatsAttr(outShape, outElt, out));
    } else {
      SmallVector<SmallVector<int64_t>> vals;
      for (unsigned i = 0; i < info.arity; ++i)
        vals.push_back(knownIntsOf(i));
      SmallVector<int64_t> out(n);
      for (int64_t j = 0; j < n; ++j) {
        SmallVector<int64_t> args;
        for (unsigned i = 0; i < info.arity; ++i)
          args.push_back(vals[i][idx[i][j]]);
        std::optional<int64_t> r =
            evalInt(scalarOp, args, opUnsigned, attrInt("fmod", 0) != 0);
        if (!r)
          return fail("integer division by zero");
        out[j] = *r;
      }
      setKnown(0, intsAttr(outShape, outElt, out));
    }
    return success();
  }

  // x^2 is common (variance in decomposed layer norms): emit a multiply.
  bool square = false;
  if (op == "Pow" && isKnown(1) && numElements(inShape(1)) == 1 &&
      isa<FloatType>(inElt(1)) && knownFloatsOf(1)[0] == 2.0)
    square = true;
  bool expUnsigned = op == "Pow" && in(1).isUnsigned;
  SmallVector<Value> operands;
  for (unsigned i = 0; i < (square ? 1u : info.arity); ++i)
    operands.push_back(inValue(i));
  FailureOr<Value> r = elementwise(
      operands, outElt, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
        if (square)
          return Value(arith::MulFOp::create(b, loc, a[0], a[0]));
        if (op == "Pow" && a[1].getType() != a[0].getType() &&
            !isa<FloatType>(a[0].getType())) {
          Type t = a[0].getType();
          if (!isa<FloatType>(a[1].getType())) {
            // Integer base and exponent of different widths.
            Value e = cast<IntegerType>(a[1].getType()).getWidth() >=
                              cast<IntegerType>(t).getWidth()
                          ? Value(arith::TruncIOp::create(b, loc, t, a[1]))
                      : expUnsigned
                          ? Value(arith::ExtUIOp::create(b, loc, t, a[1]))
                          : Value(arith::ExtSIOp::create(b, loc, t, a[1]));
            return Value(math::IPowIOp::create(b, loc, a[0], e));
          }
          Type f64 = b.getF64Type();
          Value x = opUnsigned
                        ? Value(arith::UIToFPOp::create(b, loc, f64, a[0]))
                        : Value(arith::SIToFPOp::create(b, loc, f64, a[0]));
          Value e = a[1].getType() == f64
                        ? a[1]
                        : Value(arith::ExtFOp::create(b, loc, f64, a[1]));
          Value p = math::PowFOp::create(b, loc, x, e);
          return opUnsigned ? Value(arith::FPToUIOp::create(b, loc, t, p))
                            : Value(arith::FPToSIOp::create(b, loc, t, p));
        }
        if (op == "Pow" && a[1].getType() != a[0].getType()) {
          Type t = a[0].getType();
          Value e =
              isa<FloatType>(a[1].getType())
                  ? (cast<FloatType>(a[1].getType()).getWidth() <
                             cast<FloatType>(t).getWidth()
                         ? Value(arith::ExtFOp::create(b, loc, t, a[1]))
                         : Value(arith::TruncFOp::create(b, loc, t, a[1])))
              : expUnsigned ? Value(arith::UIToFPOp::create(b, loc, t, a[1]))
                            : Value(arith::SIToFPOp::create(b, loc, t, a[1]));
          return Value(math::PowFOp::create(b, loc, a[0], e));
        }
        if (op == "BitShift") {
          // Shifting by the width or more is poison in arith: give 0.
          Type t = a[0].getType();
          Value shifted =
              scalarOp == "BitShiftLeft"
                  ? Value(arith::ShLIOp::create(b, loc, a[0], a[1]))
                  : Value(arith::ShRUIOp::create(b, loc, a[0], a[1]));
          Value width = arith::ConstantOp::create(
              b, loc, b.getIntegerAttr(t, t.getIntOrFloatBitWidth()));
          Value inRange = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, a[1], width);
          Value zero =
              arith::ConstantOp::create(b, loc, b.getIntegerAttr(t, 0));
          return Value(arith::SelectOp::create(b, loc, inRange, shifted, zero));
        }
        if (floorMod) {
          // r = x rem y; r + y where r and y differ in sign.
          Value r = arith::RemSIOp::create(b, loc, a[0], a[1]);
          Value zero = arith::ConstantOp::create(
              b, loc, b.getIntegerAttr(a[0].getType(), 0));
          Value nonZero =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
          Value rNeg =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, zero);
          Value yNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                             a[1], zero);
          Value differ = arith::XOrIOp::create(b, loc, rNeg, yNeg);
          Value fix = arith::AndIOp::create(b, loc, nonZero, differ);
          return Value(arith::SelectOp::create(
              b, loc, fix, arith::AddIOp::create(b, loc, r, a[1]), r));
        }
        return emitScalar(b, loc, op, a, alpha, beta, opUnsigned);
      });
  if (failed(r))
    return failure();
  setOutput(0, *r);
  return success();
}

//===----------------------------------------------------------------------===//
// Clip
//===----------------------------------------------------------------------===//

/// Clip(x, min, max) = min(max(x, min), max): the bounds are optional
/// scalar inputs from opset 11 (float or integer x), float attributes
/// before. A min above max gives max everywhere, as the spec says.
LogicalResult Importer::importClip() {
  if (!hasInput(0))
    return fail("expects an input");
  Type elt = inElt(0);
  if (elt.isInteger(1))
    return fail("bool operands are not supported");
  bool isFloat = isa<FloatType>(elt);
  bool isUnsigned = in(0).isUnsigned;
  SmallVector<Value> operands = {inValue(0)};
  bool hasLo = false, hasHi = false;
  std::optional<double> loAttr, hiAttr;
  if (opset < 11) {
    if (!isFloat)
      return fail("integer operands are not supported before opset 11");
    loAttr = attrFloat("min", -std::numeric_limits<float>::max());
    hiAttr = attrFloat("max", std::numeric_limits<float>::max());
  } else {
    for (unsigned i : {1u, 2u}) {
      if (!hasInput(i))
        continue;
      if (inElt(i) != elt)
        return fail(Twine(i == 1 ? "min" : "max") +
                    " must have the input's element type");
      if (numElements(inShape(i)) != 1)
        return fail(Twine(i == 1 ? "min" : "max") +
                    " must be a scalar, got shape " + shapeStr(inShape(i)));
      operands.push_back(inValue(i));
      (i == 1 ? hasLo : hasHi) = true;
    }
  }
  FailureOr<Value> r = elementwise(
      operands, elt, [&](OpBuilder &b, Location loc, ArrayRef<Value> a) {
        Value v = a[0];
        auto bound = [&](Value c, bool lower) -> Value {
          if (isFloat)
            return lower ? Value(arith::MaximumFOp::create(b, loc, v, c))
                         : Value(arith::MinimumFOp::create(b, loc, v, c));
          if (isUnsigned)
            return lower ? Value(arith::MaxUIOp::create(b, loc, v, c))
                         : Value(arith::MinUIOp::create(b, loc, v, c));
          return lower ? Value(arith::MaxSIOp::create(b, loc, v, c))
                       : Value(arith::MinSIOp::create(b, loc, v, c));
        };
        unsigned next = 1;
        if (loAttr)
          v = bound(scalarConst(b, loc, elt, *loAttr), true);
        if (hasLo)
          v = bound(a[next++], true);
        if (hiAttr)
          v = bound(scalarConst(b, loc, elt, *hiAttr), false);
        if (hasHi)
          v = bound(a[next++], false);
        return v;
      });
  if (failed(r))
    return failure();
  if (cast<RankedTensorType>(r->getType()).getShape() != inShape(0))
    return fail("min/max do not broadcast to the input shape");
  setOutput(0, *r);
  return success();
}
