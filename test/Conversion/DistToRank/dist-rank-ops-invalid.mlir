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
