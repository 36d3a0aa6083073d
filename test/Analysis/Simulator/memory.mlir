// Liveness: arguments stay resident; a temporary lives from its definition
// to its last use; destination-passing ops write in place into an init that
// dies there; views alias their source.
// RUN: distir-sim %s --cluster distir-uniform --cost-model distir-compat | FileCheck %s

!t = tensor<1024xf32, #dist.device<0>>       // 4096 bytes
!r = tensor<2x512xf32, #dist.device<0>>

// resident: %x = 4096.
// %a = addf: +4096 (8192). %b = addf(%a,%a): +4096 (12288), %a dies (8192).
// %e = empty: +4096 (12288). %c = linalg.add outs(%e): in place (12288),
// %b dies (8192). %v = expand_shape %c: a view, no bytes.
// Peak 12288; the static plan needs three 4096-byte slots too.
// CHECK: latency:
// CHECK: 0 {{.*}} 12288 12288 4096
func.func @f(%x: !t) -> !r {
  %a = arith.addf %x, %x : !t
  %b = arith.addf %a, %a : !t
  %e = tensor.empty() : !t
  %c = linalg.add ins(%b, %x : !t, !t) outs(%e : !t) -> !t
  %v = tensor.expand_shape %c [[0, 1]] output_shape [2, 512] : !t into !r
  return %v : !r
}
