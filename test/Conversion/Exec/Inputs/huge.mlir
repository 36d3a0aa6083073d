// A tensor whose element count overflows int64 (it used to allocate 4 bytes
// and overflow the heap).
!big0 = tensor<4294967296x4294967296x16xf32, #dist.device<0>>
!big1 = tensor<4294967296x4294967296x16xf32, #dist.device<1>>
func.func @f(%x: !big0) -> !big1 {
  %y = dist.send %x : !big0 -> !big1
  return %y : !big1
}
