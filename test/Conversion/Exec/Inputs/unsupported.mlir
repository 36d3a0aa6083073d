!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
func.func @f(%x: !t0) -> !t1 {
  %y = dist.send %x : !t0 -> !t1
  %w = mpi.comm_world : !mpi.comm
  return %y : !t1
}
