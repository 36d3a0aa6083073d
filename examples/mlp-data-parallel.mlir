// One training step of a linear layer, data parallel on two devices.
//
// Each device holds a replica of the weight W (16x8) and half of a batch of
// 8 rows. Each computes y = relu(x W), the weight gradient dW = x^T dy from
// its own output gradient dy, then one all_reduce sums the gradients and
// each device applies the same SGD update W -= lr * dW.

!x0 = tensor<4x16xf32, #dist.device<0>>
!x1 = tensor<4x16xf32, #dist.device<1>>
!xt0 = tensor<16x4xf32, #dist.device<0>>
!xt1 = tensor<16x4xf32, #dist.device<1>>
!w0 = tensor<16x8xf32, #dist.device<0>>
!w1 = tensor<16x8xf32, #dist.device<1>>
!y0 = tensor<4x8xf32, #dist.device<0>>
!y1 = tensor<4x8xf32, #dist.device<1>>

#map = affine_map<(d0, d1) -> (d0, d1)>

func.func @train_step(%x0: !x0, %x1: !x1, %w0: !w0, %w1: !w1,
                      %dy0: !y0, %dy1: !y1, %lr: f32)
    -> (!y0, !y1, !w0, !w1) {
  %zero = arith.constant 0.0 : f32

  // Forward on device 0 and device 1.
  %e0 = tensor.empty() : !y0
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : !y0) -> !y0
  %h0 = linalg.matmul ins(%x0, %w0 : !x0, !w0) outs(%z0 : !y0) -> !y0
  %y0 = linalg.max ins(%h0, %z0 : !y0, !y0) outs(%e0 : !y0) -> !y0
  %e1 = tensor.empty() : !y1
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : !y1) -> !y1
  %h1 = linalg.matmul ins(%x1, %w1 : !x1, !w1) outs(%z1 : !y1) -> !y1
  %y1 = linalg.max ins(%h1, %z1 : !y1, !y1) outs(%e1 : !y1) -> !y1

  // Weight gradients dW = x^T dy, one per device.
  %te0 = tensor.empty() : !xt0
  %xt0 = linalg.transpose ins(%x0 : !x0) outs(%te0 : !xt0) permutation = [1, 0]
  %ge0 = tensor.empty() : !w0
  %gz0 = linalg.fill ins(%zero : f32) outs(%ge0 : !w0) -> !w0
  %dw0 = linalg.matmul ins(%xt0, %dy0 : !xt0, !y0) outs(%gz0 : !w0) -> !w0
  %te1 = tensor.empty() : !xt1
  %xt1 = linalg.transpose ins(%x1 : !x1) outs(%te1 : !xt1) permutation = [1, 0]
  %ge1 = tensor.empty() : !w1
  %gz1 = linalg.fill ins(%zero : f32) outs(%ge1 : !w1) -> !w1
  %dw1 = linalg.matmul ins(%xt1, %dy1 : !xt1, !y1) outs(%gz1 : !w1) -> !w1

  // The only communication: sum the gradients on both devices.
  %g:2 = dist.all_reduce sum %dw0, %dw1 : !w0, !w1

  // SGD update on each replica.
  %n0 = linalg.generic {indexing_maps = [#map, #map, #map],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w0, %g#0 : !w0, !w0) outs(%ge0 : !w0) {
  ^bb0(%w: f32, %dw: f32, %out: f32):
    %s = arith.mulf %lr, %dw : f32
    %u = arith.subf %w, %s : f32
    linalg.yield %u : f32
  } -> !w0
  %n1 = linalg.generic {indexing_maps = [#map, #map, #map],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w1, %g#1 : !w1, !w1) outs(%ge1 : !w1) {
  ^bb0(%w: f32, %dw: f32, %out: f32):
    %s = arith.mulf %lr, %dw : f32
    %u = arith.subf %w, %s : f32
    linalg.yield %u : f32
  } -> !w1
  return %y0, %y1, %n0, %n1 : !y0, !y1, !w0, !w1
}
