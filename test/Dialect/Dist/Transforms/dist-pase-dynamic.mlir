// RUN: distir-opt %s --dist-pase='devices=2 cluster=dgx-h100' -verify-diagnostics

func.func @dynamic(%x: tensor<?x8xf32>, %e: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{per-op strategies need static tensor shapes, got 'tensor<?x8xf32>'}}
  %a = linalg.add ins(%x, %x : tensor<?x8xf32>, tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}
