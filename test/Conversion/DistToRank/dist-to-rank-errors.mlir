// RUN: distir-opt --dist-to-rank -split-input-file -verify-diagnostics %s

!t0 = tensor<4xf32, #dist.device<0>>
func.func private @callee(%x: !t0) -> !t0 {
  return %x : !t0
}
func.func @calls(%x: !t0) -> !t0 {
  // expected-error @+1 {{is a call; dist-to-rank needs calls inlined first (--inline)}}
  %y = func.call @callee(%x) : (!t0) -> !t0
  return %y : !t0
}

// -----

!t0 = tensor<4xf32, #dist.device<0>>
func.func private @external(%x: !t0) -> !t0
func.func @calls_external(%x: !t0) -> !t0 {
  // expected-error @+1 {{calls @external, which has no body; a distributed program can only call functions that can be inlined into it}}
  %y = func.call @external(%x) : (!t0) -> !t0
  return %y : !t0
}

// -----

!t0 = tensor<4xf32, #dist.device<0>>
// expected-error @+1 {{has 2 blocks; dist-to-rank expects a single-block function}}
func.func @blocks(%x: !t0) -> !t0 {
  cf.br ^bb1
^bb1:
  return %x : !t0
}

// -----

!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
func.func @scalar_moves(%x: !t0, %y: !t1) -> !t1 {
  %c0 = arith.constant 0 : index
  %s = tensor.extract %x[%c0] : !t0
  // expected-error @+1 {{involves devices 0, 1; only dist communication ops may move data between devices}}
  %z = tensor.insert %s into %y[%c0] : !t1
  return %z : !t1
}

// -----

!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
func.func @comm_in_region(%x: !t0, %p: i1) -> !t0 {
  %r = scf.if %p -> !t0 {
    // expected-error @+1 {{inside a region is not supported by dist-to-rank}}
    %y = dist.send %x : !t0 -> !t1
    %z = dist.send %y : !t1 -> !t0
    scf.yield %z : !t0
  } else {
    scf.yield %x : !t0
  }
  return %r : !t0
}

// -----

!t0 = tensor<4xf32, #dist.device<0>>
// expected-error @+1 {{'func.func' op cannot create rank function @f_rank0: the symbol already exists}}
func.func @f(%x: !t0) -> !t0 {
  return %x : !t0
}
func.func @f_rank0() {
  return
}

// -----

// One function per rank: a huge device id is refused, not built.
!big = tensor<4xf32, #dist.device<4611686018427387904>>
// expected-error @+1 {{uses device 4611686018427387904: dist-to-rank builds one function per rank, for 1 to 65536 ranks}}
func.func @huge(%x: !big) -> !big {
  return %x : !big
}

// -----

// A dist.reshard is planned into dist ops first.
!r0 = tensor<2x4xf32, #dist.device<0>>
!r1 = tensor<2x4xf32, #dist.device<1>>
func.func @reshard(%a: !r0, %b: !r1) -> tensor<4x4xf32, #dist.device<0>> {
  // expected-error @+1 {{is planned by --dist-lower-reshard; run it before dist-to-rank}}
  %r = dist.reshard %a, %b shape [4, 4] from <mesh = <shape = [2]>, split = [[0]]>
      to <mesh = <shape = [1]>, split = []> : !r0, !r1 -> tensor<4x4xf32, #dist.device<0>>
  return %r : tensor<4x4xf32, #dist.device<0>>
}

// -----

// Profiled work (distir-replay --emit-program) has no semantics to lower,
// also when it reads nothing and feeds a send.
!k0 = tensor<0xf32, #dist.device<0>>
!k1 = tensor<0xf32, #dist.device<1>>
func.func @kernel() -> !k1 {
  // expected-error @+1 {{is profiled work (a measured duration, no semantics): it can be simulated, not lowered}}
  %t = dist.kernel "aten::empty" {duration = 1.0e-06 : f64} : !k0
  %s = dist.send %t : !k0 -> !k1
  return %s : !k1
}
