//===- InitAllTranslations.cpp - Register DistIR's translations
//-------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllTranslations.h"
#include "DistIR/InitAllDialects.h"
#include "DistIR/Target/Cluster/ClusterTranslation.h"
#include "DistIR/Target/ONNX/ONNXImporter.h"

#include "mlir/InitAllTranslations.h"

void distir::registerAllTranslations() {
  static bool initOnce = [] {
    registerClusterTranslations(registerAllDialects);
    registerONNXTranslations();
    mlir::registerToLLVMIRTranslation();
    return true;
  }();
  (void)initOnce;
}
