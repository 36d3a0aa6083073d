//===- InitAllTranslations.cpp - Register DistIR's translations -----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllTranslations.h"
#include "DistIR/Target/ONNX/ONNXImporter.h"

void distir::registerAllTranslations() {
  static bool initOnce = [] {
    registerDistTranslations();
    registerONNXTranslations();
    return true;
  }();
  (void)initOnce;
}
