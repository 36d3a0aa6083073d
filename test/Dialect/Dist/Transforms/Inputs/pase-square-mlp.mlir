// A data-parallel pair of square layers: the incoming gradient has the
// type of the input and the output of each matmul, so only the forward
// result says which of its dimensions is the batch.
func.func @mlp(%x: tensor<64x32xf32> {dist.batch_dim = 0 : i64}, %w1: tensor<32x32xf32>, %w2: tensor<32x32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64x32xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<64x32xf32>, tensor<32x32xf32>) outs(%i1 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<64x32xf32>, tensor<32x32xf32>) outs(%i2 : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}
