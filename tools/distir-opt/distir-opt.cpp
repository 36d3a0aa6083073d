//===- distir-opt.cpp - DistIR optimizer driver ---------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllDialects.h"
#include "DistIR/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

// `--help` lists DistIR's passes among MLIR's hundreds; this lists only
// ours. Handled before MlirOptMain; declared so that --help shows it.
static llvm::cl::opt<bool> helpDist(
    "help-dist",
    llvm::cl::desc("List only DistIR's passes and pipelines (dist-*, "
                   "dist-to-rank, convert-dist-to-mpi/-nccl, "
                   "dist-lower-to-llvm) with their options, and exit"));

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]) == "--help-dist" ||
        llvm::StringRef(argv[i]) == "-help-dist") {
      distir::registerDistPasses();
      llvm::outs() << "OVERVIEW: DistIR's passes and pipelines (distir-opt "
                      "--help lists MLIR's too)\n\n";
      mlir::printRegisteredPasses();
      // printRegisteredPasses() lists passes only; ours has one pipeline.
      if (const mlir::PassPipelineInfo *pipeline =
              mlir::PassPipelineInfo::lookup("dist-lower-to-llvm")) {
        llvm::outs() << "\nPass Pipelines:\n";
        pipeline->printHelpStr(/*indent=*/2, /*descIndent=*/38);
      }
      return 0;
    }
  mlir::DialectRegistry registry;
  distir::registerAllDialects(registry);
  distir::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "DistIR optimizer driver\n", registry));
}
