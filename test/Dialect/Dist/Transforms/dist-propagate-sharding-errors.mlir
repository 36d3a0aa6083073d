// RUN: distir-opt %s --dist-propagate-sharding --split-input-file --verify-diagnostics

// Partial values cannot seed upstream's propagation.
// expected-error @+1 {{dist-propagate-sharding: the sharding has partial axes; annotate the summed value}}
func.func @partial(%x: tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [], partial = [0]>}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// Strided (groups): only contiguous splits propagate.
func.func @strided() -> tensor<12xf32> {
  // expected-error @+1 {{dist-propagate-sharding: the sharding is strided (groups); only contiguous splits propagate}}
  %e = tensor.empty() {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], groups = [3]>} : tensor<12xf32>
  return %e : tensor<12xf32>
}

// -----

// Explicit offsets: only balanced splits propagate.
func.func @offsets() -> tensor<10xf32> {
  // expected-error @+1 {{dist-propagate-sharding: the sharding has explicit offsets; only balanced splits propagate}}
  %e = tensor.empty() {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], offsets = [0, 3, 10]>} : tensor<10xf32>
  return %e : tensor<10xf32>
}

// -----

// Upstream annotations are folded in first by dist-import-shard.
// expected-error @+1 {{dist-propagate-sharding: the module already has shard annotations; fold them in with dist-import-shard first}}
shard.grid @g(shape = 2)
func.func @upstream(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
