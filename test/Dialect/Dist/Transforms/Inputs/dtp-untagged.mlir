!x = tensor<4x8xf32, #dist.device<0>>
!w = tensor<8x8xf32, #dist.device<0>>
func.func @mlp(%x: !x {dist.batch_dim = 0 : i64}, %w0: !w {dist.layer = 0 : i64}) -> !x {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !x
  %z = linalg.fill ins(%zero : f32) outs(%e : !x) -> !x
  %h = linalg.matmul ins(%x, %w0 : !x, !w) outs(%z : !x) -> !x
  return %h : !x
}
