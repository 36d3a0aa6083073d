!t0 = tensor<4194304xf32, #dist.device<0>>
!t1 = tensor<4194304xf32, #dist.device<1>>
!t8 = tensor<4194304xf32, #dist.device<8>>
!t9 = tensor<4194304xf32, #dist.device<9>>
func.func @intra(%a: !t0, %b: !t1) -> (!t0, !t1) {
  %r:2 = dist.all_reduce sum %a, %b : !t0, !t1
  return %r#0, %r#1 : !t0, !t1
}
func.func @inter(%a: !t0, %b: !t1, %c: !t8, %d: !t9) -> (!t0, !t1, !t8, !t9) {
  %r:4 = dist.all_reduce sum %a, %b, %c, %d : !t0, !t1, !t8, !t9
  return %r#0, %r#1, %r#2, %r#3 : !t0, !t1, !t8, !t9
}
func.func @bcast(%a: !t0) -> (!t0, !t8) {
  %r:2 = dist.broadcast %a : !t0 -> !t0, !t8
  return %r#0, %r#1 : !t0, !t8
}
