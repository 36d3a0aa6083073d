// RUN: distir-opt %s --dist-import-shard -split-input-file -verify-diagnostics

// Every form the import cannot express is one error at the op.

shard.grid @g(shape = 4)
func.func @halo(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{halo sizes have no dist.sharding form}}
  %s = shard.sharding @g split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  %b = shard.shard %a to %s : tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

// expected-error @+1 {{a grid of dynamic size has no dist.mesh form}}
shard.grid @g(shape = 2x?)
func.func @dynamic_grid(%a: tensor<8xf32>) -> tensor<8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %b = shard.shard %a to %s : tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @dynamic_offsets(%a: tensor<8xf32>, %o: i64) -> tensor<8xf32> {
  // expected-error @+1 {{dynamic shard offsets have no dist.sharding form}}
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, %o, 8] : !shard.sharding
  %b = shard.shard %a to %s : tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @conflict(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s0 = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %s1 = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %b = shard.shard %a to %s0 : tensor<8x8xf32>
  // expected-error @+1 {{the value already has sharding}}
  %c = shard.shard %b to %s1 annotate_for_users : tensor<8x8xf32>
  return %c : tensor<8x8xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @from_argument(%a: tensor<8xf32>, %s: !shard.sharding) -> tensor<8xf32> {
  // expected-error @+1 {{the sharding must come from a shard.sharding op}}
  %b = shard.shard %a to %s : tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @offsets_past_the_end(%a: tensor<8xf32>) -> tensor<8xf32> {
  %s = shard.sharding @g split_axes = [[0]] sharded_dims_offsets = [0, 4, 9] : !shard.sharding
  // expected-error @+1 {{'offsets' of dimension 0 end at 9, but the dimension has 8 elements}}
  %b = shard.shard %a to %s : tensor<8xf32>
  return %b : tensor<8xf32>
}

// -----

shard.grid @g(shape = 2)
func.func @loop_argument(%a: tensor<8xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%t = %a) -> tensor<8xf32> {
    // expected-error @+1 {{only function arguments and op results can be annotated}}
    %b = shard.shard %t to %s : tensor<8xf32>
    scf.yield %b : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
