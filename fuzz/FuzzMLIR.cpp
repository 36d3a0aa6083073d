//===- FuzzMLIR.cpp - libFuzzer harness: MLIR text, dist verifiers
//---------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Parses the input as MLIR with every DistIR dialect, runs the verifiers
// (the dist ops', attributes', the rank dialect's) and dist-verify-placement.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Dialect/Dist/Transforms/Passes.h"
#include "DistIR/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    distir::registerAllDialects(*r);
    return r;
  }();
  // A NUL after the end, as every real buffer has: MLIR's lexer reads up to
  // a terminator.
  std::string text(reinterpret_cast<const char *>(data), size);
  // MLIR 22's custom parsers of linalg.transpose and linalg.broadcast crash
  // on a malformed permutation/dimensions list (`permutation = [q, 0]`: a
  // null attribute is stored; fuzz/README.md, fuzz/known-upstream/): not
  // ours to fix, so skipped to keep the harness on DistIR's code.
  if (llvm::StringRef(text).contains("linalg.transpose") ||
      llvm::StringRef(text).contains("linalg.broadcast"))
    return 0;
  // MLIR 22's parser reads poisoned memory (ASan: use-after-poison in
  // FileLineColRange::get under Parser::emitWrongTokenError) when an input
  // ends inside an unclosed region after a dialect attribute such as
  // #dist.device<1> (fuzz/known-upstream/eof-after-dialect-attribute.mlir;
  // release builds report the error cleanly): skipped, as above.
  if (llvm::count(text, '{') > llvm::count(text, '}') &&
      llvm::StringRef(text).contains("#dist."))
    return 0;
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text,
                                              mlir::ParserConfig(&context));
  if (!module)
    return 0;
  mlir::PassManager pm(&context);
  pm.addPass(distir::dist::createDistVerifyPlacementPass());
  (void)pm.run(*module);
  return 0;
}
