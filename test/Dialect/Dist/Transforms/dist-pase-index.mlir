// RUN: distir-opt %s --dist-pase='devices=8 report=true' --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: distir-opt %s --dist-place -o %t/index.mlir
// RUN: %python %distir_src_root/scripts/check-pase-equivalence.py --program %t/index.mlir --entry main --work %t --cluster dgx-h100 --devices 2,4 --random 2 | FileCheck %s --check-prefix=EQUAL

// linalg.index reads a loop's global position, which a tile would see as
// its own: only the loops it reads stay whole. A one-hot of class indices
// (the index of loop 1 compared with each row's class, as a max pool's
// backward compares window positions) splits its rows; a generic that
// reads the row index keeps its rows whole and splits its columns. Memory
// bandwidth dominates and arguments are read in place, so each op splits
// the loop it may.
#rows = affine_map<(i, j) -> (i)>
#id = affine_map<(i, j) -> (i, j)>
module attributes {dist.cluster = #dist.cluster<name = "slow", levels = [#dist.level<name = "node", size = 8, bandwidth = 1.0, latency = 1.0e-03>], device = #dist.device_spec<peak_flops = {f32 = 1.0e+12 : f64}, memory_bandwidth = 1.0e+06, memory_capacity = 1073741824, launch_overhead = 0.0>>} {
  func.func @main(%cls: tensor<64xi64> {dist.batch_dim = 0 : i64}, %x: tensor<64x16xf32> {dist.batch_dim = 0 : i64}) -> (tensor<64x16xf32>, tensor<64x16xf32>) {
    %e = tensor.empty() : tensor<64x16xf32>
    // CHECK: remark: dist-pase: 2 ops on 8 devices, cost {{.*}} s, largest dependent set 0 (1 entries); replicated (no split rule): none
    // CHECK: remark: dist-pase: loops split [8, 1]{{$}}
    %onehot = linalg.generic {indexing_maps = [#rows, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%cls, %x : tensor<64xi64>, tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) {
    ^bb0(%c: i64, %v: f32, %o: f32):
      %j = linalg.index 1 : index
      %ji = arith.index_cast %j : index to i64
      %hit = arith.cmpi eq, %c, %ji : i64
      %zero = arith.constant 0.0 : f32
      %r = arith.select %hit, %v, %zero : f32
      linalg.yield %r : f32
    } -> tensor<64x16xf32>
    // CHECK: remark: dist-pase: loops split [1, 8]{{$}}
    %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) {
    ^bb0(%v: f32, %o: f32):
      %i = linalg.index 0 : index
      %ii = arith.index_cast %i : index to i64
      %f = arith.sitofp %ii : i64 to f32
      %r = arith.mulf %v, %f : f32
      linalg.yield %r : f32
    } -> tensor<64x16xf32>
    return %onehot, %scaled : tensor<64x16xf32>, tensor<64x16xf32>
  }
}

// EQUAL: 6 strategies, 6 equal, 0 different
