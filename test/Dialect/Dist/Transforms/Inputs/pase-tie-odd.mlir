// Pairings dist-autodiff does not write: an id on two forward ops (a
// program cloned after dist-autodiff) and an op that claims to be both a
// forward op and its own adjoint. Neither ties anything.
func.func @odd(%x: tensor<8x8xf32, #dist.device<0>> {dist.batch_dim = 0 : i64}, %w: tensor<8x8xf32, #dist.device<0>>) -> tensor<8x8xf32, #dist.device<0>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32, #dist.device<0>>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32, #dist.device<0>>) -> tensor<8x8xf32, #dist.device<0>>
  %a = linalg.matmul {dist.vjp_id = 0 : i64} ins(%x, %w : tensor<8x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>) outs(%i : tensor<8x8xf32, #dist.device<0>>) -> tensor<8x8xf32, #dist.device<0>>
  %b = linalg.matmul {dist.vjp_id = 0 : i64} ins(%a, %w : tensor<8x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>) outs(%i : tensor<8x8xf32, #dist.device<0>>) -> tensor<8x8xf32, #dist.device<0>>
  %c = linalg.matmul {dist.vjp_of = 0 : i64} ins(%b, %w : tensor<8x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>) outs(%i : tensor<8x8xf32, #dist.device<0>>) -> tensor<8x8xf32, #dist.device<0>>
  %d = linalg.matmul {dist.vjp_id = 1 : i64, dist.vjp_of = 1 : i64} ins(%c, %w : tensor<8x8xf32, #dist.device<0>>, tensor<8x8xf32, #dist.device<0>>) outs(%i : tensor<8x8xf32, #dist.device<0>>) -> tensor<8x8xf32, #dist.device<0>>
  return %d : tensor<8x8xf32, #dist.device<0>>
}
