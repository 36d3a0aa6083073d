//===- ProgramInputs.cpp - Naming and generating program inputs -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/ProgramInputs.h"

#include "mlir/IR/BuiltinTypes.h"

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

RuntimeValue distir::makeRandomInput(Type type, std::mt19937_64 &rng) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  Type element = tensor ? tensor.getElementType() : type;
  RuntimeValue value = tensor ? RuntimeValue::tensor(element, tensor.getShape())
                              : RuntimeValue::scalar(element, 0);
  value.isTensor = static_cast<bool>(tensor);
  for (double &x : *value.data) {
    uint64_t bits = rng();
    // 53 random mantissa bits -> [0, 1) -> [-1, 1).
    x = isa<FloatType>(element)
            ? roundToType(element, static_cast<double>(bits >> 11) /
                                           9007199254740992.0 * 2.0 -
                                       1.0)
            : roundToType(element, static_cast<double>(bits % 8));
  }
  return value;
}
