// RUN: distir-opt --convert-dist-to-mpi -split-input-file -verify-diagnostics %s
// RUN: not distir-opt --convert-dist-to-mpi=mpi-implementation=LAM %s 2>&1 | FileCheck %s

// CHECK: for the --mpi-implementation option: Cannot find option named 'LAM'!

!t0 = tensor<4xf32, #dist.device<0>>
!t1 = tensor<4xf32, #dist.device<1>>
func.func @global(%x: !t0) -> !t1 {
  // expected-error @+1 {{is a global communication op; run dist-to-rank before convert-dist-to-mpi}}
  %y = dist.send %x : !t0 -> !t1
  return %y : !t1
}

// -----

func.func @stray(%x: tensor<4xf32>) {
  // expected-error @+1 {{is outside a rank function (one with 'dist_rank.rank')}}
  dist_rank.send %x to 1 tag 0 : tensor<4xf32>
  return
}
