//===- distir-translate.cpp - DistIR translation driver
//---------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllTranslations.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  distir::registerAllTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "DistIR translation driver\n"));
}
