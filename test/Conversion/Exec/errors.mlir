// Set-up errors end every rank cleanly (no hang) with a clear message.
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 3 distir-exec %s --random-inputs 1 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %s --input 0=%t.nonexistent.npy --random-inputs 1 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %S/Inputs/unsupported.mlir --random-inputs 1 2>&1 | FileCheck %s --check-prefix=NOLOWER
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %S/Inputs/external-call.mlir --random-inputs 1 2>&1 | FileCheck %s --check-prefix=NOCALL

// Options are read before MPI starts: --version and a wrong flag end each
// rank without Open MPI's complaint about a process that left before
// MPI_Finalize.
// RUN: mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec --version 2>&1 | FileCheck %s --check-prefix=VERSION --implicit-check-not=improperly
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec --batch 4 2>&1 | FileCheck %s --check-prefix=FLAG --implicit-check-not=improperly

// VERSION-COUNT-2: LLVM version
// FLAG: distir-exec: Unknown command line argument '--batch'
// COUNT: error: rank {{[0-2]}}: @f runs on 2 devices but mpirun started 3 processes; run it with mpirun -np 2
// MISSING: error: rank {{[01]}}: missing input for argument #0 (%arg0) of @f; pass --input NAME=file.npy, --weights-from MODEL or --random-inputs SEED
// NOFILE: error: rank {{[01]}}: input file '{{.*}}nonexistent.npy' does not exist
// NOLOWER: error: rank {{[01]}}: 'mpi.comm_world' is not supported by distir-exec
// NOCALL: error: 'func.call' op calls @ext, which has no body; a distributed program can only call functions that can be inlined into it

!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
func.func @f(%x: !t0) -> !t1 {
  %y = dist.send %x : !t0 -> !t1
  return %y : !t1
}
