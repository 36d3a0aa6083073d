//===- InitAllPasses.h - Register DistIR's passes ---------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_INITALLPASSES_H
#define DISTIR_INITALLPASSES_H

namespace distir {

/// Registers DistIR's own passes and pipelines (`dist-*`).
void registerDistPasses();

/// Registers DistIR's passes and the upstream passes that `distir-opt`
/// offers (generic transforms, func, arith, math, tensor, linalg,
/// bufferization, scf, shard and conversion passes).
void registerAllPasses();

} // namespace distir

#endif // DISTIR_INITALLPASSES_H
