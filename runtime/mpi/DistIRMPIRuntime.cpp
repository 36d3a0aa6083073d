//===- DistIRMPIRuntime.cpp - Cached MPI communicators --------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//

#include "DistIRMPIRuntime.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <type_traits>
#include <vector>

namespace {

struct Cache {
  std::map<std::vector<int64_t>, MPI_Comm> comms;
  int64_t splits = 0;
  int keyval = MPI_KEYVAL_INVALID;
};

Cache &cache() {
  static Cache c;
  return c;
}

/// OpenMPI's handles are pointers, MPICH's ints (sign-extended, as the
/// lowering reads them back).
template <typename Comm> int64_t toHandle(Comm comm) {
  if constexpr (std::is_pointer_v<Comm>)
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(comm));
  else
    return static_cast<int64_t>(comm);
}

/// MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
/// works: the cached communicators are freed there.
int freeAtFinalize(MPI_Comm, int, void *, void *) {
  Cache &c = cache();
  for (auto &[group, comm] : c.comms)
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  c.comms.clear();
  return MPI_SUCCESS;
}

[[noreturn]] void fail(int rc, const char *call) {
  char reason[MPI_MAX_ERROR_STRING] = "unknown error";
  int length = 0;
  MPI_Error_string(rc, reason, &length);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "error: distir-mpi rank %d: %s failed: %s\n", rank, call,
               reason);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

} // namespace

extern "C" {

int64_t distir_mpi_group_comm(const int64_t *ranks, int64_t n) {
  Cache &c = cache();
  std::vector<int64_t> group(ranks, ranks + n);
  auto it = c.comms.find(group);
  if (it != c.comms.end())
    return toHandle(it->second);
  if (c.keyval == MPI_KEYVAL_INVALID) {
    int rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, freeAtFinalize,
                                    &c.keyval, nullptr);
    if (rc == MPI_SUCCESS)
      rc = MPI_Comm_set_attr(MPI_COMM_SELF, c.keyval, nullptr);
    if (rc != MPI_SUCCESS)
      fail(rc, "MPI_Comm_create_keyval");
  }
  int self = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &self);
  int color = MPI_UNDEFINED, key = 0;
  for (int64_t i = 0; i < n; ++i)
    if (ranks[i] == self) {
      color = 0;
      key = static_cast<int>(i);
    }
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_split(MPI_COMM_WORLD, color, key, &comm);
  if (rc != MPI_SUCCESS)
    fail(rc, "MPI_Comm_split");
  ++c.splits;
  c.comms.emplace(std::move(group), comm);
  return toHandle(comm);
}

int64_t distir_mpi_comm_splits(void) { return cache().splits; }

int64_t distir_mpi_cached_comms(void) {
  return static_cast<int64_t>(cache().comms.size());
}

} // extern "C"
