// A program whose arguments carry dist.sharding annotations lowers to LLVM:
// the annotations stay on the buffers after bufferization and verify there
// (they used to fail the verifier as "a sharding needs a ranked tensor").
// RUN: distir-opt --dist-lower-to-llvm="comm=mpi" %s | FileCheck %s
// CHECK: llvm.func @main

!t0 = tensor<4x2xf32, #dist.device<0>>
!t1 = tensor<4x2xf32, #dist.device<1>>
func.func @main(%x: !t0 {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>}) -> !t1 {
  %y = dist.send %x : !t0 -> !t1
  return %y : !t1
}
