//===- cuda_microbench.cpp - GPU microbenchmarks for calibration ----------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// distir-microbench-cuda [--compute FILE.csv] [--collective FILE.csv]
//     [--dtype f32|bf16|f16] [--max-gpus N] [--max-bytes B] [--iters N]
//     [--quick]
//
// Measures one node's GPUs for distir-calibrate:
//  - compute (GPU 0): GEMMs with cuBLAS (cublasSgemm for f32, cublasGemmEx
//    with f32 accumulation for bf16/f16) as `matmul`; cublasSaxpy as
//    `elementwise`; cublasSdot as `reduction`; device-to-device copies as
//    `copy`. Bytes and flops are counted like the simulator counts the
//    equivalent linalg op (see OpCost.h): a GEMM reads A, B and C and
//    writes C, 2 flops per point.
//  - collectives: NCCL all_reduce, all_gather, reduce_scatter, broadcast,
//    reduce, alltoall (grouped send/recv) and sendrecv over groups of
//    2, 4, 8, ... GPUs (one process drives all GPUs of the group), with the
//    nccl-tests size convention. For multi-node groups run NVIDIA's
//    nccl-tests under MPI and pass their output to distir-calibrate.
//
// Times are wall-clock means over `iters` calls after warm-up calls.
//
//===----------------------------------------------------------------------===//

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "error: %s:%d: %s: %s\n", __FILE__, __LINE__,       \
                   #call, cudaGetErrorString(err_));                           \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#define CUBLAS_CHECK(call)                                                     \
  do {                                                                         \
    cublasStatus_t st_ = (call);                                               \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                        \
      std::fprintf(stderr, "error: %s:%d: %s: cuBLAS status %d\n", __FILE__,   \
                   __LINE__, #call, static_cast<int>(st_));                    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#define NCCL_CHECK(call)                                                       \
  do {                                                                         \
    ncclResult_t res_ = (call);                                                \
    if (res_ != ncclSuccess) {                                                 \
      std::fprintf(stderr, "error: %s:%d: %s: %s\n", __FILE__, __LINE__,       \
                   #call, ncclGetErrorString(res_));                           \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

struct Options {
  std::string computeOutput = "compute.csv";
  std::string collectiveOutput = "collectives.csv";
  std::string dtype = "f32";
  int maxGpus = 0; // 0: all
  size_t maxBytes = size_t(1) << 30;
  int iters = 20;
  int warmup = 5;
  bool quick = false;
};

/// Mean seconds per call of `launch` (asynchronous work followed by `sync`).
double timeCalls(const std::function<void()> &launch,
                 const std::function<void()> &sync, const Options &opts) {
  for (int i = 0; i < opts.warmup; ++i)
    launch();
  sync();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < opts.iters; ++i)
    launch();
  sync();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count() /
         opts.iters;
}

void benchCompute(const Options &opts) {
  FILE *out = std::fopen(opts.computeOutput.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "error: cannot write '%s'\n",
                 opts.computeOutput.c_str());
    std::exit(1);
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  auto sync = [&]() { CUDA_CHECK(cudaStreamSynchronize(stream)); };

  std::fprintf(out, "# distir-microbench-cuda: GPU 0, GEMM dtype %s\n",
               opts.dtype.c_str());
  std::fprintf(out, "op_class,bytes,flops,seconds,kernel\n");

  // GEMMs.
  cudaDataType_t abType = CUDA_R_32F;
  size_t elementSize = 4;
  if (opts.dtype == "bf16") {
    abType = CUDA_R_16BF;
    elementSize = 2;
  } else if (opts.dtype == "f16") {
    abType = CUDA_R_16F;
    elementSize = 2;
  }
  std::vector<long> sizes =
      opts.quick ? std::vector<long>{256, 512, 1024}
                 : std::vector<long>{256, 512, 1024, 2048, 4096, 8192};
  std::vector<std::vector<long>> shapes;
  for (long s : sizes)
    shapes.push_back({s, s, s});
  shapes.push_back({sizes.back(), 128, sizes.back()});
  shapes.push_back({128, sizes.back(), 128});
  for (const std::vector<long> &shape : shapes) {
    long m = shape[0], k = shape[1], n = shape[2];
    void *a, *b, *c;
    CUDA_CHECK(cudaMalloc(&a, elementSize * m * k));
    CUDA_CHECK(cudaMalloc(&b, elementSize * k * n));
    CUDA_CHECK(cudaMalloc(&c, elementSize * m * n));
    CUDA_CHECK(cudaMemset(a, 0, elementSize * m * k));
    CUDA_CHECK(cudaMemset(b, 0, elementSize * k * n));
    float alpha = 1, beta = 0;
    auto launch = [&]() {
      if (abType == CUDA_R_32F)
        CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k,
                                 &alpha, static_cast<float *>(b), n,
                                 static_cast<float *>(a), k, &beta,
                                 static_cast<float *>(c), n));
      else
        CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k,
                                  &alpha, b, abType, n, a, abType, k, &beta, c,
                                  abType, n, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
    };
    double seconds = timeCalls(launch, sync, opts);
    double bytes = double(elementSize) * (m * k + k * n + 2 * m * n);
    std::fprintf(out, "matmul,%.17g,%.17g,%.9e,gemm_%s_%ldx%ldx%ld\n", bytes,
                 2.0 * m * n * k, seconds, opts.dtype.c_str(), m, k, n);
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(c));
  }

  // Vector kernels in f32.
  for (long len = 1 << 12; len <= (opts.quick ? 1 << 20 : 1 << 28); len *= 4) {
    float *x, *y, *result;
    CUDA_CHECK(cudaMalloc(&x, 4 * len));
    CUDA_CHECK(cudaMalloc(&y, 4 * len));
    CUDA_CHECK(cudaMalloc(&result, 4));
    CUDA_CHECK(cudaMemset(x, 0, 4 * len));
    CUDA_CHECK(cudaMemset(y, 0, 4 * len));
    float alpha = 1;
    double seconds = timeCalls(
        [&]() {
          CUBLAS_CHECK(
              cublasSaxpy(handle, static_cast<int>(len), &alpha, x, 1, y, 1));
        },
        sync, opts);
    std::fprintf(out, "elementwise,%.17g,%.17g,%.9e,saxpy_%ld\n", 12.0 * len,
                 2.0 * len, seconds, len);
    CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
    seconds = timeCalls(
        [&]() {
          CUBLAS_CHECK(
              cublasSdot(handle, static_cast<int>(len), x, 1, y, 1, result));
        },
        sync, opts);
    CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
    std::fprintf(out, "reduction,%.17g,%.17g,%.9e,sdot_%ld\n", 8.0 * len + 8,
                 2.0 * len, seconds, len);
    seconds = timeCalls(
        [&]() {
          CUDA_CHECK(
              cudaMemcpyAsync(y, x, 4 * len, cudaMemcpyDeviceToDevice, stream));
        },
        sync, opts);
    std::fprintf(out, "copy,%.17g,%.17g,%.9e,memcpy_%ld\n", 8.0 * len,
                 1.0 * len, seconds, len);
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(y));
    CUDA_CHECK(cudaFree(result));
  }
  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));
  std::fclose(out);
}

