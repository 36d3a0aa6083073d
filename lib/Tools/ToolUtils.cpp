//===- ToolUtils.cpp - Shared pieces of the DistIR command-line tools
//-------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Tools/ToolUtils.h"
#include "DistIR/Dialect/Dist/IR/EntryFunction.h"
#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/InitAllDialects.h"

#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

distir::ToolSession::ToolSession()
    : sourceMgr(std::make_shared<llvm::SourceMgr>()),
      diagnostics(*sourceMgr, &context) {
  DialectRegistry registry;
  registerAllDialects(registry);
  context.appendDialectRegistry(registry);
}

OwningOpRef<ModuleOp> distir::ToolSession::loadProgram(StringRef path,
                                                       bool checkPlacement,
                                                       bool verify) {
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(path, &message);
  if (!buffer) {
    emitError(UnknownLoc::get(&context)) << message;
    return {};
  }
  sourceMgr->AddNewSourceBuffer(std::move(buffer), SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context, verify));
  if (!module || !checkPlacement)
    return module;
  PassManager pm(&context);
  // The parser verified the program (unless the caller trusts it: then
  // nothing does); the placement check changes nothing, so verifying again
  // after it would only double the load time.
  pm.enableVerifier(false);
  pm.addPass(dist::createDistVerifyPlacementPass());
  if (failed(pm.run(*module)))
    return {};
  return module;
}

func::FuncOp distir::findEntry(ModuleOp module, StringRef name) {
  std::string error;
  func::FuncOp func = dist::lookupEntryFunction(module, name, "--entry", error);
  if (!func)
    emitError(module.getLoc()) << error;
  return func;
}

LogicalResult distir::prepareOutputFile(StringRef path) {
  if (path.empty() || path == "-")
    return success();
  StringRef dir = llvm::sys::path::parent_path(path);
  if (dir.empty())
    return success();
  std::error_code ec = llvm::sys::fs::create_directories(dir);
  if (!ec && !llvm::sys::fs::is_directory(dir))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec) {
    llvm::errs() << "error: cannot create directory '" << dir << "' for '"
                 << path << "': " << ec.message() << "\n";
    return failure();
  }
  return success();
}

LogicalResult distir::writeFile(StringRef path, StringRef text) {
  if (failed(prepareOutputFile(path)))
    return failure();
  std::string message;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &message);
  if (!file) {
    llvm::errs() << "error: " << message << "\n";
    return failure();
  }
  file->os() << text;
  file->keep();
  return success();
}
