// Final projections of 7 columns that tp=2 does not divide and that cannot
// be padded (dist-dtp-heads.test): each is left replicated, with the reason.
!x = tensor<8x16xf32, #dist.device<0>>
!w = tensor<16x7xf32, #dist.device<0>>
!wt = tensor<7x16xf32, #dist.device<0>>
!y = tensor<8x7xf32, #dist.device<0>>

// The projection accumulates into an argument: a padded init would need
// that argument padded too.
func.func @accumulating(%x: !x {dist.batch_dim = 0 : i64}, %w: !w, %acc: !y) -> !y {
  %y = linalg.matmul ins(%x, %w : !x, !w) outs(%acc : !y) -> !y
  return %y : !y
}

// -----

!x = tensor<8x16xf32, #dist.device<0>>
!w = tensor<16x7xf32, #dist.device<0>>
!wt = tensor<7x16xf32, #dist.device<0>>
!y = tensor<8x7xf32, #dist.device<0>>

// The weight is transposed into a buffer the caller passes in.
func.func @transposed_into_argument(%x: !x {dist.batch_dim = 0 : i64}, %wt: !wt, %buf: !w) -> !y {
  %w = linalg.transpose ins(%wt : !wt) outs(%buf : !w) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !y
  %init = linalg.fill ins(%zero : f32) outs(%e : !y) -> !y
  %y = linalg.matmul ins(%x, %w : !x, !w) outs(%init : !y) -> !y
  return %y : !y
}

// -----

!x = tensor<8x16xf32, #dist.device<0>>
!w = tensor<16x7xf32, #dist.device<0>>
!s = tensor<7xf32, #dist.device<0>>
!y = tensor<8x7xf32, #dist.device<0>>

// A per-column scale inside the contraction: it would keep 7 columns.
func.func @scaled_columns(%x: !x {dist.batch_dim = 0 : i64}, %w: !w) -> !y {
  %s = arith.constant dense<2.0> : !s
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !y
  %init = linalg.fill ins(%zero : f32) outs(%e : !y) -> !y
  %y = linalg.generic {
      indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                       affine_map<(i, j, k) -> (k, j)>,
                       affine_map<(i, j, k) -> (j)>,
                       affine_map<(i, j, k) -> (i, j)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w, %s : !x, !w, !s) outs(%init : !y) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %n = arith.mulf %m, %c : f32
    %r = arith.addf %o, %n : f32
    linalg.yield %r : f32
  } -> !y
  return %y : !y
}
