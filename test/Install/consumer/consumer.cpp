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
#include "mlir/Transforms/Passes.h"
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

// Plain linalg as another compiler writes it: no placements.
static const char *const plainProgram = R"mlir(
func.func @linear(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%z : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
)mlir";

static bool run(mlir::MLIRContext &context, const char *source,
                llvm::StringRef pipeline) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source,
                                              mlir::ParserConfig(&context));
  if (!module)
    return false;
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, llvm::errs())))
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
  // DistIR's own passes (transforms, conversions, pipelines) and the one
  // upstream pass this consumer needs (dist-to-rank wants calls inlined).
  distir::registerDistPasses();
  mlir::registerInlinerPass();
  mlir::MLIRContext context(registry);

  const char *verify =
      "dist-attach-cluster{cluster=dgx-a100},dist-verify-placement";
  bool valid = run(context, validProgram, verify);
  llvm::outs() << "valid program: " << (valid ? "ok" : "FAILED") << "\n";
  // Diagnostics go to stderr: keep the two streams in order.
  llvm::outs().flush();
  bool misplaced = run(context, misplacedProgram, verify);
  llvm::outs() << "misplaced program: " << (misplaced ? "ACCEPTED" : "rejected")
               << "\n";
  llvm::outs().flush();
  // The way in for plain IR, data parallelism, then one function per rank.
  bool distributed = run(context, plainProgram,
                         "dist-place,dist-dtp{dp=2},inline,dist-to-rank");
  llvm::outs() << "plain program distributed: "
               << (distributed ? "ok" : "FAILED") << "\n";
  return valid && !misplaced && distributed ? 0 : 1;
}
