//===- TensorIO.h - Read and write tensors as .npy files --------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_ANALYSIS_TENSORIO_H
#define DISTIR_ANALYSIS_TENSORIO_H

#include "DistIR/Analysis/Executor.h"

#include <string>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace distir {

/// Reads a NumPy .npy file (format 1.0-3.0, little-endian or byte-sized
/// dtypes f2/f4/f8, i1/i2/i4/i8, u1/u2/u4/u8, b1; C order). On failure
/// returns std::nullopt and sets `error`.
std::optional<RuntimeValue>
readNpy(llvm::StringRef path, mlir::MLIRContext *context, std::string &error);

/// The same, on the file's bytes (`path` names it in errors).
std::optional<RuntimeValue> parseNpy(llvm::StringRef bytes,
                                     llvm::StringRef path,
                                     mlir::MLIRContext *context,
                                     std::string &error);

/// Writes `value` as .npy (bf16 and other types without a NumPy dtype are
/// widened to f4); integers as u1..u8 when `isUnsigned`. Returns false and
/// sets `error` on failure.
bool writeNpy(llvm::StringRef path, const RuntimeValue &value,
              std::string &error, bool isUnsigned = false);

} // namespace distir

#endif // DISTIR_ANALYSIS_TENSORIO_H
