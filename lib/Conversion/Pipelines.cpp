//===- Pipelines.cpp - From global dist programs to LLVM ------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Pipelines.h"
#include "DistIR/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void distir::buildDistToLLVMPipeline(OpPassManager &pm,
                                     const DistToLLVMPipelineOptions &options) {
  if (options.project)
    pm.addPass(createDistToRankPass());
  if (options.communication == CommLibrary::NCCL) {
    pm.addPass(createConvertDistToNCCLPass());
  } else {
    ConvertDistToMPIPassOptions mpi;
    mpi.implementation = options.mpiImplementation;
    pm.addPass(createConvertDistToMPIPass(mpi));
  }
  buildRankToLLVMPipeline(pm, options);
}

void distir::buildRankToLLVMPipeline(OpPassManager &pm,
                                     const DistToLLVMPipelineOptions &options) {
  // Identity layouts at function boundaries keep the C interface of the
  // entry point simple (contiguous buffers); one-shot inserts copies where
  // slices are passed.
  // Elementwise arith/math ops on whole tensors (dist-dtp's gradient
  // accumulation, for instance) have no bufferization: make them linalg.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createDistDecomposeAggregatedLinalgPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Every buffer a step allocates is freed once its last user ran (upstream
  // ownership-based deallocation): a step's memory is bounded and the
  // allocator reuses it across steps.
  bufferization::buildBufferDeallocationPipeline(
      pm, bufferization::BufferDeallocationPipelineOptions());
  // Results that alias an argument are returned as owned copies
  // (bufferization.clone): alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addNestedPass<func::FuncOp>(createDistOneHotToScatterPass());
  if (options.blas)
    pm.addPass(createDistLinalgToBLASPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createSCFToControlFlowPass());
  // Math ops without an LLVM intrinsic (math.erf in GELU) call libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  if (options.communication == CommLibrary::MPI &&
      options.mpiImplementation.getValue() == "OpenMPI")
    pm.addPass(createDistFixOpenMPISymbolsPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void distir::registerDistConversionPassesAndPipelines() {
  registerDistConversionPasses();
  PassPipelineRegistration<DistToLLVMPipelineOptions>(
      "dist-lower-to-llvm",
      "Lower a global dist program to per-rank LLVM dialect code with MPI "
      "or NCCL communication (see docs/design/lowering.md)",
      buildDistToLLVMPipeline);
}
