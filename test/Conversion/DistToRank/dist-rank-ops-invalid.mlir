// RUN: distir-opt -split-input-file -verify-diagnostics %s

func.func @dup(%x: tensor<4xf32>) {
  // expected-error @+1 {{group lists rank 1 twice}}
  %a = dist_rank.all_reduce #dist.reduction<sum> %x group [1, 1] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @empty(%x: tensor<4xf32>) {
  // expected-error @+1 {{needs a non-empty group}}
  %a = dist_rank.all_reduce #dist.reduction<sum> %x group [] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @neg(%x: tensor<4xf32>) {
  // expected-error @+1 {{group has negative rank -1}}
  %a = dist_rank.all_gather %x group [-1, 0] dim 0 : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

func.func @root(%x: tensor<4xf32>) {
  // expected-error @+1 {{root 3 is not a member of the group}}
  %a = dist_rank.broadcast root 3 group [0, 1] value %x : tensor<4xf32> : tensor<4xf32>
  return
}

// -----

func.func @shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{result type 'tensor<4xf32>' does not match input type 'tensor<4xf32>' with dimension 0 multiplied by 2}}
  %a = dist_rank.all_gather %x group [0, 1] dim 0 : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @divisible(%x: tensor<5xf32>) {
  // expected-error @+1 {{dimension 0 of size 5 is not divisible by the group size 2}}
  %a = dist_rank.reduce_scatter #dist.reduction<sum> %x group [0, 1] dim 0 : tensor<5xf32> -> tensor<2xf32>
  return
}

// -----

func.func @avg(%x: tensor<4xi32>) {
  // expected-error @+1 {{avg needs a floating-point element type}}
  %a = dist_rank.all_reduce #dist.reduction<avg> %x group [0, 1] : tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

func.func @dim(%x: tensor<4xf32>) {
  // expected-error @+1 {{dim 1 is not a dimension of the input type 'tensor<4xf32>'}}
  %a = dist_rank.gather %x root 0 group [0, 1] dim 1 : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

func.func @a2a(%x: tensor<4x2xf32>) {
  // expected-error @+1 {{result type 'tensor<4x2xf32>' does not match the all-to-all of input type 'tensor<4x2xf32>' over 2 ranks}}
  %a = dist_rank.all_to_all %x group [0, 1] split_dim 0 concat_dim 1 : tensor<4x2xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @send(%x: tensor<4xf32>) {
  // expected-error @+1 {{destination rank -2 is negative}}
  dist_rank.send %x to -2 tag 0 : tensor<4xf32>
  return
}

// -----

func.func @recv() {
  // expected-error @+1 {{tag -1 is negative}}
  %a = dist_rank.recv from 0 tag -1 : tensor<4xf32>
  return
}

// -----

func.func @reduce(%x: tensor<4xf32>) {
  // expected-error @+1 {{result type 'tensor<8xf32>' does not match input type 'tensor<4xf32>'}}
  %a = dist_rank.reduce #dist.reduction<sum> %x root 0 group [0, 1] : tensor<4xf32> -> tensor<8xf32>
  return
}

// -----

func.func @scatter(%x: tensor<4xf32>) {
  // expected-error @+1 {{does not match input type 'tensor<4xf32>' with dimension 0 divided by 2}}
  %a = dist_rank.scatter root 0 group [0, 1] dim 0 value %x : tensor<4xf32> : tensor<4xf32>
  return
}

// -----

// Function attributes the lowerings rely on are checked where they are
// attached (a declaration or a non-integer rank used to crash
// --convert-dist-to-mpi/--convert-dist-to-nccl).
// expected-error @+1 {{attribute 'dist_rank.rank' needs a function with a body (a rank's program)}}
func.func private @decl() attributes {dist_rank.rank = 0 : i64}

// -----

// expected-error @+1 {{attribute 'dist_rank.rank' must be an i64 integer}}
func.func @text() attributes {dist_rank.rank = "zero"} {
  return
}

// -----

// expected-error @+1 {{attribute 'dist_rank.rank' must not be negative}}
func.func @negative() attributes {dist_rank.rank = -1 : i64} {
  return
}

// -----

// expected-error @+1 {{attribute 'dist_rank.rank' is 2 but 'dist_rank.num_ranks' is 2}}
func.func @beyond() attributes {dist_rank.rank = 2 : i64, dist_rank.num_ranks = 2 : i64} {
  return
}

// -----

// expected-error @+1 {{attribute 'dist_rank.num_ranks' must be at least 1}}
func.func @none() attributes {dist_rank.num_ranks = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{attribute 'dist_rank.arg_map' has 2 entries for 1 arguments}}
func.func @args(%x: f32) attributes {dist_rank.arg_map = array<i64: 0, 1>} {
  return
}

// -----

// expected-error @+1 {{attribute 'dist_rank.result_map' must be an array<i64> of indices (not negative)}}
func.func @results() -> f32 attributes {dist_rank.result_map = array<i64: -1>} {
  %c = arith.constant 0.0 : f32
  return %c : f32
}

// -----

// expected-error @+1 {{attribute 'dist_rank.program' must be a string}}
func.func @program() attributes {dist_rank.program = 3 : i64} {
  return
}

// -----

// expected-error @+1 {{attribute 'dist_rank.ranks' must be a list of symbol references on a function}}
func.func @ranks() attributes {dist_rank.ranks = [1, 2]} {
  return
}

// -----

// expected-error @+1 {{attribute 'dist_rank.ranked' is not a dist_rank attribute}}
func.func @unknown() attributes {dist_rank.ranked = 1 : i64} {
  return
}

// -----

func.func @on_op() {
  // expected-error @+1 {{attribute 'dist_rank.rank' belongs on a function}}
  %c = arith.constant {dist_rank.rank = 0 : i64} 0.0 : f32
  return
}
