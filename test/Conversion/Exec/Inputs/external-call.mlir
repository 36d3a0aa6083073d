// A call distir-exec cannot inline: the callee has no body.
!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
func.func private @ext(!t0) -> !t0
func.func @f(%x: !t0) -> !t1 {
  %e = func.call @ext(%x) : (!t0) -> !t0
  %y = dist.send %e : !t0 -> !t1
  return %y : !t1
}
