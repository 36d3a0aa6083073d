// arith and math on tensors, with rounding to the element type after every
// op (i8 arithmetic wraps).
// RUN: %python %S/Inputs/npcheck.py scalar %s %t | FileCheck %s
// CHECK: scalar: ok (7 outputs)

!f = tensor<16xf32, #dist.device<0>>
!i = tensor<8xi32, #dist.device<0>>
!b = tensor<8xi8, #dist.device<0>>

func.func @scalar_ops(%x: !f, %n: !i) -> (!f, !f, !f, !i, !b, tensor<8xf32, #dist.device<0>>, tensor<16xi32, #dist.device<0>>) {
  %e = math.exp %x : !f
  %t = math.tanh %x : !f
  %et = arith.mulf %e, %t : !f
  %ab = math.absf %x : !f
  %sq = math.sqrt %ab : !f
  %r0 = arith.subf %et, %sq : !f

  %zero = arith.constant dense<0.0> : !f
  %slope = arith.constant dense<0.01> : !f
  %pos = arith.cmpf ogt, %x, %zero : !f
  %leak = arith.mulf %x, %slope : !f
  %r1 = arith.select %pos, %x, %leak : tensor<16xi1, #dist.device<0>>, !f

  %one = arith.constant dense<1.0> : !f
  %neg = arith.negf %x : !f
  %en = math.exp %neg : !f
  %den = arith.addf %one, %en : !f
  %r2 = arith.divf %one, %den : !f

  %three = arith.constant dense<3> : !i
  %seven = arith.constant dense<7> : !i
  %m = arith.muli %n, %three : !i
  %r3 = arith.addi %m, %seven : !i

  %n8 = arith.trunci %n : !i to !b
  %three8 = arith.constant dense<3> : !b
  %r4 = arith.muli %n8, %three8 : !b

  %nf = arith.sitofp %n : !i to tensor<8xf32, #dist.device<0>>
  %two = arith.constant dense<2.0> : tensor<8xf32, #dist.device<0>>
  %r5 = arith.divf %nf, %two : tensor<8xf32, #dist.device<0>>

  %r6 = arith.fptosi %x : !f to tensor<16xi32, #dist.device<0>>
  return %r0, %r1, %r2, %r3, %r4, %r5, %r6 : !f, !f, !f, !i, !b, tensor<8xf32, #dist.device<0>>, tensor<16xi32, #dist.device<0>>
}
