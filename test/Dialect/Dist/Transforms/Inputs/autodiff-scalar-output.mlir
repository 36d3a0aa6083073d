// A model whose output is a scalar: cross-entropy has no class axis.
!s = tensor<f32, #dist.device<0>>
func.func @scalar(%x: !s {dist.batch_dim = 0 : i64}, %w: !s) -> !s {
  return %w : !s
}
