//===- MPIMemoryEffects.h - Memory effects of upstream mpi ops --*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_CONVERSION_MPIMEMORYEFFECTS_H
#define DISTIR_CONVERSION_MPIMEMORYEFFECTS_H

#include "mlir/IR/DialectRegistry.h"

namespace distir {

/// Attaches MemoryEffectOpInterface to mpi.send/isend/recv/irecv/allreduce
/// (reads and writes of their buffers, plus MPI's global state), which
/// MLIR 22 does not declare; buffer deallocation needs them.
void registerMPIMemoryEffectModels(mlir::DialectRegistry &registry);

} // namespace distir

#endif // DISTIR_CONVERSION_MPIMEMORYEFFECTS_H
