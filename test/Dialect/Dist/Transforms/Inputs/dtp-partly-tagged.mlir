// Two layers, but the second matmul has no dist.layer tag.
!x = tensor<4x8xf32, #dist.device<0>>
!w = tensor<8x8xf32, #dist.device<0>>
func.func @mlp(%x: !x {dist.batch_dim = 0 : i64}, %w0: !w, %w1: !w) -> !x {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !x
  %z = linalg.fill ins(%zero : f32) outs(%e : !x) -> !x
  %h = linalg.matmul {dist.layer = 0 : i64, dist.phase = "forward"} ins(%x, %w0 : !x, !w) outs(%z : !x) -> !x
  %y = linalg.matmul {dist.phase = "forward"} ins(%h, %w1 : !x, !w) outs(%z : !x) -> !x
  %u = linalg.matmul {dist.layer = 1 : i64, dist.phase = "forward"} ins(%y, %w1 : !x, !w) outs(%z : !x) -> !x
  return %u : !x
}
