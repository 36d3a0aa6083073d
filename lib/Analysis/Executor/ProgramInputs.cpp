//===- ProgramInputs.cpp - Naming and generating program inputs -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/ProgramInputs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace distir;

SmallVector<std::string> distir::getArgumentNames(func::FuncOp func,
                                                  unsigned i) {
  SmallVector<std::string> names = {
      std::to_string(i), "arg" + std::to_string(i), "%arg" + std::to_string(i)};
  if (auto name = func.getArgAttrOfType<StringAttr>(i, "dist.name"))
    names.push_back(name.str());
  if (auto loc = dyn_cast<NameLoc>(func.getArgument(i).getLoc()))
    names.push_back(loc.getName().str());
  return names;
}

RuntimeValue distir::makeRandomArgument(func::FuncOp func, unsigned i,
                                        std::mt19937_64 &rng) {
  return makeRandomInput(func.getArgumentTypes()[i], rng,
                         func.getArgAttr(i, "dist.optimizer_state") != nullptr);
}

RuntimeValue distir::makeRandomInput(Type type, std::mt19937_64 &rng,
                                     bool nonNegative) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  Type element = tensor ? tensor.getElementType() : type;
  RuntimeValue value = tensor ? RuntimeValue::tensor(element, tensor.getShape())
                              : RuntimeValue::scalar(element, 0);
  value.isTensor = static_cast<bool>(tensor);
  for (double &x : *value.data) {
    uint64_t bits = rng();
    // 53 random mantissa bits -> [0, 1) -> [-1, 1).
    double unit = static_cast<double>(bits >> 11) / 9007199254740992.0;
    x = isa<FloatType>(element)
            ? roundToType(element, nonNegative ? unit : unit * 2.0 - 1.0)
            : roundToType(element, static_cast<double>(bits % 8));
  }
  return value;
}

namespace {

/// `select(i < 0, i + dim, i)` of `value`: returns `i`.
Value unwrapNegative(Value value) {
  auto select = value.getDefiningOp<arith::SelectOp>();
  if (!select)
    return {};
  auto add = select.getTrueValue().getDefiningOp<arith::AddIOp>();
  Value i = select.getFalseValue();
  if (!add || !llvm::is_contained(add->getOperands(), i))
    return {};
  return i;
}

/// The function argument whose values `value` carries unchanged, if any.
BlockArgument traceToArgument(Value value, func::FuncOp func, bool &wraps) {
  for (int steps = 0; steps < 64; ++steps) {
    if (Value i = unwrapNegative(value)) {
      wraps = true;
      value = i;
      continue;
    }
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (owner == func.getOperation())
        return arg;
      // A linalg body argument stands for an element of its operand.
      auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(owner);
      if (!linalgOp || arg.getArgNumber() >= linalgOp.getNumDpsInputs())
        return {};
      value = linalgOp.getDpsInputs()[arg.getArgNumber()];
      continue;
    }
    Operation *def = value.getDefiningOp();
    if (!def)
      return {};
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
            arith::ExtUIOp, tensor::ExtractSliceOp, tensor::CollapseShapeOp,
            tensor::ExpandShapeOp, tensor::CastOp, tensor::ReshapeOp,
            linalg::TransposeOp>(def)) {
      value = def->getOperand(0);
      continue;
    }
    // dist communication moves values: result k carries operand k (or the
    // only operand).
    if (def->getDialect() && def->getDialect()->getNamespace() == "dist" &&
        def->getNumOperands() > 0) {
      unsigned k = cast<OpResult>(value).getResultNumber();
      value = def->getOperand(k < def->getNumOperands() ? k : 0);
      continue;
    }
    return {};
  }
  return {};
}

} // namespace

SmallVector<std::optional<IndexBound>>
distir::getArgumentIndexBounds(func::FuncOp func) {
  SmallVector<std::optional<IndexBound>> bounds(func.getNumArguments());
  func.walk([&](tensor::ExtractOp extract) {
    RankedTensorType source = extract.getTensor().getType();
    for (auto [d, index] : llvm::enumerate(extract.getIndices())) {
      int64_t dim = source.getDimSize(d);
      if (ShapedType::isDynamic(dim) || matchPattern(index, m_Constant()))
        continue;
      bool wraps = false;
      BlockArgument arg = traceToArgument(index, func, wraps);
      if (!arg || !isa<IntegerType>(getElementTypeOrSelf(arg.getType())))
        continue;
      // Name the lookup by its structured op (an imported node's location).
      Operation *user = extract->getParentOfType<linalg::LinalgOp>();
      IndexBound bound{wraps ? -dim : 0, dim, user ? user : extract};
      std::optional<IndexBound> &known = bounds[arg.getArgNumber()];
      if (!known || bound.hi - bound.lo < known->hi - known->lo)
        known = bound;
    }
  });
  return bounds;
}

std::optional<std::string> distir::checkIndexBound(const RuntimeValue &value,
                                                   const IndexBound &bound) {
  for (auto [k, x] : llvm::enumerate(*value.data)) {
    if (x >= static_cast<double>(bound.lo) && x < static_cast<double>(bound.hi))
      continue;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "element " << k << " is " << static_cast<int64_t>(x)
       << ", outside the valid index range [" << bound.lo << ", " << bound.hi
       << ") of the lookup at " << bound.user->getLoc();
    return text;
  }
  return std::nullopt;
}
