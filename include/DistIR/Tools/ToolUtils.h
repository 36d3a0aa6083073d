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
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <string>

namespace distir {

/// What a tool needs to load a program and report diagnostics against its
/// source text (`file:line:col: error: ...` with the offending line).
struct ToolSession {
  ToolSession();
  mlir::MLIRContext context;
  std::shared_ptr<llvm::SourceMgr> sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics;

  /// Parses and verifies `path` ("-" for stdin) with every DistIR dialect
  /// registered, then checks placement (unless `checkPlacement` is false:
  /// a caller that transforms the program first checks it afterwards).
  /// `verify` false skips the verifier (a program a DistIR tool has just
  /// written; an invalid one is then undefined behaviour).
  mlir::OwningOpRef<mlir::ModuleOp> loadProgram(llvm::StringRef path,
                                                bool checkPlacement = true,
                                                bool verify = true);
};

/// The function to run: `name` if given, else the module's only public
/// function with a body. Reports an error listing the candidates otherwise.
mlir::func::FuncOp findEntry(mlir::ModuleOp module, llvm::StringRef name);

/// Writes `text` to `path` ("-" for stdout); reports failures.
mlir::LogicalResult writeFile(llvm::StringRef path, llvm::StringRef text);

/// Creates the directory that will hold output file `path` ("-": stdout,
/// nothing to do), so that tools check their outputs before the work and
/// write into new directories. Prints one error line on failure.
mlir::LogicalResult prepareOutputFile(llvm::StringRef path);

} // namespace distir

#endif // DISTIR_TOOLS_TOOLUTILS_H