enum class Kind {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  Reduce,
  AllToAll,
  SendRecv
};

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::AllReduce:
    return "all_reduce";
  case Kind::AllGather:
    return "all_gather";
  case Kind::ReduceScatter:
    return "reduce_scatter";
  case Kind::Broadcast:
    return "broadcast";
  case Kind::Reduce:
    return "reduce";
  case Kind::AllToAll:
    return "alltoall";
  case Kind::SendRecv:
    return "sendrecv";
  }
  return "?";
}

/// One call of `kind` on every rank of the group; `bytes` follows the
/// nccl-tests convention (per-rank buffer for all_reduce, broadcast, reduce
/// and sendrecv; the whole gathered/scattered buffer otherwise).
void launchCollective(Kind kind, size_t bytes, int n,
                      const std::vector<ncclComm_t> &comms,
                      const std::vector<cudaStream_t> &streams,
                      const std::vector<float *> &send,
                      const std::vector<float *> &recv) {
  size_t count = bytes / sizeof(float);
  size_t chunk = count / n;
  NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    switch (kind) {
    case Kind::AllReduce:
      NCCL_CHECK(ncclAllReduce(send[r], recv[r], count, ncclFloat, ncclSum,
                               comms[r], streams[r]));
      break;
    case Kind::AllGather:
      NCCL_CHECK(ncclAllGather(send[r], recv[r], chunk, ncclFloat, comms[r],
                               streams[r]));
      break;
    case Kind::ReduceScatter:
      NCCL_CHECK(ncclReduceScatter(send[r], recv[r], chunk, ncclFloat, ncclSum,
                                   comms[r], streams[r]));
      break;
    case Kind::Broadcast:
      NCCL_CHECK(ncclBroadcast(send[r], recv[r], count, ncclFloat, 0, comms[r],
                               streams[r]));
      break;
    case Kind::Reduce:
      NCCL_CHECK(ncclReduce(send[r], recv[r], count, ncclFloat, ncclSum, 0,
                            comms[r], streams[r]));
      break;
    case Kind::AllToAll:
      for (int peer = 0; peer < n; ++peer) {
        NCCL_CHECK(ncclSend(send[r] + peer * chunk, chunk, ncclFloat, peer,
                            comms[r], streams[r]));
        NCCL_CHECK(ncclRecv(recv[r] + peer * chunk, chunk, ncclFloat, peer,
                            comms[r], streams[r]));
      }
      break;
    case Kind::SendRecv:
      NCCL_CHECK(ncclSend(send[r], count, ncclFloat, (r + 1) % n, comms[r],
                          streams[r]));
      NCCL_CHECK(ncclRecv(recv[r], count, ncclFloat, (r + n - 1) % n, comms[r],
                          streams[r]));
      break;
    }
  }
  NCCL_CHECK(ncclGroupEnd());
}

