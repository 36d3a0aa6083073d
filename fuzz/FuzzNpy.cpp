//===- FuzzNpy.cpp - libFuzzer harness: the .npy reader -------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Analysis/Executor.h"
#include "DistIR/Analysis/TensorIO.h"

#include "mlir/IR/MLIRContext.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context =
      new mlir::MLIRContext(mlir::MLIRContext::Threading::DISABLED);
  std::string error;
  (void)distir::parseNpy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.npy",
      context, error);
  return 0;
}
