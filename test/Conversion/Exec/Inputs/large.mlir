// A tensor of 2^44 floats (64 TiB): countable, but beyond what distir-exec
// allocates.
!big0 = tensor<1048576x1048576x16xf32, #dist.device<0>>
!big1 = tensor<1048576x1048576x16xf32, #dist.device<1>>
func.func @f(%x: !big0) -> !big1 {
  %y = dist.send %x : !big0 -> !big1
  return %y : !big1
}
