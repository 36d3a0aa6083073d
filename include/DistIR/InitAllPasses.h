//===- InitAllPasses.h - Register DistIR's passes ---------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_INITALLPASSES_H
#define DISTIR_INITALLPASSES_H

namespace distir {

/// Registers DistIR's own passes and pipelines: the `dist-*` transforms,
/// the conversions (`dist-to-rank`, `convert-dist-to-mpi`,
/// `convert-dist-to-nccl`, ...) and `dist-lower-to-llvm`. Safe to call more
/// than once.
void registerDistPasses();

/// Registers DistIR's passes and the upstream passes that `distir-opt`
/// offers (generic transforms, func, arith, math, tensor, linalg,
/// bufferization, scf, shard and conversion passes). Safe to call more than
/// once.
void registerAllPasses();

} // namespace distir

#endif // DISTIR_INITALLPASSES_H
