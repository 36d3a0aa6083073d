/*===- DistIRNCCLRuntime.h - C shim called by convert-dist-to-nccl -*- C
-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The functions that per-rank programs lowered with convert-dist-to-nccl
// call. Pointers travel as int64_t (the pass takes them with
// memref.extract_aligned_pointer_as_index); counts are element counts;
// `dtype` and `op` are ncclDataType_t and ncclRedOp_t values; `comm` is a
// handle returned by distir_nccl_group_comm.
//
// Processes are started by mpirun: the world communicator is created on the
// first call with ncclCommInitRank, with the unique id made by rank 0 and
// broadcast over MPI; each process uses GPU (local rank mod GPU count). A
// process started without a launcher is the only rank and uses no MPI.
// Buffers in device or managed memory are used in place; host buffers (the
// CPU-compiled compute of distir's rank programs) are staged through device
// scratch buffers. When the program links DistIRCUDARuntime (device=gpu
// code), its GPU and stream are used, so collectives are queued behind the
// kernels that produce their operands. Every call completes before it
// returns (stream synchronized), which keeps dist-to-rank's matched program
// order deadlock-free. A failing CUDA/NCCL/MPI call prints one line naming
// the call and the reason and aborts the job (there is no caller to return
// to).
//
//===----------------------------------------------------------------------===*/

#ifndef DISTIR_RUNTIME_NCCL_DISTIRNCCLRUNTIME_H
#define DISTIR_RUNTIME_NCCL_DISTIRNCCLRUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// This process's rank in the world communicator (initializes it).
int32_t distir_nccl_world_rank(void);
/// Number of processes in the world communicator (initializes it).
int32_t distir_nccl_world_size(void);
/// Communicator of the group `ranks[0..n)` (world ranks; communicator rank
/// i is ranks[i]). The first call for a group runs ncclCommSplit of the
/// world communicator, collective over all ranks in the same order of
/// groups (non-members get 0); later calls return the cached handle.
int64_t distir_nccl_group_comm(const int64_t *ranks, int64_t n);
/// Number of ncclCommSplit calls made so far by this process.
int64_t distir_nccl_comm_splits(void);

/// Point to point on the world communicator (global ranks).
void distir_nccl_send(int64_t buffer, int64_t count, int32_t dtype,
                      int32_t peer);
void distir_nccl_recv(int64_t buffer, int64_t count, int32_t dtype,
                      int32_t peer);

/// Collectives on a split communicator; roots are ranks in it.
void distir_nccl_all_reduce(int64_t comm, int64_t in, int64_t out,
                            int64_t count, int32_t dtype, int32_t op);
/// `recvCount` elements per member.
void distir_nccl_reduce_scatter(int64_t comm, int64_t in, int64_t out,
                                int64_t recvCount, int32_t dtype, int32_t op);
/// `sendCount` elements per member.
void distir_nccl_all_gather(int64_t comm, int64_t in, int64_t out,
                            int64_t sendCount, int32_t dtype);
/// `count` elements to and from each member.
void distir_nccl_all_to_all(int64_t comm, int64_t in, int64_t out,
                            int64_t count, int32_t dtype);
/// `in` is read on the root only (0 elsewhere).
void distir_nccl_broadcast(int64_t comm, int64_t in, int64_t out, int64_t count,
                           int32_t dtype, int32_t root);
/// `out` is written on the root only (0 elsewhere).
void distir_nccl_reduce(int64_t comm, int64_t in, int64_t out, int64_t count,
                        int32_t dtype, int32_t op, int32_t root);
/// `sendCount` elements from each member into the root's `out`.
void distir_nccl_gather(int64_t comm, int64_t in, int64_t out,
                        int64_t sendCount, int32_t dtype, int32_t root);
/// `recvCount` elements from the root's `in` to each member.
void distir_nccl_scatter(int64_t comm, int64_t in, int64_t out,
                         int64_t recvCount, int32_t dtype, int32_t root);

/// Destroys the communicators and frees scratch memory (also registered with
/// atexit on initialization).
void distir_nccl_finalize(void);

#ifdef __cplusplus
}
#endif

#endif /* DISTIR_RUNTIME_NCCL_DISTIRNCCLRUNTIME_H */
