//===- TensorProtoIO.h - ONNX TensorProto files <-> runtime values -*- C++
//-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Reads and writes the `.pb` files of the ONNX backend tests
// (test_data_set_N/input_K.pb, output_K.pb): one serialized TensorProto.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_TARGET_ONNX_TENSORPROTOIO_H
#define DISTIR_TARGET_ONNX_TENSORPROTOIO_H

#include "DistIR/Analysis/Executor.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>
#include <string>

namespace mlir {
class MLIRContext;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace distir {

/// Reads a serialized onnx.TensorProto. On failure returns std::nullopt and
/// sets `error` (unsupported data types, malformed files, size mismatches).
/// `expected`, the element type of the receiving argument when known, lets
/// a UINT16 tensor be read as bfloat16 (older ONNX test data stores it so).
std::optional<RuntimeValue> readTensorProtoFile(llvm::StringRef path,
                                                mlir::MLIRContext *context,
                                                std::string &error,
                                                mlir::Type expected = {});

/// Reads the initializers (the weights) named in `wanted` of the ONNX
/// model at `path`, by name; other names are skipped. On failure returns
/// std::nullopt and sets `error` (unreadable model, external or malformed
/// tensor data).
std::optional<llvm::StringMap<RuntimeValue>>
readModelInitializers(llvm::StringRef path, mlir::MLIRContext *context,
                      const llvm::StringSet<> &wanted, std::string &error);

/// Binds the arguments of `func` that have no value yet (`args[i]` empty,
/// one slot per argument) to the initializers of the ONNX model at `path`
/// named by the argument's `dist.name` or name location (dist-dtp names
/// whole replicas of a weight after it; shards carry no name). Fails with
/// `error` when the model cannot be read or every initializer an argument
/// names differs from it in type or shape; arguments no initializer names
/// stay empty.
bool bindModelInitializers(
    llvm::StringRef path, mlir::func::FuncOp func,
    llvm::MutableArrayRef<std::optional<RuntimeValue>> args,
    std::string &error);

/// Writes `value` as a serialized onnx.TensorProto named `name`; integers
/// as UINT8..UINT64 when `isUnsigned`.
bool writeTensorProtoFile(llvm::StringRef path, const RuntimeValue &value,
                          llvm::StringRef name, std::string &error,
                          bool isUnsigned = false);

} // namespace distir

#endif // DISTIR_TARGET_ONNX_TENSORPROTOIO_H
