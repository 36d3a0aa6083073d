//===- Program.h - A replayed trace as a dist program -----------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Converts the global dataflow graph of a profiled job into a `dist`
// program, so that distir-sim, its Chrome trace and its critical-path
// report apply to a real job as to a program built here.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_REPLAY_PROGRAM_H
#define DISTIR_REPLAY_PROGRAM_H

#include "DistIR/Replay/Replayer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace distir::replay {

/// The replayed graph as a module with one function `@replay`: each node a
/// `dist.kernel` on its stream's device (transfer steps marked
/// `communication`) lasting what the
/// replay gave it (measured duration plus the framework gap before it; a
/// transfer step its collective's transfer time over the steps), taking
/// as operands the empty tensors ("tokens") of the nodes it waits for; a
/// dependency on another rank goes through a `dist.send` of the token. Ops
/// are in the replay's order (earliest start first), which is a
/// topological order and, per stream, the replayed one.
mlir::OwningOpRef<mlir::ModuleOp>
buildReplayProgram(mlir::MLIRContext &context, const DataflowGraph &graph,
                   const ReplayResult &replayed);

} // namespace distir::replay

#endif // DISTIR_REPLAY_PROGRAM_H