void benchCollectives(const Options &opts, int gpus) {
  FILE *out = std::fopen(opts.collectiveOutput.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "error: cannot write '%s'\n",
                 opts.collectiveOutput.c_str());
    std::exit(1);
  }
  std::fprintf(out, "# distir-microbench-cuda: NCCL %d.%d.%d, one process\n",
               NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
  std::fprintf(out, "kind,group_size,bytes,seconds\n");
  std::vector<int> groupSizes;
  for (int n = 2; n <= gpus; n *= 2)
    groupSizes.push_back(n);
  if (gpus >= 2 && groupSizes.back() != gpus)
    groupSizes.push_back(gpus);
  size_t maxBytes =
      opts.quick ? std::min<size_t>(opts.maxBytes, 1 << 24) : opts.maxBytes;
  const Kind kinds[] = {Kind::AllReduce, Kind::AllGather, Kind::ReduceScatter,
                        Kind::Broadcast, Kind::Reduce,    Kind::AllToAll,
                        Kind::SendRecv};
  for (int n : groupSizes) {
    std::vector<int> devices(n);
    for (int r = 0; r < n; ++r)
      devices[r] = r;
    std::vector<ncclComm_t> comms(n);
    NCCL_CHECK(ncclCommInitAll(comms.data(), n, devices.data()));
    std::vector<cudaStream_t> streams(n);
    std::vector<float *> send(n), recv(n);
    for (int r = 0; r < n; ++r) {
      CUDA_CHECK(cudaSetDevice(r));
      CUDA_CHECK(cudaStreamCreate(&streams[r]));
      CUDA_CHECK(cudaMalloc(&send[r], maxBytes));
      CUDA_CHECK(cudaMalloc(&recv[r], maxBytes));
      CUDA_CHECK(cudaMemset(send[r], 0, maxBytes));
    }
    auto sync = [&]() {
      for (int r = 0; r < n; ++r) {
        CUDA_CHECK(cudaSetDevice(r));
        CUDA_CHECK(cudaStreamSynchronize(streams[r]));
      }
    };
    for (Kind kind : kinds) {
      // Whole elements per rank chunk: multiples of 4 * n bytes.
      size_t unit = sizeof(float) * n;
      for (size_t bytes = 1024; bytes <= maxBytes; bytes *= 4) {
        size_t rounded = std::max(unit, bytes / unit * unit);
        double seconds = timeCalls(
            [&]() {
              launchCollective(kind, rounded, n, comms, streams, send, recv);
            },
            sync, opts);
        std::fprintf(out, "%s,%d,%zu,%.9e\n", kindName(kind), n, rounded,
                     seconds);
      }
    }
    for (int r = 0; r < n; ++r) {
      CUDA_CHECK(cudaSetDevice(r));
      CUDA_CHECK(cudaFree(send[r]));
      CUDA_CHECK(cudaFree(recv[r]));
      CUDA_CHECK(cudaStreamDestroy(streams[r]));
      NCCL_CHECK(ncclCommDestroy(comms[r]));
    }
  }
  std::fclose(out);
}

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [--compute FILE.csv] [--collective FILE.csv] "
               "[--dtype f32|bf16|f16] [--max-gpus N] [--max-bytes B] "
               "[--iters N] [--quick]\n",
               argv0);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto take = [&]() {
      ++i;
      return v;
    };
    if (arg == "--compute" && v) {
      opts.computeOutput = take();
    } else if (arg == "--collective" && v) {
      opts.collectiveOutput = take();
    } else if (arg == "--dtype" && v) {
      opts.dtype = take();
      if (opts.dtype != "f32" && opts.dtype != "bf16" && opts.dtype != "f16")
        return usage(argv[0]);
    } else if (arg == "--max-gpus" && v) {
      opts.maxGpus = std::atoi(take());
    } else if (arg == "--max-bytes" && v) {
      opts.maxBytes = std::strtoull(take(), nullptr, 10);
    } else if (arg == "--iters" && v) {
      opts.iters = std::max(1, std::atoi(take()));
    } else if (arg == "--quick") {
      opts.quick = true;
      opts.iters = 5;
      opts.warmup = 2;
    } else {
      return usage(argv[0]);
    }
  }
  // Without a GPU the runtime answers with errors such as "CUDA driver
  // version is insufficient": say what that means here.
  int gpus = 0;
  cudaError_t counted = cudaGetDeviceCount(&gpus);
  if (counted != cudaSuccess || gpus < 1) {
    std::fprintf(stderr, "error: no CUDA device%s%s%s\n",
                 counted != cudaSuccess ? " (the CUDA runtime says: " : "",
                 counted != cudaSuccess ? cudaGetErrorString(counted) : "",
                 counted != cudaSuccess ? ")" : "");
    return 1;
  }
  if (opts.maxGpus > 0)
    gpus = std::min(gpus, opts.maxGpus);
  benchCompute(opts);
  std::fprintf(stderr, "wrote %s\n", opts.computeOutput.c_str());
  if (gpus >= 2) {
    benchCollectives(opts, gpus);
    std::fprintf(stderr, "wrote %s\n", opts.collectiveOutput.c_str());
  } else {
    std::fprintf(stderr, "one GPU: no collectives measured\n");
  }
  return 0;
}
