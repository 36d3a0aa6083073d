//===- DistIRNCCLRuntime.cpp - C shim called by convert-dist-to-nccl ------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// See DistIRNCCLRuntime.h. State is per process: the world communicator, the
// split communicators (owned here, handed out as integers), one CUDA stream
// and two growable device scratch buffers for host-resident operands.
//
//===----------------------------------------------------------------------===//

#include "DistIRNCCLRuntime.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

// Defined by DistIRCUDARuntime when a device=gpu program links it: kernels
// and collectives then share that library's GPU and stream.
extern "C" void *distir_cuda_stream(void) __attribute__((weak));
extern "C" int32_t distir_cuda_device(void) __attribute__((weak));

namespace {

struct State {
  bool initialized = false;
  bool ownsMPI = false; // MPI_Init was called here, so finalize calls
                        // MPI_Finalize.
  bool usesMPI = false; // False for a process started without a launcher.
  bool ownsStream = false;
  int rank = 0;
  int size = 1;
  ncclComm_t world = nullptr;
  std::vector<ncclComm_t> splits;
  /// Handle (index in `splits` + 1, 0 for non-members) of each group asked
  /// for; a group is split once for the life of the process.
  std::map<std::vector<int64_t>, int64_t> groups;
  int64_t splitCalls = 0;
  cudaStream_t stream = nullptr;
  void *scratch[2] = {nullptr, nullptr};
  size_t scratchBytes[2] = {0, 0};
};

State &state() {
  static State s;
  return s;
}

[[noreturn]] void fail(const char *call, const char *reason) {
  std::fprintf(stderr, "error: distir-nccl rank %d: %s failed: %s\n",
               state().rank, call, reason);
  int mpiUp = 0;
  if (state().usesMPI)
    MPI_Initialized(&mpiUp);
  if (mpiUp)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void check(cudaError_t e, const char *call) {
  if (e != cudaSuccess)
    fail(call, cudaGetErrorString(e));
}
void check(ncclResult_t e, const char *call) {
  if (e != ncclSuccess)
    fail(call, ncclGetErrorString(e));
}
void check(int mpiError, const char *call) {
  if (mpiError != MPI_SUCCESS)
    fail(call, "MPI error");
}

void atExit() { distir_nccl_finalize(); }

/// Whether a launcher (mpirun, srun, hydra) started this process.
bool launchedByMPI() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name))
      return true;
  return false;
}

State &init() {
  State &s = state();
  if (s.initialized)
    return s;
  // A process started without a launcher (and without MPI initialized by
  // its program) is the only rank: no MPI is needed then.
  int mpiUp = 0;
  MPI_Initialized(&mpiUp);
  s.usesMPI = mpiUp || launchedByMPI();
  if (s.usesMPI && !mpiUp) {
    check(MPI_Init(nullptr, nullptr), "MPI_Init");
    s.ownsMPI = true;
  }
  int localRank = 0;
  if (s.usesMPI) {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &s.rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &s.size), "MPI_Comm_size");
    // One GPU per process: the local rank (processes sharing a node) picks
    // it.
    MPI_Comm node;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, s.rank,
                              MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    check(MPI_Comm_rank(node, &localRank), "MPI_Comm_rank");
    MPI_Comm_free(&node);
  }
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices == 0)
    fail("cudaGetDeviceCount", "no CUDA device");
  if (distir_cuda_stream && distir_cuda_device) {
    // GPU compute: the compute runtime's device and stream.
    check(cudaSetDevice(distir_cuda_device()), "cudaSetDevice");
    s.stream = static_cast<cudaStream_t>(distir_cuda_stream());
  } else {
    check(cudaSetDevice(localRank % devices), "cudaSetDevice");
    check(cudaStreamCreate(&s.stream), "cudaStreamCreate");
    s.ownsStream = true;
  }
  ncclUniqueId id;
  if (s.rank == 0)
    check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  if (s.usesMPI)
    check(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
  check(ncclCommInitRank(&s.world, s.size, id, s.rank), "ncclCommInitRank");
  s.initialized = true;
  std::atexit(atExit);
  return s;
}

size_t typeSize(int32_t dtype) {
  switch (static_cast<ncclDataType_t>(dtype)) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  default:
    fail("distir_nccl", "unsupported ncclDataType_t");
  }
}

ncclComm_t comm(int64_t handle) {
  State &s = init();
  if (handle <= 0 || size_t(handle) > s.splits.size() || !s.splits[handle - 1])
    fail("distir_nccl", "invalid communicator handle");
  return s.splits[handle - 1];
}

bool onDevice(const void *p) {
  cudaPointerAttributes attributes;
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    (void)cudaGetLastError(); // Unregistered host memory on old runtimes.
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice ||
         attributes.type == cudaMemoryTypeManaged;
}

