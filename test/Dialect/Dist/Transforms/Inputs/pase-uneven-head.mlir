// A language-model head whose vocabulary (257) no device count divides:
// hidden states [8, 64] times [64, 257], a bias, and a row sum. The head's
// output is annotated split by words over four devices (64 + 64 + 64 + 65
// columns, the balanced split dist.sharding means).
!h = tensor<8x64xf32, #dist.device<0>>
!w = tensor<64x257xf32, #dist.device<0>>
!b = tensor<257xf32, #dist.device<0>>
!y = tensor<8x257xf32, #dist.device<0>>
!s = tensor<8xf32, #dist.device<0>>
func.func @head(%h: !h {dist.batch_dim = 0 : i64}, %w: !w, %bias: !b) -> (!y, !s) {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : !y
  %z = linalg.fill ins(%cst : f32) outs(%e : !y) -> !y
  %logits = linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [4]>, split = [[], [0]]>}
      ins(%h, %w : !h, !w) outs(%z : !y) -> !y
  %biased = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %bias : !y, !b) outs(%e : !y) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> !y
  %es = tensor.empty() : !s
  %zs = linalg.fill ins(%cst : f32) outs(%es : !s) -> !s
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%biased : !y) outs(%zs : !s) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> !s
  return %biased, %sum : !y, !s
}
