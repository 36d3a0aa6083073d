/*===- DistIRMPIRuntime.h - Runtime of convert-dist-to-mpi programs -*- C
-*-===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// What per-rank programs lowered with convert-dist-to-mpi call besides MPI
// itself: the communicator of a device group. MPI_Comm_split is collective
// and costly, so the runtime splits the world once per group and keeps the
// communicator until MPI_Finalize (freed there, through a delete callback on
// MPI_COMM_SELF); a program that runs its step many times reuses them.
// Handles are returned as int64_t, the integer convert-mpi-to-llvm makes of
// an !mpi.comm (OpenMPI: the pointer; MPICH: the int handle).
//
//===----------------------------------------------------------------------===*/

#ifndef DISTIR_RUNTIME_MPI_DISTIRMPIRUNTIME_H
#define DISTIR_RUNTIME_MPI_DISTIRMPIRUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Communicator of the group `ranks[0..n)` (world ranks, group order: rank
/// i of the communicator is ranks[i]). The first call for a group is
/// collective over MPI_COMM_WORLD (every rank calls it, in the same order
/// of groups; non-members get MPI_COMM_NULL); later calls return the cached
/// communicator without communicating.
int64_t distir_mpi_group_comm(const int64_t *ranks, int64_t n);

/// Number of MPI_Comm_split calls made so far by this process.
int64_t distir_mpi_comm_splits(void);

/// Number of communicators currently cached (freed at MPI_Finalize).
int64_t distir_mpi_cached_comms(void);

#ifdef __cplusplus
}
#endif

#endif /* DISTIR_RUNTIME_MPI_DISTIRMPIRUNTIME_H */
