//===- ONNXChecker.h - Exception-safe ONNX checker/inference ----*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The ONNX library reports errors by throwing C++ exceptions, but DistIR is
// built without exceptions. These wrappers live in a translation unit compiled
// with exceptions and turn every exception into an error message.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_TARGET_ONNX_ONNXCHECKER_H
#define DISTIR_LIB_TARGET_ONNX_ONNXCHECKER_H

#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace distir::onnx_import {

/// Runs `onnx::checker::check_model`. Returns an empty string on success,
/// the checker's message otherwise.
std::string checkModel(const onnx::ModelProto &model);

/// Runs ONNX shape inference with data propagation, in place. Returns an
/// empty string on success, the error message otherwise.
std::string inferShapes(onnx::ModelProto &model);

/// Returns an empty string if the ONNX schema registry knows `opType` in
/// `domain` at `opset`, a reason otherwise.
std::string checkSchema(const std::string &opType, const std::string &domain,
                        int opset);

/// The opset in which the default-domain schema of `opType` in effect at
/// `opset` was introduced (its since_version), or 0 if there is none.
int schemaSinceVersion(const std::string &opType, int opset);

/// The highest opset of the default domain whose schemas this ONNX library
/// holds (17 for ONNX 1.12): a model at a later opset would be checked and
/// inferred against older schemas.
int maxOpset();

} // namespace distir::onnx_import

#endif // DISTIR_LIB_TARGET_ONNX_ONNXCHECKER_H
