//===- Passes.h - DistIR conversion passes ----------------------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_CONVERSION_PASSES_H
#define DISTIR_CONVERSION_PASSES_H

#include "DistIR/Dialect/Dist/IR/DistDialect.h"
#include "DistIR/Dialect/Dist/IR/DistRankOps.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace distir {

/// The MPI ABI a lowering targets (convert-dist-to-mpi's
/// mpi-implementation; the `MPI:Implementation` entry of `dlti.map`).
enum class MPIImplementation { OpenMPI, MPICH };

/// The GEMM dist-linalg-to-blas calls: CBLAS on host buffers, or the CUDA
/// runtime's cuBLAS wrappers on device buffers.
enum class BLASLibrary { CBLAS, CUBLAS };

#define GEN_PASS_DECL
#include "DistIR/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "DistIR/Conversion/Passes.h.inc"

} // namespace distir

#endif // DISTIR_CONVERSION_PASSES_H
