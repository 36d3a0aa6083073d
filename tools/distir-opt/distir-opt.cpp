//===- distir-opt.cpp - DistIR optimizer driver
//-----------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllDialects.h"
#include "DistIR/InitAllPasses.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  distir::registerAllDialects(registry);
  distir::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "DistIR optimizer driver\n", registry));
}
