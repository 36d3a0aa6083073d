//===- InitAllTranslations.h - Register DistIR's translations ---*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_INITALLTRANSLATIONS_H
#define DISTIR_INITALLTRANSLATIONS_H

namespace distir {

/// Registers DistIR's translations (cluster JSON import/export) and the
/// upstream MLIR-to-LLVM-IR translation. Safe to call more than once.
void registerAllTranslations();

} // namespace distir

#endif // DISTIR_INITALLTRANSLATIONS_H
