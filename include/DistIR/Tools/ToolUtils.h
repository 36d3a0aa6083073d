//===- ToolUtils.h - Shared pieces of the DistIR command-line tools -*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_TOOLS_TOOLUTILS_H
#define DISTIR_TOOLS_TOOLUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace distir {

/// Parses and verifies `path` ("-" for stdin) with every DistIR dialect
/// registered, then checks placement. Diagnostics go to stderr.
mlir::OwningOpRef<mlir::ModuleOp> loadProgram(mlir::MLIRContext &context,
                                              llvm::StringRef path);

/// The function to run: `name` if given, else the module's only public
/// function with a body. Reports an error listing the candidates otherwise.
mlir::func::FuncOp findEntry(mlir::ModuleOp module, llvm::StringRef name);

/// Writes `text` to `path` ("-" for stdout); reports failures.
mlir::LogicalResult writeFile(llvm::StringRef path, llvm::StringRef text);

} // namespace distir

#endif // DISTIR_TOOLS_TOOLUTILS_H
