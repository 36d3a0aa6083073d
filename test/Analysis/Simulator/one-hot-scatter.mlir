// dist-autodiff's embedding gradient is a one-hot accumulation over rows x
// tokens x width; its work is a scatter-add (one update per token and
// width), as PyTorch's index_add and distir-exec run it. On dgx-h100 it is
// memory bound: dy (8192 x 512 f32, 16777216 B), the ids (65536 B) and the
// table's gradient read and written (2 x 50304 x 512 x 4 = 206045184 B):
// 222887936 B / 3.35e12 B/s = 6.653371e-05 s, plus the 1e-5 s launch.
// Priced as rows x tokens x width points it cost 7 ops x 2.1e11 points /
// 6.7e13 flop/s = 22 ms.
// RUN: distir-sim %s --entry embedding_grad --cluster dgx-h100 | FileCheck %s
// CHECK: latency: 7.65337{{[0-9]*}}e-05 s

// A shard of it (dist-dtp's vocabulary-parallel embedding, rows 25152 to
// 50303 of the table) compares the global row `v + 25152`: still a
// scatter-add, (16777216 + 65536 + 2 x 25152 x 512 x 4) B / 3.35e12 B/s
// + 1e-5 s.
// RUN: distir-sim %s --entry shard_grad --cluster dgx-h100 | FileCheck %s --check-prefix=SHARD
// SHARD: latency: 4.57806{{[0-9]*}}e-05 s

!dy = tensor<8x1024x512xf32, #dist.device<0>>
!ids = tensor<8x1024xi64, #dist.device<0>>
!dt = tensor<50304x512xf32, #dist.device<0>>
func.func @embedding_grad(%dy: !dy, %ids: !ids, %init: !dt) -> !dt {
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, s, v, e) -> (b, s, e)>,
                       affine_map<(b, s, v, e) -> (b, s)>,
                       affine_map<(b, s, v, e) -> (v, e)>],
      iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%dy, %ids : !dy, !ids) outs(%init : !dt) {
  ^bb0(%g: f32, %id: i64, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %c0 = arith.constant 0 : index
    %c50304 = arith.constant 50304 : index
    %neg = arith.cmpi slt, %i, %c0 : index
    %w = arith.addi %i, %c50304 : index
    %row = arith.select %neg, %w, %i : index
    %v = linalg.index 2 : index
    %hit = arith.cmpi eq, %row, %v : index
    %zero = arith.constant 0.0 : f32
    %x = arith.select %hit, %g, %zero : f32
    %sum = arith.addf %acc, %x : f32
    linalg.yield %sum : f32
  } -> !dt
  return %r : !dt
}

!shard = tensor<25152x512xf32, #dist.device<0>>
func.func @shard_grad(%dy: !dy, %ids: !ids, %init: !shard) -> !shard {
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, s, v, e) -> (b, s, e)>,
                       affine_map<(b, s, v, e) -> (b, s)>,
                       affine_map<(b, s, v, e) -> (v, e)>],
      iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%dy, %ids : !dy, !ids) outs(%init : !shard) {
  ^bb0(%g: f32, %id: i64, %acc: f32):
    %i = arith.index_cast %id : i64 to index
    %v = linalg.index 2 : index
    %c25152 = arith.constant 25152 : index
    %global = arith.addi %v, %c25152 : index
    %hit = arith.cmpi eq, %i, %global : index
    %zero = arith.constant 0.0 : f32
    %x = arith.select %hit, %g, %zero : f32
    %sum = arith.addf %acc, %x : f32
    linalg.yield %sum : f32
  } -> !shard
  return %r : !shard
}
