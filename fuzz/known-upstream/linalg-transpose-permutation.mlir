// MLIR 22 (Debian libmlir-22): mlir-opt and distir-opt crash (SIGSEGV in
// NamedAttrList::set from TransposeOp::parse) on this malformed permutation
// instead of reporting the parse error. Upstream bug; not replayed in CI.
func.func @f(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [q, 0]
  return %t : tensor<8x4xf32>
}
