/*===- DistIRCUDARuntime.h - GPU runtime of device=gpu rank programs -*- C
-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// Rank programs lowered with --dist-lower-to-llvm="comm=nccl device=gpu" run
// their compute as CUDA kernels and keep every buffer in device memory. The
// lowering calls three families of functions, all defined here on the CUDA
// runtime API:
//   - the `mgpu*` functions that upstream MLIR's gpu-to-llvm conversion and
//     gpu.binary embedding call (module load at program start, kernel
//     launch, streams, device allocation). MLIR ships no CUDA runtime library
//     on this system; these follow the calling convention of that lowering.
//   - `_mlir_memref_to_llvm_alloc`/`_aligned_alloc`/`_free`, which every
//     memref.alloc/dealloc of the host code calls (finalize-memref-to-llvm
//     with use-generic-functions): memory is cudaMalloc'd device memory;
//   - `distir_cuda_copy`: host <-> device copies of constant data;
//   - `distir_cublas_sgemm`/`dgemm`: matrix products through cuBLAS.
// Every process uses GPU (local rank mod GPU count), the local rank taken from
// the launcher's environment (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
// SLURM_LOCALID, LOCAL_RANK; 0 without one): the same GPU the NCCL shim
// picks. All work goes to one stream per process (distir_cuda_stream), which
// the NCCL shim also uses, so kernels, allocations (stream-ordered, from the
// device's memory pool) and collectives are ordered on it; kernel launches
// do not wait for the GPU (the host waits in distir_cuda_copy, in the NCCL
// shim and in distir_cuda_synchronize).
// Failures print one line naming the call and exit the process with 1.
//
//===----------------------------------------------------------------------===*/

#ifndef DISTIR_RUNTIME_CUDA_DISTIRCUDARUNTIME_H
#define DISTIR_RUNTIME_CUDA_DISTIRCUDARUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The process's stream (a cudaStream_t, created on first use with the
/// process's GPU current).
void *distir_cuda_stream(void);
/// Index of the GPU this process uses.
int32_t distir_cuda_device(void);
/// Copies `bytes` between any two of host and device memory and waits.
void distir_cuda_copy(int64_t dst, int64_t src, int64_t bytes);
/// Waits for all work queued on the process's stream.
void distir_cuda_synchronize(void);
/// Row-major GEMM on device buffers with CBLAS's arguments (order must be
/// CblasRowMajor): C = alpha op(A) op(B) + beta C, run by cuBLAS on the
/// process's stream (dist-linalg-to-blas{library=cublas}).
void distir_cublas_sgemm(int32_t order, int32_t transA, int32_t transB,
                         int32_t m, int32_t n, int32_t k, float alpha,
                         const float *a, int32_t lda, const float *b,
                         int32_t ldb, float beta, float *c, int32_t ldc);
void distir_cublas_dgemm(int32_t order, int32_t transA, int32_t transB,
                         int32_t m, int32_t n, int32_t k, double alpha,
                         const double *a, int32_t lda, const double *b,
                         int32_t ldb, double beta, double *c, int32_t ldc);
/// Number of kernel launches and of device allocations so far.
int64_t distir_cuda_launches(void);
int64_t distir_cuda_allocations(void);

/// The allocation functions of memref.alloc/dealloc in device=gpu code.
void *_mlir_memref_to_llvm_alloc(uint64_t bytes);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t bytes);
void _mlir_memref_to_llvm_free(void *pointer);

/// What MLIR's gpu-to-llvm lowering and gpu.binary embedding call.
void *mgpuModuleLoad(void *data, size_t bytes);
void *mgpuModuleLoadJIT(void *ptx, int32_t optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void *mgpuMemAlloc(uint64_t bytes, void *stream, bool isHostShared);
void mgpuMemFree(void *pointer, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* DISTIR_RUNTIME_CUDA_DISTIRCUDARUNTIME_H */
