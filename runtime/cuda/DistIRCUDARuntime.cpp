//===- DistIRCUDARuntime.cpp - GPU runtime of device=gpu rank programs ----===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// See DistIRCUDARuntime.h. State is per process: the chosen GPU, made current
// on every entry (the program's threads and NCCL's all use it), and one
// stream. Written on the CUDA runtime API, which loads the driver when first
// used: a machine without one gets an error line, not a loader failure.
//
//===----------------------------------------------------------------------===//

#include "DistIRCUDARuntime.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

[[noreturn]] void fail(const char *call, const char *reason) {
  std::fprintf(stderr, "error: distir-cuda: %s failed: %s\n", call, reason);
  std::exit(1);
}

void check(cudaError_t e, const char *call) {
  if (e != cudaSuccess)
    fail(call, cudaGetErrorString(e));
}

int localRank() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "SLURM_LOCALID", "LOCAL_RANK"})
    if (const char *v = std::getenv(name))
      return std::atoi(v);
  return 0;
}

void check(cublasStatus_t e, const char *call) {
  if (e != CUBLAS_STATUS_SUCCESS)
    fail(call, cublasGetStatusString(e));
}

struct State {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  std::atomic<int64_t> launches{0}, allocations{0};
};

State &state() {
  static State s;
  static std::once_flag once;
  std::call_once(once, [] {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (count == 0)
      fail("cudaGetDeviceCount", "no CUDA device");
    s.device = localRank() % count;
    check(cudaSetDevice(s.device), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
  });
  return s;
}

/// The state, with its GPU current on the calling thread.
State &current() {
  State &s = state();
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess || device != s.device)
    check(cudaSetDevice(s.device), "cudaSetDevice");
  return s;
}

/// The cuBLAS handle, created on first use, on the process's stream.
cublasHandle_t blas() {
  State &s = current();
  static std::once_flag once;
  std::call_once(once, [&] {
    check(cublasCreate(&s.blas), "cublasCreate");
    check(cublasSetStream(s.blas, s.stream), "cublasSetStream");
  });
  return s.blas;
}

/// CBLAS enum values (cblas.h), as the lowering passes them.
constexpr int32_t kRowMajor = 101, kTrans = 112;

cublasOperation_t op(int32_t transpose) {
  return transpose == kTrans ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/// Row-major C = alpha op(A) op(B) + beta C is the column-major product
/// C^T = alpha op(B)^T op(A)^T + beta C^T: swap the operands.
template <typename T, typename Gemm>
void rowMajorGemm(Gemm gemm, const char *name, int32_t order, int32_t transA,
                  int32_t transB, int32_t m, int32_t n, int32_t k, T alpha,
                  const T *a, int32_t lda, const T *b, int32_t ldb, T beta,
                  T *c, int32_t ldc) {
  if (order != kRowMajor)
    fail(name, "only row-major products are supported");
  check(gemm(blas(), op(transB), op(transA), n, m, k, &alpha, b, ldb, a, lda,
             &beta, c, ldc),
        name);
}

cudaStream_t streamOf(void *stream) {
  return stream ? static_cast<cudaStream_t>(stream) : current().stream;
}

} // namespace

