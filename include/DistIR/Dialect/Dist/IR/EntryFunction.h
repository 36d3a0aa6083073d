//===- EntryFunction.h - The function a pass or tool works on ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// dist-dtp, dist-simulate, dist-pad-dimension and the runners take an entry
// function the same way: the one named (it must have a body), else the
// module's only public function with a body.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_DIALECT_DIST_IR_ENTRYFUNCTION_H
#define DISTIR_DIALECT_DIST_IR_ENTRYFUNCTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace distir::dist {

/// `name`'s function if `name` is given, else the only public function of
/// `module` with a body. Null on failure, with `error` saying why: "no
/// function @NAME with a body in the module", "no public function with a
/// body", or "several public functions (@a, @b); choose one with " +
/// `chooseHint` (how the caller's user names one: "entry=NAME", "--entry").
mlir::func::FuncOp lookupEntryFunction(mlir::ModuleOp module,
                                       llvm::StringRef name,
                                       llvm::StringRef chooseHint,
                                       std::string &error);

} // namespace distir::dist

#endif // DISTIR_DIALECT_DIST_IR_ENTRYFUNCTION_H
