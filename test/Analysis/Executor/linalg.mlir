// Named and generic linalg ops run through one engine driven by the
// structured-op interface; results match NumPy.
// RUN: %python %S/Inputs/npcheck.py linalg %s %t | FileCheck %s
// CHECK: linalg: ok (6 outputs)

!a = tensor<4x8xf32, #dist.device<0>>
!b = tensor<8x5xf32, #dist.device<0>>
!c = tensor<4x5xf32, #dist.device<0>>
!ct = tensor<5x4xf32, #dist.device<0>>
!v = tensor<5xf32, #dist.device<0>>
!x = tensor<2x3x4xf32, #dist.device<0>>
!xs = tensor<2x4xf32, #dist.device<0>>
!g = tensor<3x4xf32, #dist.device<0>>
#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @linalg(%a: !a, %b: !b, %c: !c, %v: !v, %x: !x)
    -> (!c, !ct, !c, !xs, !x, !g) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : !c
  %z = linalg.fill ins(%zero : f32) outs(%e : !c) -> !c
  %ab = linalg.matmul ins(%a, %b : !a, !b) outs(%z : !c) -> !c
  %relu = linalg.max ins(%ab, %z : !c, !c) outs(%e : !c) -> !c
  %r0 = linalg.add ins(%relu, %c : !c, !c) outs(%e : !c) -> !c

  %et = tensor.empty() : !ct
  %r1 = linalg.transpose ins(%ab : !c) outs(%et : !ct) permutation = [1, 0]

  %vb = linalg.broadcast ins(%v : !v) outs(%e : !c) dimensions = [0]
  %r2 = linalg.add ins(%ab, %vb : !c, !c) outs(%e : !c) -> !c

  %es = tensor.empty() : !xs
  %zs = linalg.fill ins(%zero : f32) outs(%es : !xs) -> !xs
  %r3 = linalg.reduce ins(%x : !x) outs(%zs : !xs) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }

  %ex = tensor.empty() : !x
  %r4 = linalg.softmax dimension(2) ins(%x : !x) outs(%ex : !x) -> !x

  %eg = tensor.empty() : !g
  %two = arith.constant 2.0 : f32
  %r5 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%eg : !g) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c4 = arith.constant 4 : index
    %row = arith.muli %i, %c4 : index
    %flat = arith.addi %row, %j : index
    %fi = arith.index_cast %flat : index to i64
    %f = arith.sitofp %fi : i64 to f32
    %d = arith.mulf %f, %two : f32
    linalg.yield %d : f32
  } -> !g
  return %r0, %r1, %r2, %r3, %r4, %r5 : !c, !ct, !c, !xs, !x, !g
}
