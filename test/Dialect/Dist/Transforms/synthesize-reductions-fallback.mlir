// When the faster programs all need reduce_scatter or all_gather and
// dimension 0 does not divide by the group, the all_reduce is kept (two
// dgx-a100 nodes priced with NCCL tree); with 1024 rows the same group gets
// a synthesized program. With max-size=1 the only program is the all_reduce.
// RUN: distir-opt %s --dist-synthesize-reductions="cluster=dgx-a100:nodes=2 algo=tree verbose=1" 2>&1 | FileCheck %s --check-prefix=FALLBACK
// RUN: distir-opt %s --dist-synthesize-reductions="cluster=dgx-a100:nodes=2 max-size=1 verbose=1" 2>&1 | FileCheck %s --check-prefix=SMALL

// FALLBACK: remark: kept: no expressible program is predicted faster than the all_reduce ({{.*}} s); skipped {{[0-9]+}} faster program(s) that the dist ops cannot express, first ReduceScatter(node, InsideGroup) ; {{.*}}: dimension 0 of size 1023 is not divisible by the 4 devices of the group
// FALLBACK: remark: replaced by ReduceScatter(node, InsideGroup) ;
// FALLBACK-LABEL: func.func @not_divisible
// FALLBACK-NEXT: dist.all_reduce sum %arg0, %arg1, %arg2, %arg3 :
// FALLBACK-NEXT: return
// FALLBACK-LABEL: func.func @divisible
// FALLBACK-NEXT: dist.reduce_scatter sum %arg0, %arg1 dim 0

// SMALL: remark: kept: no expressible program is predicted faster than the all_reduce ({{.*}} s){{$}}
// SMALL: remark: kept: no expressible program is predicted faster than the all_reduce ({{.*}} s){{$}}
// SMALL-LABEL: func.func @not_divisible
// SMALL-NEXT: dist.all_reduce sum
// SMALL-LABEL: func.func @divisible
// SMALL-NEXT: dist.all_reduce sum

!u0 = tensor<1023x256xf32, #dist.device<0>>
!u1 = tensor<1023x256xf32, #dist.device<1>>
!u8 = tensor<1023x256xf32, #dist.device<8>>
!u9 = tensor<1023x256xf32, #dist.device<9>>
func.func @not_divisible(%a: !u0, %b: !u1, %c: !u8, %d: !u9) -> (!u0, !u1, !u8, !u9) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !u0, !u1, !u8, !u9
  return %r#0, %r#1, %r#2, %r#3 : !u0, !u1, !u8, !u9
}

!t0 = tensor<1024x256xf32, #dist.device<0>>
!t1 = tensor<1024x256xf32, #dist.device<1>>
!t8 = tensor<1024x256xf32, #dist.device<8>>
!t9 = tensor<1024x256xf32, #dist.device<9>>
func.func @divisible(%a: !t0, %b: !t1, %c: !t8, %d: !t9) -> (!t0, !t1, !t8, !t9) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t8, !t9
  return %r#0, %r#1, %r#2, %r#3 : !t0, !t1, !t8, !t9
}
