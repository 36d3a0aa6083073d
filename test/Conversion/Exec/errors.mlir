// Set-up errors end every rank cleanly (no hang) with a clear message.
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 3 distir-exec %s --random-inputs 1 2>&1 | FileCheck %s --check-prefix=COUNT
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %s --input 0=%t.nonexistent.npy --random-inputs 1 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %S/Inputs/unsupported.mlir --random-inputs 1 2>&1 | FileCheck %s --check-prefix=NOLOWER
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 distir-exec %S/Inputs/external-call.mlir --random-inputs 1 2>&1 | FileCheck %s --check-prefix=NOCALL

// Options are read before MPI starts: --version and a wrong flag end each
// rank without Open MPI's complaint about a process that left before
// MPI_Finalize. Each rank's output is read from its own file: on the
// common stream the ranks' writes interleave ("DebianDebian LLVM version").
// RUN: rm -rf %t.version %t.flag
// RUN: mpirun --allow-run-as-root --oversubscribe -np 2 --output-filename %t.version distir-exec --version > %t.version.log 2>&1
// RUN: cat %t.version/1/rank.0/stdout %t.version/1/rank.1/stdout | FileCheck %s --check-prefix=VERSION
// RUN: not grep improperly %t.version.log
// RUN: not mpirun --allow-run-as-root --oversubscribe -np 2 --output-filename %t.flag distir-exec --batch 4 > %t.flag.log 2>&1
// RUN: cat %t.flag/1/rank.0/stderr %t.flag/1/rank.1/stderr | FileCheck %s --check-prefix=FLAG
// RUN: not grep improperly %t.flag.log

// VERSION-COUNT-2: LLVM version
// FLAG-COUNT-2: distir-exec: Unknown command line argument '--batch'
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
