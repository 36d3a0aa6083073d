// A convolution's border padding: [N, C, H, W] padded in H and W, then a
// 3x3 convolution (as the ONNX importer emits Conv with pads = 1), and a pad
// of the batch dimension itself at the end.
!x = tensor<8x2x6x6xf32, #dist.device<0>>
!xp = tensor<8x2x8x8xf32, #dist.device<0>>
!w = tensor<3x2x3x3xf32, #dist.device<0>>
!y = tensor<8x3x6x6xf32, #dist.device<0>>
!yp = tensor<10x3x6x6xf32, #dist.device<0>>
func.func @conv(%x: !x {dist.batch_dim = 0 : i64}, %w: !w) -> !yp {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : !x to !xp
  %e = tensor.empty() : !y
  %init = linalg.fill ins(%zero : f32) outs(%e : !y) -> !y
  %c = linalg.conv_2d_nchw_fchw ins(%p, %w : !xp, !w) outs(%init : !y) -> !y
  %one = arith.constant 1.0 : f32
  %q = tensor.pad %c low[1, 0, 0, 0] high[1, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %one : f32
  } : !y to !yp
  return %q : !yp
}
