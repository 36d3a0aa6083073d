//===- Pipelines.h - From global dist programs to LLVM ----------*- C++ -*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#ifndef DISTIR_CONVERSION_PIPELINES_H
#define DISTIR_CONVERSION_PIPELINES_H

#include "DistIR/Conversion/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace distir {

/// Which library carries the communication of the lowered rank programs.
enum class CommLibrary { MPI, NCCL };

/// Where the compute of the lowered rank programs runs.
enum class ComputeDevice { CPU, GPU };

struct DistToLLVMPipelineOptions
    : public mlir::PassPipelineOptions<DistToLLVMPipelineOptions> {
  Option<MPIImplementation> mpiImplementation{
      *this, "mpi-implementation", llvm::cl::desc("MPI ABI"),
      llvm::cl::init(MPIImplementation::OpenMPI),
      llvm::cl::values(
          clEnumValN(MPIImplementation::OpenMPI, "OpenMPI", "Open MPI's ABI"),
          clEnumValN(MPIImplementation::MPICH, "MPICH", "MPICH's ABI"))};
  Option<CommLibrary> communication{
      *this, "comm", llvm::cl::desc("Communication library"),
      llvm::cl::init(CommLibrary::MPI),
      llvm::cl::values(
          clEnumValN(CommLibrary::MPI, "mpi",
                     "upstream mpi dialect (CPU; convert-dist-to-mpi)"),
          clEnumValN(CommLibrary::NCCL, "nccl",
                     "calls into runtime/nccl/DistIRNCCLRuntime.h "
                     "(convert-dist-to-nccl)"))};
  Option<bool> project{
      *this, "project",
      llvm::cl::desc("Start with dist-to-rank (off: the input is already "
                     "per-rank)"),
      llvm::cl::init(true)};
  Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Matrix products as cblas_sgemm/dgemm calls "
                     "(dist-linalg-to-blas; link a CBLAS such as OpenBLAS); "
                     "with device=gpu, cuBLAS calls on device buffers"),
      llvm::cl::init(false)};
  Option<ComputeDevice> device{
      *this, "device",
      llvm::cl::desc("Where compute runs (gpu needs comm=nccl)"),
      llvm::cl::init(ComputeDevice::CPU),
      llvm::cl::values(
          clEnumValN(ComputeDevice::CPU, "cpu", "host loops (and CBLAS)"),
          clEnumValN(ComputeDevice::GPU, "gpu",
                     "CUDA kernels through upstream's GPU/NVVM lowering; "
                     "buffers in device memory (link "
                     "runtime/cuda/DistIRCUDARuntime)"))};
  Option<std::string> gpuChip{
      *this, "gpu-chip",
      llvm::cl::desc("NVPTX target of device=gpu kernels (PTX, compiled for "
                     "the GPU at program start)"),
      llvm::cl::init("sm_70")};
  Option<unsigned> gpuBlockSize{
      *this, "gpu-block-size",
      llvm::cl::desc("Threads per block of device=gpu kernels (innermost "
                     "parallel loop tile)"),
      llvm::cl::init(256)};
  Option<bool> fuse{
      *this, "fuse",
      llvm::cl::desc("Fuse elementwise ops into their producers and "
                     "consumers before bufferization (one loop nest or "
                     "kernel instead of one per op)"),
      llvm::cl::init(false)};
};

/// dist-to-rank, convert-dist-to-mpi (or -nccl), one-shot-bufferize
/// (function boundaries, identity layouts), buffer deallocation,
/// dist-one-hot-to-scatter, dist-linalg-to-blas (blas=true),
/// convert-linalg-to-loops, lower-affine, expand-strided-metadata,
/// convert-scf-to-cf, convert-to-llvm, dist-fix-openmpi-symbols (OpenMPI),
/// reconcile-unrealized-casts (docs/design/lowering.md). With device=gpu,
/// loops become kernels instead (docs/design/gpu-lowering.md).
void buildDistToLLVMPipeline(mlir::OpPassManager &pm,
                             const DistToLLVMPipelineOptions &options);

/// The part after convert-dist-to-mpi: from per-rank programs with mpi ops
/// on tensors to the LLVM dialect.
void buildRankToLLVMPipeline(mlir::OpPassManager &pm,
                             const DistToLLVMPipelineOptions &options);

/// Registers `dist-lower-to-llvm` and the conversion passes.
void registerDistConversionPassesAndPipelines();

} // namespace distir

#endif // DISTIR_CONVERSION_PIPELINES_H
