// RUN: distir-opt %s -split-input-file -verify-diagnostics

!t0 = tensor<2x4xf32, #dist.device<0>>
!t1 = tensor<2x4xf32, #dist.device<1>>
func.func @count(%a: !t0) -> !t0 {
  // expected-error @+1 {{has 1 operands, but the 'from' mesh has 2 positions}}
  %r = dist.reshard %a shape [4, 4] from <mesh = <shape = [2]>, split = [[0]]>
      to <mesh = <shape = [1]>, split = []> : !t0 -> tensor<4x4xf32, #dist.device<0>>
  return %a : !t0
}

// -----

!t0 = tensor<2x4xf32, #dist.device<0>>
!t1 = tensor<2x4xf32, #dist.device<1>>
func.func @device(%a: !t0, %b: !t0) -> !t0 {
  // expected-error @+1 {{operand #1 must be 'tensor<2x4xf32, #dist.device<1>>' (position 1 of the 'from' mesh), got 'tensor<2x4xf32, #dist.device<0>>'}}
  %r = dist.reshard %a, %b shape [4, 4] from <mesh = <shape = [2]>, split = [[0]]>
      to <mesh = <shape = [1]>, split = []> : !t0, !t0 -> tensor<4x4xf32, #dist.device<0>>
  return %a : !t0
}

// -----

!t0 = tensor<2x4xf32, #dist.device<0>>
!t1 = tensor<2x4xf32, #dist.device<1>>
func.func @tile_shape(%a: !t0, %b: !t1) -> !t0 {
  // expected-error @+1 {{result #0 must be 'tensor<4x4xf32, #dist.device<0>>' (position 0 of the 'to' mesh), got 'tensor<4x2xf32, #dist.device<0>>'}}
  %r = dist.reshard %a, %b shape [4, 4] from <mesh = <shape = [2]>, split = [[0]]>
      to <mesh = <shape = [1]>, split = []> : !t0, !t1 -> tensor<4x2xf32, #dist.device<0>>
  return %a : !t0
}

// -----

// A strided tile is several blocks: no resharding moves it.
!t0 = tensor<4x4xf32, #dist.device<0>>
func.func @strided(%a: !t0, %b: tensor<4x4xf32, #dist.device<1>>) -> !t0 {
  %p0 = tensor.extract_slice %a[0, 0] [4, 2] [1, 1] : !t0 to tensor<4x2xf32, #dist.device<0>>
  %p1 = tensor.extract_slice %b[0, 0] [4, 2] [1, 1] : tensor<4x4xf32, #dist.device<1>> to tensor<4x2xf32, #dist.device<1>>
  // expected-error @+1 {{'from' is strided (groups): a resharding moves contiguous tiles}}
  %r = dist.reshard %p0, %p1 shape [4, 4] from <mesh = <shape = [2]>, split = [[], [0]], groups = [1, 2]>
      to <mesh = <shape = [1]>, split = []> : tensor<4x2xf32, #dist.device<0>>, tensor<4x2xf32, #dist.device<1>> -> !t0
  return %a : !t0
}

// -----

!t0 = tensor<4x4xf32, #dist.device<0>>
func.func @partial(%a: !t0, %b: tensor<4x4xf32, #dist.device<1>>) -> !t0 {
  // expected-error @+1 {{'from' has partial axes: a pending reduction is not a resharding}}
  %r = dist.reshard %a, %b shape [4, 4] from <mesh = <shape = [2]>, split = [], partial = [0]>
      to <mesh = <shape = [1]>, split = []> : !t0, tensor<4x4xf32, #dist.device<1>> -> !t0
  return %a : !t0
}

// -----

!t0 = tensor<4x4xf32, #dist.device<0>>
func.func @fit(%a: !t0) -> !t0 {
  // expected-error @+1 {{'to': sharding splits 3 dimensions of a rank-2 tensor}}
  %r = dist.reshard %a shape [4, 4] from <mesh = <shape = [1]>, split = []>
      to <mesh = <shape = [1]>, split = [[], [], [0]]> : !t0 -> !t0
  return %a : !t0
}

// -----

!t0 = tensor<4x4xf32, #dist.device<0>>
func.func @negative(%a: !t0) -> !t0 {
  // expected-error @+1 {{needs a static, non-negative shape}}
  %r = dist.reshard %a shape [4, -1] from <mesh = <shape = [1]>, split = []>
      to <mesh = <shape = [1]>, split = []> : !t0 -> !t0
  return %a : !t0
}

// -----

func.func @empty() {
  // expected-error @+1 {{needs at least one operand and one result}}
  "dist.reshard"() <{shape = array<i64: 4>,
      source = #dist.sharding<mesh = <shape = [1]>, split = []>,
      destination = #dist.sharding<mesh = <shape = [1]>, split = []>}> : () -> ()
  return
}

// -----

!t0 = tensor<4x4xf32, #dist.device<0>>
func.func @element(%a: !t0) -> tensor<4x4xf16, #dist.device<0>> {
  // expected-error @+1 {{result #0 must be 'tensor<4x4xf32, #dist.device<0>>' (position 0 of the 'to' mesh), got 'tensor<4x4xf16, #dist.device<0>>'}}
  %r = dist.reshard %a shape [4, 4] from <mesh = <shape = [1]>, split = []>
      to <mesh = <shape = [1]>, split = []> : !t0 -> tensor<4x4xf16, #dist.device<0>>
  return %r : tensor<4x4xf16, #dist.device<0>>
}
