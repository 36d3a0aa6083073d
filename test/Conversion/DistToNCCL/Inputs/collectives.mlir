// Two ranks: an all-reduce, an all-gather and a send, each checked by
// nccl-driver.c. Inputs: rank r holds a = [r+1, r+1, r+1, r+1].
!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
!g0 = tensor<8xf32, #dist.device<0>>
!g1 = tensor<8xf32, #dist.device<1>>
func.func @step(%a0: !t0, %a1: !t1) -> (!t0, !t1, !g0, !g1, !t1)
    attributes {llvm.emit_c_interface} {
  %r:2 = dist.all_reduce sum %a0, %a1 : !t0, !t1
  %g:2 = dist.all_gather %a0, %a1 dim 0 : !t0, !t1
  %s = dist.send %a0 : !t0 -> !t1
  return %r#0, %r#1, %g#0, %g#1, %s : !t0, !t1, !g0, !g1, !t1
}
