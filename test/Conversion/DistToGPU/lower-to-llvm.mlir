// The dist-lower-to-llvm pipeline with device=gpu: compute becomes kernels
// (one gpu.binary of PTX per kernel, compiled at program start), every
// buffer is allocated through the runtime's device allocator, constants are
// uploaded, and no host code reads a buffer (no loads/stores, memcpy or
// malloc outside the kernels). Upstream's kernel serialization
// (gpu-module-to-binary) needs a CUDA toolkit directory, though the kernels
// call nothing from it.
// REQUIRES: cuda-toolkit
// RUN: distir-opt --dist-lower-to-llvm="comm=nccl device=gpu" %s -o %t
// RUN: FileCheck %s --input-file=%t --implicit-check-not=@malloc --implicit-check-not=memcpy --implicit-check-not=__nv_
// RUN: FileCheck %s --input-file=%t --check-prefix=HOST
// RUN: distir-opt --dist-lower-to-llvm="comm=nccl device=gpu gpu-chip=sm_90 gpu-block-size=128" %s | FileCheck %s --check-prefix=CHIP
// RUN: distir-opt --dist-lower-to-llvm="comm=nccl device=gpu blas=true" %s | FileCheck %s --check-prefix=BLAS
// RUN: not distir-opt --dist-lower-to-llvm="comm=mpi device=gpu" %s 2>&1 | FileCheck %s --check-prefix=MPI
// RUN: not distir-opt --dist-lower-to-llvm="comm=nccl device=tpu" %s 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: llvm.func @step(
// CHECK: llvm.call @distir_nccl_world_rank
// CHECK-LABEL: llvm.func @step_rank0(
// The constant's upload, from the host global into a device buffer.
// CHECK: llvm.mlir.addressof @__constant_4x8xf32
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @distir_cuda_copy
// CHECK: gpu.launch_func @step_rank0_kernel{{.*}}::@step_rank0_kernel blocks in
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK: gpu.binary @step_rank0_kernel  [#gpu.object<#nvvm.target<chip = "sm_70">
// CHECK-SAME: .target sm_70
// CHECK-SAME: .entry step_rank0_kernel
// GELU's erf and the sum's exp are arithmetic: no libdevice calls (__nv_).

// The host reads no f32 data (only descriptors and deallocation flags).
// HOST-NOT: llvm.load {{.*}} -> f32

// CHIP: llvm.mlir.constant(128 : index)
// CHIP: .target sm_90

// BLAS: llvm.call @distir_cublas_sgemm
// BLAS-NOT: cblas_sgemm

// MPI: error: dist-lower-to-llvm: device=gpu needs comm=nccl
// BAD: for the --device option: Cannot find option named 'tpu'!

!x = tensor<4x16xf32, #dist.device<0>>
!w = tensor<16x8xf32, #dist.device<0>>
!y = tensor<4x8xf32, #dist.device<0>>
!s = tensor<f32, #dist.device<0>>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> ()>
func.func @step(%x: !x, %w: !w) -> (!y, !s) attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %bias = arith.constant dense<0.5> : !y
  %e = tensor.empty() : !y
  %z = linalg.fill ins(%zero : f32) outs(%e : !y) -> !y
  %mm = linalg.matmul ins(%x, %w : !x, !w) outs(%z : !y) -> !y
  // GELU (erf) plus a constant bias.
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : !y, !y) outs(%e : !y) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %h = arith.constant 0.707106769 : f32
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %s = arith.mulf %a, %h : f32
    %r = math.erf %s : f32
    %t = arith.addf %r, %one : f32
    %u = arith.mulf %a, %t : f32
    %v = arith.mulf %u, %half : f32
    %w2 = arith.addf %v, %b : f32
    linalg.yield %w2 : f32
  } -> !y
  // A sum of exponentials to a scalar (a reduction over both loops).
  %se = tensor.empty() : !s
  %sz = linalg.fill ins(%zero : f32) outs(%se : !s) -> !s
  %sum = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%g : !y) outs(%sz : !s) {
  ^bb0(%a: f32, %acc: f32):
    %x1 = math.exp %a : f32
    %x2 = arith.addf %x1, %acc : f32
    linalg.yield %x2 : f32
  } -> !s
  return %g, %sum : !y, !s
}
