// h = x W1 (a plain matmul), y = h W2^T (the importer's Linear: a
// transpose of the weight feeding a matmul).
!x = tensor<4x8xf32, #dist.device<0>>
!w1 = tensor<8x8xf32, #dist.device<0>>
!w2 = tensor<2x8xf32, #dist.device<0>>
!w2t = tensor<8x2xf32, #dist.device<0>>
!y = tensor<4x2xf32, #dist.device<0>>
func.func @main(%x: !x {dist.batch_dim = 0 : i64, dist.name = "x"},
                %w1: !w1 {dist.name = "w1"}, %w2: !w2 {dist.name = "w2"}) -> !y {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !x
  %i = linalg.fill ins(%zero : f32) outs(%e : !x) -> !x
  %h = linalg.matmul ins(%x, %w1 : !x, !w1) outs(%i : !x) -> !x
  %et = tensor.empty() : !w2t
  %w2t = linalg.transpose ins(%w2 : !w2) outs(%et : !w2t) permutation = [1, 0]
  %ey = tensor.empty() : !y
  %iy = linalg.fill ins(%zero : f32) outs(%ey : !y) -> !y
  %y = linalg.matmul ins(%h, %w2t : !x, !w2t) outs(%iy : !y) -> !y
  return %y : !y
}
