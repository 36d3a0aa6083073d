//===- Opset18.h - Opset-18 models for ONNX 1.12's checker ------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_LIB_TARGET_ONNX_OPSET18_H
#define DISTIR_LIB_TARGET_ONNX_OPSET18_H

#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace distir::onnx_import {

/// The last opset the importer implements, one past the linked ONNX
/// library's (17): its models are checked and inferred through
/// restateOpset18As17.
constexpr int kImportMaxOpset = 18;

/// Whether `op` first appears in opset 18 (ONNX 1.12 has no schema for it).
bool isNewInOpset18(const std::string &op);

/// Rewrites an opset-18 model (a copy: what ONNX's checker and shape
/// inference see) into opset 17 with the same value names: reductions take
/// constant axes as an attribute, Mish and GroupNormalization become their
/// opset-17 expansions, and nodes whose opset-18 meaning has no opset-17
/// form (non-constant axes, Split's num_outputs, Pad's axes, Resize's and
/// new attributes) move to a custom domain, whose outputs
/// inference leaves unknown. The importer reads the original.
void restateOpset18As17(onnx::ModelProto &model);

} // namespace distir::onnx_import

#endif // DISTIR_LIB_TARGET_ONNX_OPSET18_H
