// One rank's collectives on device buffers (bench/exec/gpu): an all-reduce
// and an all-gather over a group of one, which NCCL runs on the GPU's
// buffers in place (no host staging) on the compute stream.
func.func @collectives(%arg0: tensor<1024xf32, #dist.device<0>>) -> tensor<1024xf32, #dist.device<0>> attributes {llvm.emit_c_interface} {
  %r = dist.all_reduce sum %arg0 : tensor<1024xf32, #dist.device<0>>
  %g = dist.all_gather %r dim 0 : tensor<1024xf32, #dist.device<0>>
  return %g : tensor<1024xf32, #dist.device<0>>
}
