// RUN: distir-opt %s -split-input-file -verify-diagnostics

// Every rule of #dist.mesh, #dist.sharding and the dist.sharding annotation.
// expected-error @+1 {{mesh axis 0 is used twice}}
func.func private @a(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2, 4]>, split = [[0], [0]]>})

// -----

// expected-error @+1 {{dimension 0 names mesh axis 1, but the mesh has rank 1}}
func.func private @b(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[1]]>})

// -----

// expected-error @+1 {{'partial' names mesh axis -1, but the mesh has rank 1}}
func.func private @b2(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [], partial = [-1]>})

// -----

// expected-error @+1 {{mesh axis 0 is used twice}}
func.func private @c(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], partial = [0]>})

// -----

// expected-error @+2 {{failed to parse Dist_ShardingAttr parameter 'mesh'}}
// expected-error @+1 {{mesh axis 1 must have a positive size, got 0}}
func.func private @d(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2, 0]>, split = []>})

// -----

// expected-error @+2 {{failed to parse Dist_ShardingAttr parameter 'mesh'}}
// expected-error @+1 {{mesh lists device 1 twice}}
func.func private @e(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2], devices = [1, 1]>, split = []>})

// -----

// expected-error @+2 {{failed to parse Dist_ShardingAttr parameter 'mesh'}}
// expected-error @+1 {{mesh of 2 positions lists 1 devices}}
func.func private @f(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2], devices = [1]>, split = []>})

// -----

// expected-error @+2 {{failed to parse Dist_ShardingAttr parameter 'mesh'}}
// expected-error @+1 {{mesh device ids must be non-negative, got -1}}
func.func private @v(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2], devices = [-1, 0]>, split = []>})

// -----

// expected-error @+2 {{failed to parse Dist_ShardingAttr parameter 'mesh'}}
// expected-error @+1 {{mesh has more than 16777216 positions}}
func.func private @t(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [65536, 65536]>, split = []>})

// -----

// expected-error @+2 {{failed to parse Dist_ShardingAttr parameter 'mesh'}}
// expected-error @+1 {{mesh needs at least one axis}}
func.func private @u(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = []>, split = []>})

// -----

// expected-error @+1 {{'offsets' needs 3 values (shards + 1 per split dimension), got 2}}
func.func private @g(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], offsets = [0, 4]>})

// -----

// expected-error @+1 {{'offsets' of dimension 0 must not decrease}}
func.func private @h(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], offsets = [0, 5, 4]>})

// -----

// expected-error @+1 {{'offsets' of dimension 0 must start at 0, got 1}}
func.func private @w(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], offsets = [1, 4, 8]>})

// -----

// expected-error @+2 {{failed to parse Dist_ShardingAttr parameter 'reduction'}}
// expected-error @+1 {{unknown reduction 'plus' (sum, prod, max, min or avg)}}
func.func private @r(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [], reduction = plus>})

// -----

// expected-error @+1 {{argument #0: 'offsets' of dimension 0 end at 9, but the dimension has 8 elements}}
func.func private @i(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], offsets = [0, 4, 9]>})

// -----

// (Missing trailing split entries are empty.)
// expected-error @+1 {{dimension 1 has 2 groups but is not split}}
func.func private @g4(tensor<8x8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], groups = [2, 2]>})

// -----

// expected-error @+1 {{'groups' must not end in 1 (the default)}}
func.func private @g5(tensor<8x8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0], []], groups = [2, 1]>})

// -----

// expected-error @+1 {{'groups' of dimension 0 must be at least 1, got 0}}
func.func private @g0(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], groups = [0]>})

// -----

// expected-error @+1 {{dimension 1 has 3 groups but is not split}}
func.func private @g1(tensor<8x12xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0], []], groups = [1, 3]>})

// -----

// expected-error @+1 {{'groups' and 'offsets' do not combine}}
func.func private @g2(tensor<12xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], offsets = [0, 6, 12], groups = [3]>})

// -----

// expected-error @+1 {{argument #0: dimension 0 of 9 elements does not divide into 3 groups of 2 shards}}
func.func private @g3(tensor<9xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], groups = [3]>})

// -----

// expected-error @+1 {{argument #0: sharding splits 2 dimensions of a rank-1 tensor}}
func.func private @j(tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>})

// -----

// expected-error @+1 {{argument #0: sharding splits dynamic dimension 0}}
func.func private @k(tensor<?xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]]>})

// -----

// expected-error @+1 {{'dist.sharding' of argument #0 must be a #dist.sharding, got 3 : i64}}
func.func private @l(tensor<8xf32> {dist.sharding = 3})

// -----

// expected-error @+1 {{argument #0: a sharding needs a ranked tensor or memref, got 'i32'}}
func.func private @s(i32 {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = []>})

// -----

// expected-error @+1 {{result #0: sharding splits 2 dimensions of a rank-1 tensor}}
func.func private @m() -> (tensor<8xf32> {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[], [0]]>})

// -----

// expected-error @+1 {{'dist.unsigned' of result #0 must be a unit attribute, got 1 : i64}}
func.func private @m2() -> (tensor<8xi32> {dist.unsigned = 1})

// -----

// expected-error @+1 {{'dist.name' of result #0 must be a string, got 1 : i64}}
func.func private @m3() -> (tensor<8xi32> {dist.name = 1})

// -----

// expected-error @+1 {{unknown dist result attribute 'dist.whatever'}}
func.func private @n() -> (tensor<8xf32> {dist.whatever})

// -----

func.func @o(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.sharding' gives 2 shardings for 1 results}}
  %0 = arith.addf %a, %a {dist.sharding = [#dist.sharding<mesh = <shape = [2]>, split = [[0]]>, #dist.sharding<mesh = <shape = [2]>, split = [[0]]>]} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @p(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.sharding' array elements must be #dist.sharding, got 1 : i64}}
  %0 = arith.addf %a, %a {dist.sharding = [1]} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @p2(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'dist.sharding' must be a #dist.sharding or an array of them, got "x"}}
  %0 = arith.addf %a, %a {dist.sharding = "x"} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @q(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{result #0: 'offsets' of dimension 0 end at 6, but the dimension has 8 elements}}
  %0 = arith.addf %a, %a {dist.sharding = #dist.sharding<mesh = <shape = [2]>, split = [[0]], offsets = [0, 3, 6]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
