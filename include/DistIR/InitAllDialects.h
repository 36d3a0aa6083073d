//===- InitAllDialects.h - Register DistIR's dialects -----------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_INITALLDIALECTS_H
#define DISTIR_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace distir {

/// Registers the `dist` dialect only, for compilers that bring their own
/// upstream dialects.
void registerDistDialect(mlir::DialectRegistry &registry);

/// Registers `dist` and every upstream dialect DistIR programs use (func,
/// arith, math, tensor, linalg, bufferization, scf, cf, memref, shard, mpi,
/// dlti, llvm) with the upstream extensions and interface models they need.
void registerAllDialects(mlir::DialectRegistry &registry);

} // namespace distir

#endif // DISTIR_INITALLDIALECTS_H
