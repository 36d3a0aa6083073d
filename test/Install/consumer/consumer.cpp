//===- consumer.cpp - A downstream compiler embedding DistIR
//---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Registers DistIR's dialects and passes with one call each, parses a dist
// program, and runs a pipeline with DistIR passes on it: once on a valid
// program, once on an invalid one.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllDialects.h"
#include "DistIR/InitAllPasses.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

static const char *const validProgram = R"mlir(
!t0 = tensor<8xf32, #dist.device<0>>
!t1 = tensor<8xf32, #dist.device<1>>
func.func @f(%a: !t0, %b: !t1) -> (!t0, !t1) {
  %r:2 = dist.all_reduce sum %a, %b : !t0, !t1
  return %r#0, %r#1 : !t0, !t1
}
)mlir";

static const char *const misplacedProgram = R"mlir(
func.func @g(%a: tensor<8xf32, #dist.device<0>>) {
  %e = tensor.empty() : tensor<8xf32>
  return
}
)mlir";

static bool run(mlir::MLIRContext &context, const char *source) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source,
                                              mlir::ParserConfig(&context));
  if (!module)
    return false;
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline(
          "dist-attach-cluster{cluster=dgx-a100},dist-verify-placement,"
          "canonicalize",
          pm, llvm::errs())))
    return false;
  if (mlir::failed(pm.run(*module)))
    return false;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return true;
}

int main() {
  mlir::DialectRegistry registry;
  distir::registerAllDialects(registry);
  distir::registerAllPasses();
  mlir::MLIRContext context(registry);

  bool valid = run(context, validProgram);
  llvm::outs() << "valid program: " << (valid ? "ok" : "FAILED") << "\n";
  // Diagnostics go to stderr: keep the two streams in order.
  llvm::outs().flush();
  bool misplaced = run(context, misplacedProgram);
  llvm::outs() << "misplaced program: " << (misplaced ? "ACCEPTED" : "rejected")
               << "\n";
  return valid && !misplaced ? 0 : 1;
}
