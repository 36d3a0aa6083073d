//===- InitAllDialects.cpp - Register DistIR's dialects
//---------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/InitAllDialects.h"
#include "DistIR/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"

void distir::registerDistDialect(mlir::DialectRegistry &registry) {
  registry.insert<dist::DistDialect>();
}

void distir::registerAllDialects(mlir::DialectRegistry &registry) {
  registerDistDialect(registry);
  registry.insert<
      mlir::arith::ArithDialect, mlir::bufferization::BufferizationDialect,
      mlir::cf::ControlFlowDialect, mlir::DLTIDialect, mlir::func::FuncDialect,
      mlir::LLVM::LLVMDialect, mlir::linalg::LinalgDialect,
      mlir::math::MathDialect, mlir::memref::MemRefDialect,
      mlir::mpi::MPIDialect, mlir::scf::SCFDialect, mlir::shard::ShardDialect,
      mlir::tensor::TensorDialect>();
  // Interface models (bufferization, tiling, sharding, to-LLVM) attach
  // lazily, only to the dialects a context actually loads.
  mlir::registerAllExtensions(registry);
}
