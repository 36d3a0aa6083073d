//===- InitDistTranslations.cpp - Translations without ONNX ---------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllDialects.h"
#include "DistIR/InitAllTranslations.h"
#include "DistIR/Target/Cluster/ClusterTranslation.h"

#include "mlir/InitAllTranslations.h"

void distir::registerDistTranslations() {
  static bool initOnce = [] {
    registerClusterTranslations(registerAllDialects);
    mlir::registerToLLVMIRTranslation();
    return true;
  }();
  (void)initOnce;
}