extern "C" {

void *distir_cuda_stream(void) { return current().stream; }
int32_t distir_cuda_device(void) { return state().device; }

void distir_cuda_copy(int64_t dst, int64_t src, int64_t bytes) {
  State &s = current();
  if (bytes <= 0)
    return;
  check(cudaMemcpyAsync(reinterpret_cast<void *>(dst),
                        reinterpret_cast<const void *>(src), size_t(bytes),
                        cudaMemcpyDefault, s.stream),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
}

void distir_cuda_synchronize(void) {
  check(cudaStreamSynchronize(current().stream), "cudaStreamSynchronize");
}

void distir_cublas_sgemm(int32_t order, int32_t transA, int32_t transB,
                         int32_t m, int32_t n, int32_t k, float alpha,
                         const float *a, int32_t lda, const float *b,
                         int32_t ldb, float beta, float *c, int32_t ldc) {
  rowMajorGemm(cublasSgemm, "cublasSgemm", order, transA, transB, m, n, k,
               alpha, a, lda, b, ldb, beta, c, ldc);
}

void distir_cublas_dgemm(int32_t order, int32_t transA, int32_t transB,
                         int32_t m, int32_t n, int32_t k, double alpha,
                         const double *a, int32_t lda, const double *b,
                         int32_t ldb, double beta, double *c, int32_t ldc) {
  rowMajorGemm(cublasDgemm, "cublasDgemm", order, transA, transB, m, n, k,
               alpha, a, lda, b, ldb, beta, c, ldc);
}

int64_t distir_cuda_launches(void) { return state().launches; }
int64_t distir_cuda_allocations(void) { return state().allocations; }

void *_mlir_memref_to_llvm_alloc(uint64_t bytes) {
  current();
  void *p = nullptr;
  // Stream-ordered allocation from the device's pool (freed blocks are
  // reused across steps, as framework caching allocators do). Zero-sized
  // memrefs still get a distinct, freeable pointer.
  check(cudaMallocAsync(&p, bytes ? bytes : 1, state().stream),
        "cudaMallocAsync");
  ++state().allocations;
  return p;
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t bytes) {
  // cudaMalloc aligns to at least 256 bytes.
  if (alignment > 256)
    fail("_mlir_memref_to_llvm_aligned_alloc", "alignment above 256 bytes");
  return _mlir_memref_to_llvm_alloc(bytes);
}

void _mlir_memref_to_llvm_free(void *pointer) {
  if (!pointer)
    return;
  // Stream-ordered: the block returns to the pool after the kernels queued
  // before it, which may still read it, have run.
  check(cudaFreeAsync(pointer, current().stream), "cudaFreeAsync");
}

void *mgpuModuleLoad(void *data, size_t) {
  current();
  cudaLibrary_t library = nullptr;
  check(cudaLibraryLoadData(&library, data, nullptr, nullptr, 0, nullptr,
                            nullptr, 0),
        "cudaLibraryLoadData");
  return library;
}

void *mgpuModuleLoadJIT(void *ptx, int32_t optLevel) {
  current();
  cudaLibrary_t library = nullptr;
  char log[4096] = {0};
  cudaJitOption options[] = {cudaJitOptimizationLevel, cudaJitErrorLogBuffer,
                             cudaJitErrorLogBufferSizeBytes};
  void *values[] = {reinterpret_cast<void *>(intptr_t(optLevel)), log,
                    reinterpret_cast<void *>(sizeof(log))};
  cudaError_t e = cudaLibraryLoadData(&library, ptx, options, values, 3,
                                      nullptr, nullptr, 0);
  if (e != cudaSuccess && log[0])
    fail("cudaLibraryLoadData (PTX JIT)", log);
  check(e, "cudaLibraryLoadData (PTX JIT)");
  return library;
}

void mgpuModuleUnload(void *module) {
  // Runs from a global destructor, possibly after the runtime shut down.
  (void)cudaLibraryUnload(static_cast<cudaLibrary_t>(module));
}

void *mgpuModuleGetFunction(void *module, const char *name) {
  current();
  cudaKernel_t kernel = nullptr;
  check(cudaLibraryGetKernel(&kernel, static_cast<cudaLibrary_t>(module), name),
        "cudaLibraryGetKernel");
  return kernel;
}

void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *stream,
                      void **params, void **extra, size_t) {
  if (extra)
    fail("mgpuLaunchKernel", "extra launch parameters are not supported");
  cudaStream_t s = streamOf(stream);
  dim3 grid(static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
            static_cast<unsigned>(gridZ));
  dim3 block(static_cast<unsigned>(blockX), static_cast<unsigned>(blockY),
             static_cast<unsigned>(blockZ));
  // A cudaKernel_t is accepted as the function of cudaLaunchKernel.
  check(cudaLaunchKernel(static_cast<const void *>(function), grid, block,
                         params, size_t(sharedMemBytes), s),
        "cudaLaunchKernel");
  ++state().launches;
}

// The lowering creates, synchronizes and destroys a stream around every
// synchronous launch. All work of the process is queued in order on its one
// stream, and the host reads device memory only through the calls that
// synchronize (distir_cuda_copy, the NCCL shim, distir_cuda_synchronize):
// hand out that stream and let launches run ahead of the host.
void *mgpuStreamCreate(void) { return current().stream; }
void mgpuStreamDestroy(void *) {}
void mgpuStreamSynchronize(void *stream) {
  if (stream && stream != current().stream)
    check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
          "cudaStreamSynchronize");
}

void *mgpuMemAlloc(uint64_t bytes, void *, bool isHostShared) {
  if (isHostShared)
    fail("mgpuMemAlloc", "host-shared allocation is not supported");
  return _mlir_memref_to_llvm_alloc(bytes);
}

void mgpuMemFree(void *pointer, void *) { _mlir_memref_to_llvm_free(pointer); }

void mgpuMemcpy(void *dst, void *src, size_t bytes, void *stream) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, streamOf(stream)),
        "cudaMemcpyAsync");
}

} // extern "C"
