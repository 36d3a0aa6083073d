//===- EntryFunction.cpp - The function a pass or tool works on -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/IR/EntryFunction.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

func::FuncOp distir::dist::lookupEntryFunction(ModuleOp module, StringRef name,
                                               StringRef chooseHint,
                                               std::string &error) {
  llvm::raw_string_ostream os(error);
  if (!name.empty()) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func || func.isExternal()) {
      os << "no function @" << name << " with a body in the module";
      return {};
    }
    return func;
  }
  SmallVector<func::FuncOp> candidates;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && func.isPublic())
      candidates.push_back(func);
  if (candidates.size() == 1)
    return candidates.front();
  if (candidates.empty()) {
    os << "no public function with a body";
    return {};
  }
  os << "several public functions (";
  llvm::interleaveComma(candidates, os,
                        [&](func::FuncOp f) { os << "@" << f.getSymName(); });
  os << "); choose one with " << chooseHint;
  return {};
}
