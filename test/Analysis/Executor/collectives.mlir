// Communication ops have their sequential meaning in the global view.
// RUN: %python %S/Inputs/npcheck.py collectives %s %t | FileCheck %s
// CHECK: collectives: ok (18 outputs)

!t0 = tensor<4x6xf32, #dist.device<0>>
!t1 = tensor<4x6xf32, #dist.device<1>>
!t2 = tensor<4x6xf32, #dist.device<2>>
!t3 = tensor<4x6xf32, #dist.device<3>>
!g0 = tensor<4x24xf32, #dist.device<0>>
!g1 = tensor<4x24xf32, #dist.device<1>>
!r0 = tensor<1x6xf32, #dist.device<0>>
!r3 = tensor<1x6xf32, #dist.device<3>>
!a0 = tensor<8x3xf32, #dist.device<0>>
!a1 = tensor<8x3xf32, #dist.device<1>>
!h1 = tensor<2x6xf32, #dist.device<1>>
!h0 = tensor<2x6xf32, #dist.device<0>>

func.func @collectives(%a: !t0, %b: !t1, %c: !t2, %d: !t3)
    -> (!t0, !t1, !t2, !t3, !t2, !t0, !g0, !g1, !r0, !r3, !a0, !a1, !t0, !t1,
        !h1, !t1, tensor<8x6xf32, #dist.device<0>>, !t0) {
  %s:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t2, !t3
  %m:4 = dist.all_reduce max %a, %b, %c, %d : !t0, !t1, !t2, !t3
  %v:4 = dist.all_reduce avg %a, %b, %c, %d : !t0, !t1, !t2, !t3
  %g:4 = dist.all_gather %a, %b, %c, %d dim 1 : !t0, !t1, !t2, !t3
  %rs:4 = dist.reduce_scatter sum %a, %b, %c, %d dim 0 : !t0, !t1, !t2, !t3
  %x:2 = dist.all_to_all %a, %b split_dim 1 concat_dim 0 : !t0, !t1
  %bc:2 = dist.broadcast %a : !t0 -> !t0, !t1
  %sc:2 = dist.scatter %a dim 0 : !t0 -> !h0, !h1
  %p = dist.reduce prod %a, %b : !t0, !t1 -> !t1
  %ga = dist.gather %a, %b dim 0 : !t0, !t1 -> tensor<8x6xf32, #dist.device<0>>
  %sd = dist.send %b : !t1 -> !t0
  return %s#0, %s#1, %s#2, %s#3, %m#2, %v#0, %g#0, %g#1, %rs#0, %rs#3, %x#0, %x#1, %bc#0, %bc#1, %sc#1, %p, %ga, %sd
    : !t0, !t1, !t2, !t3, !t2, !t0, !g0, !g1, !r0, !r3, !a0, !a1, !t0, !t1, !h1, !t1, tensor<8x6xf32, #dist.device<0>>, !t0
}