/// A device view of a caller's buffer: the buffer itself when it is device
/// memory, otherwise scratch slot `slot` (filled from the host when `load`).
/// `finish` copies scratch back to the host buffer when it is an output.
struct DeviceBuffer {
  void *host = nullptr;
  void *device = nullptr;
  size_t bytes = 0;

  DeviceBuffer(int64_t pointer, size_t bytes, int slot, bool load)
      : bytes(bytes) {
    void *p = reinterpret_cast<void *>(pointer);
    if (!p || onDevice(p)) {
      device = p;
      return;
    }
    State &s = state();
    host = p;
    if (s.scratchBytes[slot] < bytes) {
      if (s.scratch[slot])
        check(cudaFree(s.scratch[slot]), "cudaFree");
      check(cudaMalloc(&s.scratch[slot], bytes), "cudaMalloc");
      s.scratchBytes[slot] = bytes;
    }
    device = s.scratch[slot];
    if (load)
      check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice,
                            s.stream),
            "cudaMemcpyAsync");
  }
  void store() {
    if (host)
      check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                            state().stream),
            "cudaMemcpyAsync");
  }
};

/// Runs `call(src, dst)` on device views of the caller's input (`inBytes`,
/// loaded) and output (`outBytes`, copied back), then waits for the stream:
/// every shim call completes before it returns.
template <typename Call>
void staged(int64_t in, size_t inBytes, int64_t out, size_t outBytes,
            Call call) {
  DeviceBuffer src(in, inBytes, 0, true), dst(out, outBytes, 1, false);
  call(src.device, dst.device);
  dst.store();
  check(cudaStreamSynchronize(state().stream), "cudaStreamSynchronize");
}

int commRank(ncclComm_t c) {
  int r = 0;
  check(ncclCommUserRank(c, &r), "ncclCommUserRank");
  return r;
}
int commSize(ncclComm_t c) {
  int n = 0;
  check(ncclCommCount(c, &n), "ncclCommCount");
  return n;
}

} // namespace

