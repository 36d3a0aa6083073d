func.func @f() {
  %e = tensor.empty() : tensor<4xf32>
  return
}
