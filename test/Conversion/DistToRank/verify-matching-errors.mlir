// RUN: distir-opt --dist-rank-verify-matching -split-input-file -verify-diagnostics %s

// Both ranks receive first: a deadlock.
func.func @p_rank0() attributes {dist_rank.rank = 0 : i64, dist_rank.num_ranks = 2 : i64, dist_rank.program = "p"} {
  // expected-error @+1 {{communication of program 'p' deadlocks: rank 0 waits forever to receive from rank 1 (tag 0, tensor<4xf32>)}}
  %a = dist_rank.recv from 1 tag 0 : tensor<4xf32>
  dist_rank.send %a to 1 tag 0 : tensor<4xf32>
  return
}
func.func @p_rank1() attributes {dist_rank.rank = 1 : i64, dist_rank.num_ranks = 2 : i64, dist_rank.program = "p"} {
  // expected-note @+1 {{rank 1 waits to receive from rank 0 (tag 0, tensor<4xf32>)}}
  %a = dist_rank.recv from 0 tag 0 : tensor<4xf32>
  dist_rank.send %a to 0 tag 0 : tensor<4xf32>
  return
}

// -----

// Collectives in a different order on the two members.
func.func @q_rank0(%x: tensor<4xf32>) attributes {dist_rank.rank = 0 : i64, dist_rank.program = "q"} {
  // expected-error @+1 {{on rank 0 does not match the collective of rank 1 over the same group}}
  %a = dist_rank.all_reduce #dist.reduction<sum> %x group [0, 1] : tensor<4xf32> -> tensor<4xf32>
  %b = dist_rank.all_gather %x group [0, 1] dim 0 : tensor<4xf32> -> tensor<8xf32>
  return
}
func.func @q_rank1(%x: tensor<4xf32>) attributes {dist_rank.rank = 1 : i64, dist_rank.program = "q"} {
  // expected-note @+1 {{rank 1 runs this}}
  %b = dist_rank.all_gather %x group [0, 1] dim 0 : tensor<4xf32> -> tensor<8xf32>
  %a = dist_rank.all_reduce #dist.reduction<sum> %x group [0, 1] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @r_rank0(%x: tensor<4xf32>) attributes {dist_rank.rank = 0 : i64, dist_rank.program = "r"} {
  // expected-error @+1 {{on rank 0 (send to rank 1 (tag 0, tensor<4xf32>)) is matched by a receive that disagrees on rank 1 (receive from rank 0 (tag 0, tensor<8xf32>))}}
  dist_rank.send %x to 1 tag 0 : tensor<4xf32>
  return
}
func.func @r_rank1() attributes {dist_rank.rank = 1 : i64, dist_rank.program = "r"} {
  // expected-note @+1 {{the receive}}
  %a = dist_rank.recv from 0 tag 0 : tensor<8xf32>
  return
}

// -----

// expected-error @+1 {{belongs to program 's' of 3 ranks, which has no function for rank 1}}
func.func @s_rank0() attributes {dist_rank.rank = 0 : i64, dist_rank.num_ranks = 3 : i64, dist_rank.program = "s"} {
  return
}
func.func @s_rank2() attributes {dist_rank.rank = 2 : i64, dist_rank.program = "s"} {
  return
}

// -----

// expected-note @+1 {{first function}}
func.func @t_rank0() attributes {dist_rank.rank = 0 : i64, dist_rank.program = "t"} {
  return
}
// expected-error @+1 {{is a second function for rank 0 of program 't'}}
func.func @t_rank0b() attributes {dist_rank.rank = 0 : i64, dist_rank.program = "t"} {
  return
}

// -----

func.func @u_rank0(%x: tensor<4xf32>) attributes {dist_rank.rank = 0 : i64, dist_rank.num_ranks = 2 : i64, dist_rank.program = "u"} {
  // expected-error @+1 {{names rank 5 but program has 2 ranks}}
  dist_rank.send %x to 5 tag 0 : tensor<4xf32>
  return
}
func.func @u_rank1() attributes {dist_rank.rank = 1 : i64, dist_rank.program = "u"} {
  return
}

// -----

func.func @v_rank0(%x: tensor<4xf32>) attributes {dist_rank.rank = 0 : i64, dist_rank.num_ranks = 1 : i64, dist_rank.program = "v"} {
  // expected-error @+1 {{communicates with its own rank 0}}
  dist_rank.send %x to 0 tag 0 : tensor<4xf32>
  return
}

// -----

func.func @w_rank0(%x: tensor<4xf32>, %p: i1) attributes {dist_rank.rank = 0 : i64, dist_rank.num_ranks = 2 : i64, dist_rank.program = "w"} {
  scf.if %p {
    // expected-error @+1 {{is inside a region; the matching check handles straight-line communication only}}
    dist_rank.send %x to 1 tag 0 : tensor<4xf32>
  }
  return
}
func.func @w_rank1() attributes {dist_rank.rank = 1 : i64, dist_rank.program = "w"} {
  return
}

// -----

func.func @x_rank0(%x: tensor<4xf32>) attributes {dist_rank.rank = 0 : i64, dist_rank.num_ranks = 3 : i64, dist_rank.program = "x"} {
  // expected-error @+1 {{runs on rank 0 which is not a member of its group}}
  %a = dist_rank.all_reduce #dist.reduction<sum> %x group [1, 2] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @y_rank0() attributes {dist_rank.rank = 0 : i64, dist_rank.num_ranks = 2 : i64, dist_rank.program = "y"} {
  // expected-error @+1 {{on its root rank needs an input (root 0, rank 0)}}
  %a = dist_rank.broadcast root 0 group [0, 1] : tensor<4xf32>
  return
}

// -----

func.func @z_rank1(%x: tensor<4xf32>) attributes {dist_rank.rank = 1 : i64, dist_rank.num_ranks = 2 : i64, dist_rank.program = "z"} {
  // expected-error @+1 {{has a result only on its root rank (root 0, rank 1)}}
  %a = dist_rank.reduce #dist.reduction<sum> %x root 0 group [0, 1] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @g_rank1(%x: tensor<4xf32>) attributes {dist_rank.rank = 1 : i64, dist_rank.num_ranks = 3 : i64, dist_rank.program = "g"} {
  // expected-error @+1 {{group names rank 7 but program has 3 ranks}}
  %a = dist_rank.all_reduce #dist.reduction<sum> %x group [1, 7] : tensor<4xf32> -> tensor<4xf32>
  return
}