extern "C" {

int32_t distir_nccl_world_rank(void) { return init().rank; }
int32_t distir_nccl_world_size(void) { return init().size; }

int64_t distir_nccl_group_comm(const int64_t *ranks, int64_t n) {
  State &s = init();
  std::vector<int64_t> group(ranks, ranks + n);
  auto it = s.groups.find(group);
  if (it != s.groups.end())
    return it->second;
  int color = NCCL_SPLIT_NOCOLOR, key = 0;
  for (int64_t i = 0; i < n; ++i)
    if (ranks[i] == s.rank) {
      color = 0;
      key = static_cast<int>(i);
    }
  ncclComm_t c = nullptr;
  check(ncclCommSplit(s.world, color, key, &c, nullptr), "ncclCommSplit");
  ++s.splitCalls;
  int64_t handle = 0;
  if (color != NCCL_SPLIT_NOCOLOR) {
    s.splits.push_back(c);
    handle = int64_t(s.splits.size());
  }
  s.groups.emplace(std::move(group), handle);
  return handle;
}

int64_t distir_nccl_comm_splits(void) { return state().splitCalls; }

void distir_nccl_send(int64_t buffer, int64_t count, int32_t dtype,
                      int32_t peer) {
  State &s = init();
  staged(buffer, count * typeSize(dtype), 0, 0, [&](void *in, void *) {
    check(ncclGroupStart(), "ncclGroupStart");
    check(ncclSend(in, count, ncclDataType_t(dtype), peer, s.world, s.stream),
          "ncclSend");
    check(ncclGroupEnd(), "ncclGroupEnd");
  });
}

void distir_nccl_recv(int64_t buffer, int64_t count, int32_t dtype,
                      int32_t peer) {
  State &s = init();
  staged(0, 0, buffer, count * typeSize(dtype), [&](void *, void *out) {
    check(ncclGroupStart(), "ncclGroupStart");
    check(ncclRecv(out, count, ncclDataType_t(dtype), peer, s.world, s.stream),
          "ncclRecv");
    check(ncclGroupEnd(), "ncclGroupEnd");
  });
}

void distir_nccl_all_reduce(int64_t handle, int64_t in, int64_t out,
                            int64_t count, int32_t dtype, int32_t op) {
  ncclComm_t c = comm(handle);
  size_t bytes = count * typeSize(dtype);
  staged(in, bytes, out, bytes, [&](void *src, void *dst) {
    check(ncclAllReduce(src, dst, count, ncclDataType_t(dtype), ncclRedOp_t(op),
                        c, state().stream),
          "ncclAllReduce");
  });
}

void distir_nccl_reduce_scatter(int64_t handle, int64_t in, int64_t out,
                                int64_t recvCount, int32_t dtype, int32_t op) {
  ncclComm_t c = comm(handle);
  size_t bytes = recvCount * typeSize(dtype);
  staged(in, bytes * commSize(c), out, bytes, [&](void *src, void *dst) {
    check(ncclReduceScatter(src, dst, recvCount, ncclDataType_t(dtype),
                            ncclRedOp_t(op), c, state().stream),
          "ncclReduceScatter");
  });
}

void distir_nccl_all_gather(int64_t handle, int64_t in, int64_t out,
                            int64_t sendCount, int32_t dtype) {
  ncclComm_t c = comm(handle);
  size_t bytes = sendCount * typeSize(dtype);
  staged(in, bytes, out, bytes * commSize(c), [&](void *src, void *dst) {
    check(ncclAllGather(src, dst, sendCount, ncclDataType_t(dtype), c,
                        state().stream),
          "ncclAllGather");
  });
}

void distir_nccl_all_to_all(int64_t handle, int64_t in, int64_t out,
                            int64_t count, int32_t dtype) {
  ncclComm_t c = comm(handle);
  int n = commSize(c);
  size_t bytes = count * typeSize(dtype);
  staged(in, bytes * n, out, bytes * n, [&](void *src, void *dst) {
    check(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < n; ++peer) {
      check(ncclSend(static_cast<char *>(src) + peer * bytes, count,
                     ncclDataType_t(dtype), peer, c, state().stream),
            "ncclSend");
      check(ncclRecv(static_cast<char *>(dst) + peer * bytes, count,
                     ncclDataType_t(dtype), peer, c, state().stream),
            "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  });
}

void distir_nccl_broadcast(int64_t handle, int64_t in, int64_t out,
                           int64_t count, int32_t dtype, int32_t root) {
  ncclComm_t c = comm(handle);
  size_t bytes = count * typeSize(dtype);
  staged(in, bytes, out, bytes, [&](void *src, void *dst) {
    check(ncclBroadcast(src, dst, count, ncclDataType_t(dtype), root, c,
                        state().stream),
          "ncclBroadcast");
  });
}

void distir_nccl_reduce(int64_t handle, int64_t in, int64_t out, int64_t count,
                        int32_t dtype, int32_t op, int32_t root) {
  ncclComm_t c = comm(handle);
  size_t bytes = count * typeSize(dtype);
  staged(in, bytes, out, bytes, [&](void *src, void *dst) {
    check(ncclReduce(src, dst, count, ncclDataType_t(dtype), ncclRedOp_t(op),
                     root, c, state().stream),
          "ncclReduce");
  });
}

void distir_nccl_gather(int64_t handle, int64_t in, int64_t out,
                        int64_t sendCount, int32_t dtype, int32_t root) {
  ncclComm_t c = comm(handle);
  int n = commSize(c), self = commRank(c);
  size_t bytes = sendCount * typeSize(dtype);
  staged(
      in, bytes, out, self == root ? bytes * n : 0, [&](void *src, void *dst) {
        check(ncclGroupStart(), "ncclGroupStart");
        check(ncclSend(src, sendCount, ncclDataType_t(dtype), root, c,
                       state().stream),
              "ncclSend");
        if (self == root)
          for (int peer = 0; peer < n; ++peer)
            check(ncclRecv(static_cast<char *>(dst) + peer * bytes, sendCount,
                           ncclDataType_t(dtype), peer, c, state().stream),
                  "ncclRecv");
        check(ncclGroupEnd(), "ncclGroupEnd");
      });
}

void distir_nccl_scatter(int64_t handle, int64_t in, int64_t out,
                         int64_t recvCount, int32_t dtype, int32_t root) {
  ncclComm_t c = comm(handle);
  int n = commSize(c), self = commRank(c);
  size_t bytes = recvCount * typeSize(dtype);
  staged(
      in, self == root ? bytes * n : 0, out, bytes, [&](void *src, void *dst) {
        check(ncclGroupStart(), "ncclGroupStart");
        if (self == root)
          for (int peer = 0; peer < n; ++peer)
            check(ncclSend(static_cast<char *>(src) + peer * bytes, recvCount,
                           ncclDataType_t(dtype), peer, c, state().stream),
                  "ncclSend");
        check(ncclRecv(dst, recvCount, ncclDataType_t(dtype), root, c,
                       state().stream),
              "ncclRecv");
        check(ncclGroupEnd(), "ncclGroupEnd");
      });
}

void distir_nccl_finalize(void) {
  State &s = state();
  if (!s.initialized)
    return;
  s.initialized = false;
  for (ncclComm_t c : s.splits)
    if (c)
      ncclCommDestroy(c);
  s.splits.clear();
  s.groups.clear();
  if (s.world)
    ncclCommDestroy(s.world);
  s.world = nullptr;
  for (int slot = 0; slot < 2; ++slot)
    if (s.scratch[slot])
      cudaFree(s.scratch[slot]);
  if (s.stream && s.ownsStream)
    cudaStreamDestroy(s.stream);
  s.stream = nullptr;
  int mpiDown = 0;
  if (s.usesMPI)
    MPI_Finalized(&mpiDown);
  if (s.ownsMPI && !mpiDown)
    MPI_Finalize();
}

} // extern "C"
