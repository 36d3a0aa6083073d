// Every communication kind on four ranks, including a subgroup all-reduce
// (its own communicator) and a send chain, against the reference executor.
// RUN: rm -rf %t && mkdir -p %t
// RUN: distir-run %s --random-inputs 11 --output-dir %t/ref > /dev/null
// RUN: mpirun --allow-run-as-root --oversubscribe -np 4 distir-exec %s --random-inputs 11 --output-dir %t/mpi --timeout 60 > %t/log
// RUN: %python %S/Inputs/compare.py %t/ref %t/mpi | FileCheck %s
// CHECK: OK 18 outputs

!a0 = tensor<4x6xf32, #dist.device<0>>
!a1 = tensor<4x6xf32, #dist.device<1>>
!a2 = tensor<4x6xf32, #dist.device<2>>
!a3 = tensor<4x6xf32, #dist.device<3>>
!g0 = tensor<4x24xf32, #dist.device<0>>
!g1 = tensor<4x24xf32, #dist.device<1>>
!g2 = tensor<4x24xf32, #dist.device<2>>
!g3 = tensor<4x24xf32, #dist.device<3>>
!s0 = tensor<1x6xf32, #dist.device<0>>
!s1 = tensor<1x6xf32, #dist.device<1>>
!s2 = tensor<1x6xf32, #dist.device<2>>
!s3 = tensor<1x6xf32, #dist.device<3>>
!w0 = tensor<16x6xf32, #dist.device<0>>
!w2 = tensor<16x6xf32, #dist.device<2>>
!c0 = tensor<1x24xf32, #dist.device<0>>
!c1 = tensor<1x24xf32, #dist.device<1>>
!c2 = tensor<1x24xf32, #dist.device<2>>
!c3 = tensor<1x24xf32, #dist.device<3>>

func.func @main(%a: !a0, %b: !a1, %c: !a2, %d: !a3)
    -> (!a0, !a3, !a1, !a3, !g0, !g2, !s0, !s3, !a1, !a2, !s2, !w2, !a2,
        !c0, !c3, !a3, !a0, !a1) {
  %ar:4 = dist.all_reduce sum %a, %b, %c, %d : !a0, !a1, !a2, !a3
  %av:2 = dist.all_reduce avg %b, %d : !a1, !a3
  %ag:4 = dist.all_gather %ar#0, %b, %c, %av#1 dim 1 : !a0, !a1, !a2, !a3
  %rs:4 = dist.reduce_scatter max %a, %b, %c, %d dim 0 : !a0, !a1, !a2, !a3
  %bc:3 = dist.broadcast %c : !a2 -> !a1, !a2, !a0
  %sc:4 = dist.scatter %d dim 0 : !a3 -> !s2, !s0, !s1, !s3
  %ga = dist.gather %a, %b, %c, %d dim 0 : !a0, !a1, !a2, !a3 -> !w2
  %re = dist.reduce min %b, %c : !a1, !a2 -> !a2
  %aa:4 = dist.all_to_all %a, %b, %c, %d split_dim 0 concat_dim 1 : !a0, !a1, !a2, !a3
  %s1 = dist.send %a : !a0 -> !a1
  %s2 = dist.send %s1 : !a1 -> !a2
  %s3 = dist.send %s2 : !a2 -> !a3
  %back = dist.send %d : !a3 -> !a0
  %up = dist.send %c : !a2 -> !a1
  return %ar#0, %ar#3, %av#0, %av#1, %ag#0, %ag#2, %rs#0, %rs#3, %bc#0, %bc#1,
         %sc#0, %ga, %re, %aa#0, %aa#3, %s3, %back, %up
      : !a0, !a3, !a1, !a3, !g0, !g2, !s0, !s3, !a1, !a2, !s2, !w2, !a2,
        !c0, !c3, !a3, !a0, !a1
}
