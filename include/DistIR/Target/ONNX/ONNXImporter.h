//===- ONNXImporter.h - ONNX model -> MLIR ----------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_TARGET_ONNX_ONNXIMPORTER_H
#define DISTIR_TARGET_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace distir {

/// Options of the ONNX importer.
struct ONNXImportOptions {
  /// Shapes of graph inputs, replacing their dynamic dimensions.
  llvm::SmallVector<std::pair<std::string, llvm::SmallVector<int64_t>>>
      inputShapes;
  /// Graph inputs bound to constant values at import time (as text, parsed
  /// per the input's element type): each becomes an initializer, so its
  /// contents are known (shape operands resolve statically) and it leaves
  /// the function signature.
  llvm::SmallVector<std::pair<std::string, llvm::SmallVector<std::string>>>
      inputValues;
  /// Device every value is placed on (`#dist.device<N>`).
  int64_t device = 0;
  /// Initializers become `arith.constant`s instead of function arguments.
  bool weightsAsConstants = false;
  /// Name of the emitted function.
  std::string funcName = "main";
};

/// Imports the serialized ONNX model `bytes` (read from `fileName`) as a
/// module holding one `func.func` of linalg/tensor/arith/math ops on static,
/// placed tensor types. Emits one diagnostic and returns null on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModel(llvm::StringRef bytes, llvm::StringRef fileName,
                const ONNXImportOptions &options, mlir::MLIRContext *context);

/// Parses `NAME=d0,d1,...` into `result`. Returns an error message, or an
/// empty string on success.
std::string
parseInputShape(llvm::StringRef spec,
                std::pair<std::string, llvm::SmallVector<int64_t>> &result);

/// Parses `NAME=v0,v1,...` (possibly no values) into `result`. Returns an
/// error message, or an empty string on success.
std::string
parseInputValue(llvm::StringRef spec,
                std::pair<std::string, llvm::SmallVector<std::string>> &result);

/// Registers `--import-onnx` and `--build-mlp` with mlir-translate.
void registerONNXTranslations();

} // namespace distir

#endif // DISTIR_TARGET_ONNX_ONNXIMPORTER_H
