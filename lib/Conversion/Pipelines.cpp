//===- Pipelines.cpp - From global dist programs to LLVM ------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIR/Conversion/Pipelines.h"
#include "DistIR/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// Fails with one error: a pipeline option combination that cannot work
/// (pipeline builders cannot report errors themselves).
struct RejectOptionsPass
    : public PassWrapper<RejectOptionsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RejectOptionsPass)
  explicit RejectOptionsPass(std::string message)
      : message(std::move(message)) {}
  StringRef getArgument() const final { return "dist-reject-options"; }
  void runOnOperation() final {
    getOperation().emitError(message);
    signalPassFailure();
  }
  std::string message;
};
} // namespace

void distir::buildDistToLLVMPipeline(OpPassManager &pm,
                                     const DistToLLVMPipelineOptions &options) {
  if (options.device == ComputeDevice::GPU &&
      options.communication != CommLibrary::NCCL) {
    // MPI would read the device buffers on the host.
    pm.addPass(std::make_unique<RejectOptionsPass>(
        "dist-lower-to-llvm: device=gpu needs comm=nccl"));
    return;
  }
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

/// device=gpu after buffer deallocation: loops become kernels (PTX embedded
/// in the module, compiled by the driver at program start), every
/// memref.alloc calls the runtime's device allocator.
static void
buildGPUCodePipeline(OpPassManager &pm,
                     const distir::DistToLLVMPipelineOptions &options) {
  if (options.blas) {
    distir::DistLinalgToBLASPassOptions blas;
    blas.library = distir::BLASLibrary::CUBLAS;
    pm.addPass(distir::createDistLinalgToBLASPass(blas));
  }
  pm.addPass(distir::createDistGPUPrepareKernelsPass());
  OpPassManager &host = pm.nest<func::FuncOp>();
  host.addPass(createConvertLinalgToParallelLoopsPass());
  distir::DistGPUTileParallelLoopsPassOptions tile;
  tile.blockSize = options.gpuBlockSize;
  host.addPass(distir::createDistGPUTileParallelLoopsPass(tile));
  // The innermost (tiled, contiguous) dimension on threads and blocks in x:
  // x allows 2^31 - 1 blocks, y and z 65535, and z only 64 threads.
  GpuMapParallelLoopsPassOptions mapping;
  mapping.mappingPolicyStr = "innermost-first";
  host.addPass(createGpuMapParallelLoopsPass(mapping));
  host.addPass(createConvertParallelLoopToGpuPass());
  host.addPass(distir::createDistGPUWrapHostLoopsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createLowerAffinePass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.gpuChip;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // exp/erf/tanh as polynomials: no libdevice needed to link the kernels.
  kernels.addPass(distir::createDistGPUApproximateMathPass());
  // maximumf/minimumf as compare + select (NaN-propagating), not libdevice.
  kernels.addPass(arith::createArithExpandOpsPass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createGpuToLLVMConversionPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
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
  if (options.fuse)
    pm.addNestedPass<func::FuncOp>(createDistFuseElementwisePass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bool gpu = options.device == distir::ComputeDevice::GPU;
  if (gpu)
    pm.addNestedPass<func::FuncOp>(distir::createDistGPUStageConstantsPass());
  // Every buffer a step allocates is freed once its last user ran (upstream
  // ownership-based deallocation): a step's memory is bounded and the
  // allocator reuses it across steps.
  bufferization::buildBufferDeallocationPipeline(
      pm, bufferization::BufferDeallocationPipelineOptions());
  // Results that alias an argument are returned as owned copies
  // (bufferization.clone): alloc + copy.
  pm.addPass(createConvertBufferizationToMemRefPass());
  if (gpu) {
    buildGPUCodePipeline(pm, options);
    return;
  }
  pm.addNestedPass<func::FuncOp>(createDistOneHotToScatterPass());
  if (options.blas)
    pm.addPass(createDistLinalgToBLASPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createDistOutlineLoopNestsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createSCFToControlFlowPass());
  // Math ops without an LLVM intrinsic (math.erf in GELU) call libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  if (options.communication == CommLibrary::MPI &&
      options.mpiImplementation == distir::MPIImplementation::OpenMPI)
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
