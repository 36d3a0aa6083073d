// A value of 3 elements crosses stages replicated over tp=2: no dimension
// splits into two equal parts for a scatter + all-gather.
!x = tensor<3x4xf32, #dist.device<0>>
!w = tensor<4x4xf32, #dist.device<0>>
!r = tensor<3xf32, #dist.device<0>>
!w1 = tensor<3x4xf32, #dist.device<0>>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @odd(%x: !x, %w0: !w {dist.layer = 0 : i64}, %w1: !w1 {dist.layer = 2 : i64}) -> !w1 {
  %zero = arith.constant {dist.layer = 0 : i64} 0.0 : f32
  %e = tensor.empty() {dist.layer = 0 : i64} : !x
  %f = linalg.fill {dist.layer = 0 : i64} ins(%zero : f32) outs(%e : !x) -> !x
  %h = linalg.matmul {dist.layer = 0 : i64} ins(%x, %w0 : !x, !w) outs(%f : !x) -> !x
  %er = tensor.empty() {dist.layer = 0 : i64} : !r
  %fr = linalg.fill {dist.layer = 0 : i64} ins(%zero : f32) outs(%er : !r) -> !r
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%h : !x) outs(%fr : !r) attrs = {dist.layer = 0 : i64} {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> !r
  %eo = tensor.empty() {dist.layer = 2 : i64} : !w1
  %o = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%r, %w1 : !r, !w1) outs(%eo : !w1) attrs = {dist.layer = 2 : i64} {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> !w1
  return %o : !w1
}
