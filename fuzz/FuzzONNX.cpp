//===- FuzzONNX.cpp - libFuzzer harness: ONNX bytes to a module
//------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Any byte string given to the importer either imports or fails with a
// diagnostic; a crash, a hang, a leak or a sanitizer report is a bug.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllDialects.h"
#include "DistIR/Target/ONNX/ONNXImporter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *r = new mlir::DialectRegistry();
    distir::registerAllDialects(*r);
    return r;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  distir::ONNXImportOptions options;
  // Half the inputs import their weights as constants (the other path).
  options.weightsAsConstants = size % 2;
  (void)distir::importONNXModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx",
      options, &context);
  return 0;
}
