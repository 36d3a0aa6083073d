// A training head (logits = x w + b, the cross-entropy's maximum, sum of
// exponentials and target logit, the logits' gradient, w's update): its 9
// classes padded to 12. w and b are padded with zeros on entry, the logits
// masked to -inf at the padded columns (the maximum and the softmax must not
// see zeros there), the results cut back; the values are the same.
// RUN: distir-opt %s --dist-pad-dimension="arg=w dim=1 multiple=4 report=true" 2>&1 | FileCheck %s
// RUN: distir-opt %s --dist-place -o %t.placed.mlir
// RUN: distir-opt %t.placed.mlir --dist-pad-dimension="arg=w dim=1 size=12" -o %t.padded.mlir
// RUN: distir-run %t.placed.mlir --random-inputs=1 > %t.before.txt
// RUN: distir-run %t.padded.mlir --random-inputs=1 > %t.after.txt
// RUN: diff %t.before.txt %t.after.txt
// Already a multiple: nothing to do.
// RUN: distir-opt %s --dist-pad-dimension="arg=w dim=1 multiple=3 report=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MULTIPLE

// CHECK: remark: dist-pad-dimension: 9 -> 12 in 14 values, 2 arguments padded, 2 results cut, 1 masked to -inf
// CHECK: func.func @head({{.*}}) -> (tensor<4xf32>, tensor<8x9xf32>, tensor<4x9xf32>)
// CHECK: %[[B:.*]] = tensor.pad %arg2 low[0] high[3]
// CHECK: %[[W:.*]] = tensor.pad %arg1 low[0, 0] high[0, 3]
// CHECK: linalg.matmul ins(%arg0, %[[W]] : tensor<4x8xf32>, tensor<8x12xf32>)
// CHECK: %[[LOGITS:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[B]] : tensor<4x12xf32>, tensor<12xf32>)
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} ins(%[[LOGITS]] : tensor<4x12xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.index 1
// CHECK-NEXT: arith.constant 9 : index
// CHECK-NEXT: arith.cmpi ult
// CHECK-NEXT: arith.constant 0xFF800000
// CHECK-NEXT: arith.select
// The maximum, the sum of exponentials, the target logit and the gradient
// read the masked logits.
// CHECK: linalg.generic {{.*}} ins(%[[MASKED]] : tensor<4x12xf32>) outs({{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK: ins(%[[MASKED]], %{{.*}} : tensor<4x12xf32>, tensor<4xf32>)
// CHECK: ins(%[[MASKED]], %arg3 : tensor<4x12xf32>, tensor<4xi64>)
// CHECK: ins(%[[MASKED]], %{{.*}}, %{{.*}}, %arg3 : tensor<4x12xf32>
// CHECK: %[[UPDATED:.*]] = linalg.generic {{.*}} ins(%[[W]], %{{.*}} : tensor<8x12xf32>, tensor<8x12xf32>)
// CHECK: %[[WCUT:.*]] = tensor.extract_slice %[[UPDATED]][0, 0] [8, 9] [1, 1]
// CHECK: %[[LCUT:.*]] = tensor.extract_slice %[[LOGITS]][0, 0] [4, 9] [1, 1]
// CHECK: return %{{.*}}, %[[WCUT]], %[[LCUT]] : tensor<4xf32>, tensor<8x9xf32>, tensor<4x9xf32>

// MULTIPLE: remark: dist-pad-dimension: 9 is already a multiple of 3

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @head(%x: tensor<4x8xf32>, %w: tensor<8x9xf32> {dist.name = "w"},
                %b: tensor<9xf32> {dist.name = "b"},
                %t: tensor<4xi64> {dist.batch_dim = 0 : i64})
    -> (tensor<4xf32>, tensor<8x9xf32>, tensor<4x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<4x9xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x9xf32>) outs(%f0 : tensor<4x9xf32>) -> tensor<4x9xf32>
  %e1 = tensor.empty() : tensor<4x9xf32>
  %logits = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<4x9xf32>, tensor<9xf32>) outs(%e1 : tensor<4x9xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x9xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%logits : tensor<4x9xf32>) outs(%f2 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %o, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%logits, %max : tensor<4x9xf32>, tensor<4xf32>) outs(%f3 : tensor<4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %o, %e : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %picked = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%logits, %t : tensor<4x9xf32>, tensor<4xi64>) outs(%f4 : tensor<4xf32>) {
  ^bb0(%a: f32, %i: i64, %o: f32):
    %j = linalg.index 1 : index
    %k = arith.index_cast %i : i64 to index
    %eq = arith.cmpi eq, %j, %k : index
    %v = arith.select %eq, %a, %zero : f32
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e5 = tensor.empty() : tensor<4xf32>
  %loss = linalg.generic {indexing_maps = [#vec, #vec, #vec, #vec], iterator_types = ["parallel"]} ins(%sum, %max, %picked : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e5 : tensor<4xf32>) {
  ^bb0(%s: f32, %m: f32, %p: f32, %o: f32):
    %l = math.log %s : f32
    %a = arith.addf %l, %m : f32
    %r = arith.subf %a, %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  // The logits' gradient: softmax - onehot.
  %e6 = tensor.empty() : tensor<4x9xf32>
  %grad = linalg.generic {indexing_maps = [#id, #row, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%logits, %max, %sum, %t : tensor<4x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) outs(%e6 : tensor<4x9xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %i: i64, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %s : f32
    %j = linalg.index 1 : index
    %k = arith.index_cast %i : i64 to index
    %eq = arith.cmpi eq, %j, %k : index
    %one = arith.constant 1.0 : f32
    %h = arith.select %eq, %one, %zero : f32
    %r = arith.subf %p, %h : f32
    linalg.yield %r : f32
  } -> tensor<4x9xf32>
  %e7 = tensor.empty() : tensor<8x4xf32>
  %xt = linalg.transpose ins(%x : tensor<4x8xf32>) outs(%e7 : tensor<8x4xf32>) permutation = [1, 0]
  %e8 = tensor.empty() : tensor<8x9xf32>
  %f8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<8x9xf32>) -> tensor<8x9xf32>
  %dw = linalg.matmul ins(%xt, %grad : tensor<8x4xf32>, tensor<4x9xf32>) outs(%f8 : tensor<8x9xf32>) -> tensor<8x9xf32>
  %e9 = tensor.empty() : tensor<8x9xf32>
  %wn = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%w, %dw : tensor<8x9xf32>, tensor<8x9xf32>) outs(%e9 : tensor<8x9xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %s = arith.mulf %lr, %g : f32
    %r = arith.subf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x9xf32>
  return %loss, %wn, %logits : tensor<4xf32>, tensor<8x9xf32>, tensor<4x9xf32>
}
