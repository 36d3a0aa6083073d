//===- InitAllTranslations.h - Register DistIR's translations ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_INITALLTRANSLATIONS_H
#define DISTIR_INITALLTRANSLATIONS_H

namespace distir {

/// Registers the translations that need no ONNX library: cluster JSON
/// import/export and upstream's MLIR-to-LLVM-IR. In DistIRRegistration.
/// Safe to call more than once.
void registerDistTranslations();

/// Registers every translation `distir-translate` offers: those of
/// registerDistTranslations() and the ONNX importer (`--import-onnx`,
/// `--build-mlp`, `--build-gpt2`). In DistIRTranslationRegistration, which
/// links libonnx and protobuf. Safe to call more than once.
void registerAllTranslations();

} // namespace distir

#endif // DISTIR_INITALLTRANSLATIONS_H
