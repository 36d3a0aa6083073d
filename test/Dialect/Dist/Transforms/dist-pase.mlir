// RUN: distir-opt %s --dist-pase='devices=8 report=true' --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=SLOW
// RUN: distir-opt %s --dist-pase='devices=8' --dist-pase='devices=8 order=bfs follow-annotations=false' --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: distir-opt %s --dist-pase='devices=8 cluster=dgx-h100' | distir-opt | FileCheck %s --check-prefix=FAST
// RUN: distir-opt %s --dist-pase='devices=8 max-configs=2' --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUT
// RUN: distir-opt %s --dist-place --dist-pase='devices=8' --dist-pase='devices=8 pick=data-parallel report=true' --dist-pase='devices=8 pick=one-weird-trick report=true' --mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=BASE

// A two-layer MLP on 8 devices joined by a 1 byte/s network: every strategy
// that moves data costs seconds, while splitting the batch loop of every op
// moves nothing (weights are arguments, each device reads the rows it
// computes) and divides all compute by 8. So PaSE must pick pure data
// parallelism: loop 0 split by 8 on every op.
module attributes {dist.cluster = #dist.cluster<name = "slow", levels = [#dist.level<name = "node", size = 8, bandwidth = 1.0, latency = 1.0e-03>], device = #dist.device_spec<peak_flops = {f32 = 1.0e+12 : f64}, memory_bandwidth = 1.0e+12, memory_capacity = 1073741824, launch_overhead = 0.0>>} {
  // SLOW: remark: dist-pase: 5 ops on 8 devices, cost {{.*}} s, largest dependent set 1 ({{[0-9]+}} entries); replicated (no split rule): none
  // SLOW-COUNT-5: remark: dist-pase: loops split [8,

  // GenerateSeq and breadth-first order find the same minimum.
  // ORDER: remark: dist-pase: 5 ops on 8 devices, cost [[COST:[0-9.e+-]+]] s
  // ORDER: remark: dist-pase: 5 ops on 8 devices, cost [[COST]] s

  // On the slow network data parallelism is the optimum, so its baseline
  // costs the same and splits loop 0 (the batch, from dist.batch_dim) of
  // every op; one weird trick splits the matmuls' output features (loop 1)
  // and pays for moving data.
  // BASE: remark: dist-pase: 5 ops on 8 devices, cost [[OPT:[0-9.e+-]+]] s
  // BASE: remark: dist-pase: 5 ops on 8 devices, cost [[OPT]] s
  // BASE-COUNT-5: remark: dist-pase: loops split [8,
  // BASE: remark: dist-pase: 5 ops on 8 devices, cost {{.*}}e+0{{[0-9]}} s
  // BASE: loops split [1, 8]{{$}}
  // BASE: loops split [1, 8, 1]

  // Keeping only the cheapest configurations per op is said, with the count.
  // CUT: replicated (no split rule): none; configurations cut to the 2 cheapest on 5 ops

  // FAST: linalg.matmul {dist.sharding = #dist.sharding<mesh = <shape = [{{.*}}]>, split = {{.*}}>}
  // FAST: linalg.generic {{.*}}dist.sharding = #dist.sharding
  // FAST: linalg.matmul {dist.sharding = #dist.sharding
  func.func @mlp(%x: tensor<64x1024xf32>, %w1: tensor<1024x4096xf32>, %w2: tensor<4096x1024xf32>) -> tensor<64x1024xf32> {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<64x4096xf32>
    %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64x4096xf32>) -> tensor<64x4096xf32>
    %h = linalg.matmul ins(%x, %w1 : tensor<64x1024xf32>, tensor<1024x4096xf32>) outs(%i1 : tensor<64x4096xf32>) -> tensor<64x4096xf32>
    %e2 = tensor.empty() : tensor<64x4096xf32>
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
        ins(%h : tensor<64x4096xf32>) outs(%e2 : tensor<64x4096xf32>) {
    ^bb0(%a: f32, %b: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<64x4096xf32>
    %e3 = tensor.empty() : tensor<64x1024xf32>
    %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    %y = linalg.matmul ins(%r, %w2 : tensor<64x4096xf32>, tensor<4096x1024xf32>) outs(%i3 : tensor<64x1024xf32>) -> tensor<64x1024xf32>
    return %y : tensor<64x1024xf32>
  }
}
