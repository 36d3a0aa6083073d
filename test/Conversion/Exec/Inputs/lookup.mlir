// An embedding lookup with ONNX Gather's negative-index wrap, on device 0;
// the rows go to device 1.
!ids = tensor<4xi64, #dist.device<0>>
!table = tensor<10x3xf32, #dist.device<0>>
!rows0 = tensor<4x3xf32, #dist.device<0>>
!rows1 = tensor<4x3xf32, #dist.device<1>>
func.func @f(%ids: !ids {dist.name = "ids"}, %table: !table {dist.name = "table"}) -> !rows1 {
  %init = tensor.empty() : !rows0
  %rows = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%ids : !ids) outs(%init : !rows0) {
  ^bb0(%id: i64, %out: f32):
    %i = arith.index_cast %id : i64 to index
    %c0 = arith.constant 0 : index
    %c10 = arith.constant 10 : index
    %neg = arith.cmpi slt, %i, %c0 : index
    %wrapped = arith.addi %i, %c10 : index
    %k = arith.select %neg, %wrapped, %i : index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%k, %j] : !table
    linalg.yield %v : f32
  } -> !rows0 loc("embed/Gather")
  %moved = dist.send %rows : !rows0 -> !rows1
  return %moved : !rows1
}
