// Sequence-first activations [S=4, B=8, E=16] (batch in dim 1): the rows of
// a projection merge the sequence with the batch ([S * B, E]), then come
// back; a transpose moves the batch to the front for the result.
!x = tensor<4x8x16xf32, #dist.device<0>>
!rows = tensor<32x16xf32, #dist.device<0>>
!w = tensor<16x16xf32, #dist.device<0>>
!y = tensor<8x4x16xf32, #dist.device<0>>
func.func @seq_first(%x: !x {dist.batch_dim = 1 : i64}, %w: !w) -> !y {
  %r = tensor.collapse_shape %x [[0, 1], [2]] : !x into !rows
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !rows
  %init = linalg.fill ins(%zero : f32) outs(%e : !rows) -> !rows
  %p = linalg.matmul ins(%r, %w : !rows, !w) outs(%init : !rows) -> !rows
  %back = tensor.expand_shape %p [[0, 1], [2]] output_shape [4, 8, 16] : !rows into !x
  %te = tensor.empty() : !y
  %t = linalg.transpose ins(%back : !x) outs(%te : !y) permutation = [1, 0, 2]
  return %t : !y
}
