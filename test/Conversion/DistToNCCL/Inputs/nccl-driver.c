// Runs the NCCL-lowered @step of collectives.mlir on this MPI process's rank
// and checks the results it owns; prints one line per rank.
#include <stdint.h>
#include <stdio.h>

#include "DistIRNCCLRuntime.h"

typedef struct {
  float *allocated;
  float *aligned;
  int64_t offset;
  int64_t sizes[1];
  int64_t strides[1];
} MemRef1D;

typedef struct {
  MemRef1D reduced0, reduced1, gathered0, gathered1, received1;
} Results;

void _mlir_ciface_step(Results *results, MemRef1D *a0, MemRef1D *a1);

static int expect(const char *what, const MemRef1D *m, const float *want,
                  int64_t n) {
  if (m->sizes[0] != n) {
    printf("%s: size %ld, want %ld\n", what, (long)m->sizes[0], (long)n);
    return 1;
  }
  for (int64_t i = 0; i < n; ++i)
    if (m->aligned[m->offset + i * m->strides[0]] != want[i]) {
      printf("%s[%ld] = %g, want %g\n", what, (long)i,
             m->aligned[m->offset + i * m->strides[0]], want[i]);
      return 1;
    }
  return 0;
}

int main(void) {
  int rank = distir_nccl_world_rank();
  if (distir_nccl_world_size() != 2) {
    printf("error: run with mpirun -np 2\n");
    return 1;
  }
  float data[4];
  for (int i = 0; i < 4; ++i)
    data[i] = (float)(rank + 1);
  MemRef1D mine = {data, data, 0, {4}, {1}};
  Results r;
  _mlir_ciface_step(&r, &mine, &mine);
  const float sum[4] = {3, 3, 3, 3};
  const float gathered[8] = {1, 1, 1, 1, 2, 2, 2, 2};
  const float sent[4] = {1, 1, 1, 1};
  int bad = 0;
  if (rank == 0) {
    bad |= expect("all_reduce", &r.reduced0, sum, 4);
    bad |= expect("all_gather", &r.gathered0, gathered, 8);
  } else {
    bad |= expect("all_reduce", &r.reduced1, sum, 4);
    bad |= expect("all_gather", &r.gathered1, gathered, 8);
    bad |= expect("send", &r.received1, sent, 4);
  }
  printf("rank %d: %s\n", rank, bad ? "MISMATCH" : "OK");
  distir_nccl_finalize();
  return bad;
}
